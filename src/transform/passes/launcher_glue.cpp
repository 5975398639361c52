// launcher-glue: torch glue in the functions that launch the kernel, rewritten to fewer passes
// over memory. The glue it knows is the absolute maximum a quantizing launcher takes before
// its kernel (the scale): `x.abs().max()` runs two torch kernels and writes a full copy of x
// (the absolute values) only to read it again; the infinity norm is one reduction that reads
// x once.
//
//   amax = x.abs().max()                        ->  amax = torch.linalg.vector_norm(x, float("inf"))
//   amax = x.abs().amax(dim=-1, keepdim=True)   ->  amax = torch.linalg.vector_norm(x, float("inf"), dim=-1, keepdim=True)
//   amax = torch.max(torch.abs(x))              ->  amax = torch.linalg.vector_norm(x, float("inf"))
//   amax = x.float().abs().max()                ->  amax = torch.linalg.vector_norm(x, float("inf"), dtype=torch.float32)
//
// Why it is exact: the infinity norm of x is the largest |x_i|, a maximum, which rounds
// nothing; it is NaN where x holds a NaN, as the maximum is (checked with torch 2.11 on the
// CPU; the GPU test checks CUDA's). Its dtype is x's (float32 where x was upcast first, which
// changes no |x_i|). A tensor of integers has no vector_norm: the variant fails at run time
// and the measurement refuses it. `x.abs().max(dim)` (values and indices) is left as written.
//
// Scope: the functions of this file that launch the kernel, and those that call them, up to
// their last launch (or call of a launching function): glue that feeds the launch. What comes
// after it reads the output (a test's comparison with a reference) and is left alone.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "transform/pass_context.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {

class LauncherGluePass : public Pass {
 public:
  LauncherGluePass() {
    info_.name = "launcher-glue";
    info_.summary = "Torch glue around the launch in fewer passes over memory: the absolute maximum "
                    "(x.abs().max(), amax) as one infinity-norm reduction";
    info_.preconditions = {
        "a function of this file that launches the kernel (or calls one that does) takes `X.abs().max()`, "
        "`X.abs().amax(dim, keepdim)`, `torch.max(torch.abs(X))` or `torch.amax(torch.abs(X), ...)`",
        "the module imports torch",
    };
    info_.launcher_only = true;
  }
  const PassInfo& info() const override { return info_; }

  PassOutcome run(const PassContext& ctx, const PassArgs&) const override {
    const ModuleIR& ir = *ctx.ir;
    std::string torch = torchAlias(ctx);
    if (torch.empty()) return refuse("the module does not import torch (import torch)");
    std::set<std::string> fns;
    for (const LaunchSite* s : ctx.sites) {
      if (!s->function.empty()) fns.insert(s->function);
    }
    if (fns.empty()) return refuse(fmt::format("no launch of {} inside a function of this file", ctx.kernel->name));
    // The functions that call a launching one (one level up: a launcher and its helper).
    std::set<std::string> callers;
    for (const auto& [name, f] : ir.functions) {
      if (!f.def || fns.count(name)) continue;
      walk(f.def->at("body"), [&](const Node& n) {
        if (isType(n, "Call") && fns.count(ir.calleeOf(n, name))) callers.insert(name);
        return true;
      });
    }
    fns.insert(callers.begin(), callers.end());
    SourceEditor ed(ctx.text().text());
    std::vector<int> lines;
    int left = 0, after = 0, unfed = 0;
    for (const auto& name : fns) {
      auto it = ir.functions.find(name);
      if (it == ir.functions.end() || !it->second.def) continue;
      std::vector<Range> feeding = feedingRanges(ctx, it->second, fns, callers);
      // Glue that feeds the launch comes before it: the last launch of the kernel (or call of a
      // launching function) in this function bounds what is rewritten; what follows it (a
      // test's comparison of the output with a reference) is left as written.
      size_t last = 0;
      walk(it->second.def->at("body"), [&](const Node& n) {
        bool launch = std::any_of(ctx.sites.begin(), ctx.sites.end(), [&](const LaunchSite* s) { return s->call == &n; });
        if (launch || (isType(n, "Call") && fns.count(ir.calleeOf(n, name)) && !callers.count(ir.calleeOf(n, name)))) {
          last = std::max(last, ctx.range(n).begin);
        }
        return true;
      });
      walk(it->second.def->at("body"), [&](const Node& n) {
        if (!isType(n, "Call")) return true;
        if (ctx.range(n).begin > last) {
          bool tuple_max = false;
          if (rewrite(ctx, torch, n, &tuple_max)) ++after;
          return true;
        }
        bool tuple_max = false;
        if (auto text = rewrite(ctx, torch, n, &tuple_max)) {
          Range r = ctx.range(n);
          if (std::none_of(feeding.begin(), feeding.end(),
                           [&](const Range& f) { return f.begin <= r.begin && r.end <= f.end; })) {
            ++unfed;  // a check of a result between two launches (a test's error), not the kernel's input
            return false;
          }
          ed.replace(ctx.range(n), *text);
          lines.push_back(nodePos(n)->line);
          return false;  // nothing inside is rewritten twice
        }
        if (tuple_max) ++left;
        return true;
      });
    }
    if (lines.empty()) {
      if (after > 0) {
        return refuse(fmt::format("the absolute maximum comes after the launch of {} (it reads the output, not the "
                                  "launch's input): left as written",
                                  ctx.kernel->name));
      }
      if (unfed > 0) {
        return refuse(fmt::format("the absolute maximum does not feed a launch of {} (its value reaches no argument "
                                  "of the launch): left as written",
                                  ctx.kernel->name));
      }
      if (left > 0) {
        return refuse("the absolute maximum is taken along a dimension with max(dim), which returns values and "
                      "indices: left as written");
      }
      return refuse(fmt::format("no absolute maximum (X.abs().max(), amax) in the functions that launch {}",
                                ctx.kernel->name));
    }
    PassOutcome out;
    out.source = ed.apply();
    out.applied = true;
    std::string at;
    for (int l : lines) at += (at.empty() ? "" : ", ") + std::to_string(l);
    out.notes.push_back(fmt::format("{} absolute maximum(s) as one infinity-norm reduction (line {})", lines.size(), at));
    return out;
  }

 private:
  // The source ranges in function `f` whose values reach an argument of a launch of the kernel
  // (or of a call of a launching function): those arguments, and the values of the assignments
  // of the names they read, followed back through the function's assignments.
  static std::vector<Range> feedingRanges(const PassContext& ctx, const FunctionInfo& f,
                                          const std::set<std::string>& fns, const std::set<std::string>& callers) {
    const ModuleIR& ir = *ctx.ir;
    std::vector<Range> out;
    std::set<std::string> names;
    auto take = [&](const Node& e) {
      out.push_back(ctx.range(e));
      forEachName(e, [&](const Node& x) { names.insert(x["id"].get<std::string>()); });
    };
    walk(f.def->at("body"), [&](const Node& n) {
      if (!isType(n, "Call")) return true;
      bool launch = std::any_of(ctx.sites.begin(), ctx.sites.end(), [&](const LaunchSite* s) { return s->call == &n; });
      std::string callee = ir.calleeOf(n, f.name);
      if (launch || (fns.count(callee) && !callers.count(callee))) {
        for (const auto& a : n["args"]) take(a);
        for (const auto& k : n["keywords"]) take(k["value"]);
      }
      return true;
    });
    // Back through the assignments, to a fixed point (each assignment's value is taken once).
    std::set<const Node*> done;
    for (bool grew = true; grew;) {
      grew = false;
      for (const auto& [name, list] : f.assignments) {
        if (!names.count(name)) continue;
        for (const Assignment& a : list) {
          if (a.value && done.insert(a.value).second) {
            take(*a.value);
            grew = true;
          }
        }
      }
    }
    return out;
  }

  // `X.abs()` or `torch.abs(X)`: X, else nullptr.
  static const Node* absOf(const PassContext& ctx, const Node& n) {
    if (!isType(n, "Call") || !n["keywords"].empty()) return nullptr;
    const Node& f = n["func"];
    if (isType(f, "Attribute") && f["attr"] == "abs" && n["args"].empty()) return &f["value"];
    if (n["args"].size() == 1 && ctx.ir->qualifiedName(f) == "torch.abs") return &n["args"][0];
    return nullptr;
  }

  // The infinity-norm text for an absolute maximum `call`, else nullopt (`tuple_max`: a
  // max(dim) of absolute values, left as written).
  static std::optional<std::string> rewrite(const PassContext& ctx, const std::string& torch, const Node& call,
                                            bool* tuple_max) {
    const Node& f = call["func"];
    const Node* abs_call = nullptr;
    std::string reduction;
    std::vector<const Node*> rest;  // the reduction's positional arguments after the values
    if (isType(f, "Attribute") && (f["attr"] == "max" || f["attr"] == "amax")) {
      abs_call = &f["value"];
      reduction = f["attr"].get<std::string>();
      for (const auto& a : call["args"]) rest.push_back(&a);
    }
    std::string q = ctx.ir->qualifiedName(f);
    if ((q == "torch.max" || q == "torch.amax") && !call["args"].empty()) {
      abs_call = &call["args"][0];
      reduction = q.substr(6);
      rest.clear();
      for (size_t i = 1; i < call["args"].size(); ++i) rest.push_back(&call["args"][i]);
    }
    if (!abs_call) return std::nullopt;
    const Node* x = absOf(ctx, *abs_call);
    if (!x) return std::nullopt;
    std::string dim, keepdim;
    if (reduction == "max") {
      // max() of everything; max(dim) returns values and indices.
      if (!rest.empty() || !call["keywords"].empty()) {
        *tuple_max = true;
        return std::nullopt;
      }
    } else {
      if (rest.size() > 2) return std::nullopt;
      if (!rest.empty()) dim = ctx.slice(*rest[0]);
      if (rest.size() > 1) keepdim = ctx.slice(*rest[1]);
      for (const auto& kw : call["keywords"]) {
        if (!kw.contains("arg") || !kw["arg"].is_string()) return std::nullopt;  // **kwargs
        std::string k = kw["arg"];
        if (k == "dim" && dim.empty()) dim = ctx.slice(kw["value"]);
        else if (k == "keepdim" && keepdim.empty()) keepdim = ctx.slice(kw["value"]);
        else return std::nullopt;  // out=, or a dimension given twice
      }
    }
    // `X.float()` first: the norm is taken in float32 without the copy.
    std::string dtype;
    if (isType(*x, "Call") && isType((*x)["func"], "Attribute") && (*x)["func"]["attr"] == "float" &&
        (*x)["args"].empty() && (*x)["keywords"].empty()) {
      dtype = torch + ".float32";
      x = &(*x)["func"]["value"];
    }
    std::string text = fmt::format("{}.linalg.vector_norm({}, float(\"inf\")", torch, ctx.slice(*x));
    if (!dim.empty()) text += ", dim=" + dim;
    if (!keepdim.empty()) text += ", keepdim=" + keepdim;
    if (!dtype.empty()) text += ", dtype=" + dtype;
    return text + ")";
  }

  PassInfo info_;
};

}  // namespace

std::unique_ptr<Pass> makeLauncherGluePass() { return std::make_unique<LauncherGluePass>(); }

}  // namespace tf

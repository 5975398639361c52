// fused-sum: a whole-tensor sum that the launcher takes of a tensor the kernel fills, taken by
// the kernel instead. Loss kernels write one term per element (or per row) into a buffer the
// launcher allocates, and the launcher reduces it with torch afterwards:
//
//   loss = torch.zeros(x.shape, dtype=torch.float32, device=x.device)
//   kernel[grid](x, ..., loss, loss.stride(0), ...)          # tl.store(loss_ptr + offs, terms, mask=m)
//   loss = torch.sum(loss)
//
// Zeroing the buffer, writing it and reading it back cost three passes over a tensor as large
// as the input (for Liger's JSD loss at 2048 x 128256 in float32, 1 GiB each) that nothing else
// reads. After the pass, each store adds the sum of what it would have written into a
// one-element accumulator (a @triton.jit helper: the values rounded to the buffer's dtype as
// the store would, broadcast to the store's addresses, masked, summed in float32 (float64 for
// a float64 buffer), one tl.atomic_add per store), and the launcher reads the sum from it:
//
//   loss = torch.empty(x.shape, dtype=torch.float32, device=x.device)      # shape and strides only
//   loss_total = torch.zeros(1, dtype=torch.promote_types(loss.dtype, torch.float32), device=loss.device)
//   kernel[grid](x, ..., loss, loss.stride(0), ..., loss_ptr_total=loss_total)
//   loss = loss_total[0].to(loss.dtype)
//
// What changes: the order of the additions (atomics land in any order, so the last bits of
// the sum may differ from run to run, as with any atomic reduction), never what is summed.
// Refused: a buffer read, returned or passed anywhere else than the launch, its metadata
// (shape, strides, dtype, device) and one whole-tensor sum or mean after the launch; a kernel
// that loads through the pointer, passes it to a function, or makes a block pointer of it; a
// launch in a loop (several launches would add into one sum what each overwrote);
// @triton.autotune kernels (the autotuner's timing runs would add into the sum again). A
// buffer of integers fails the helper's static assertion at compile time (the candidate is
// refused by the measurement). A kernel that writes an element twice would count it twice:
// verification against the reference decides.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>

#include "transform/pass_context.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {

using Parents = std::vector<const Node*>;

// Calls fn(node, parents) on every node below `n`, `parents` the chain from `n` down.
void walkWithParents(const Node& n, Parents& parents, const std::function<void(const Node&, const Parents&)>& fn) {
  if (n.is_object()) {
    if (!n.contains("_t")) return;
    fn(n, parents);
    parents.push_back(&n);
    for (const auto& [k, v] : n.items()) {
      if (k == "_t" || k == "_p") continue;
      if (v.is_object() || v.is_array()) walkWithParents(v, parents, fn);
    }
    parents.pop_back();
  } else if (n.is_array()) {
    for (const auto& c : n) walkWithParents(c, parents, fn);
  }
}

// Is `target` the node `root` or one below it?
bool contains(const Node& root, const Node* target) {
  bool found = false;
  walk(root, [&](const Node& n) {
    if (&n == target) found = true;
    return !found;
  });
  return found;
}

bool isStatement(const Node& n) {
  static const std::set<std::string> kStatements = {"Expr",  "Assign", "AugAssign", "AnnAssign", "If",
                                                    "For",   "While",  "Return",    "With",      "Assert",
                                                    "Pass",  "Break",  "Continue",  "Try",       "FunctionDef"};
  return n.is_object() && kStatements.count(nodeType(n)) > 0;
}

bool isLoop(const Node& n) {
  return isType(n, "For") || isType(n, "While") || isType(n, "ListComp") || isType(n, "GeneratorExp") ||
         isType(n, "SetComp") || isType(n, "DictComp");
}

// A tensor's metadata read through an attribute: it keeps no claim on the tensor's values.
bool isMetadataAttribute(const std::string& attr) {
  static const std::set<std::string> kMeta = {"stride", "shape",  "size",           "numel", "dtype",
                                              "device", "dim",    "ndim",           "ndimension",
                                              "is_contiguous",    "element_size",   "is_cuda"};
  return kMeta.count(attr) > 0;
}

// One launch's buffer: the tensor the launcher allocates, passes for the pointer and sums.
struct Buffer {
  const LaunchSite* site = nullptr;
  const Node* fn = nullptr;               // the launching function's def
  std::string tensor;                      // its local name
  const Node* alloc_stmt = nullptr;        // `tensor = torch.zeros(...)`
  const Node* alloc_func = nullptr;        // the callee of the allocation
  std::string alloc_new;                   // that callee's replacement ("" : already empty)
  std::vector<std::pair<const Node*, bool>> reductions;  // (call, is_mean) after the launch
};

class FusedSumPass : public Pass {
 public:
  FusedSumPass() {
    info_.name = "fused-sum";
    info_.summary = "A whole-tensor sum the launcher takes of a buffer the kernel fills (torch.sum(loss)) taken "
                    "by the kernel: each store adds its block's sum atomically into one value, and the buffer "
                    "is neither zeroed, written nor read back";
    info_.preconditions = {
        "every launch passes, for one pointer parameter, a tensor that its function allocates "
        "(torch.zeros/empty[_like], new_zeros/new_empty) and afterwards only sums whole "
        "(torch.sum(t), t.sum(), torch.mean(t), t.mean()), besides reading its shape, strides, dtype or device",
        "no launch is inside a loop; the kernel is not @triton.autotune'd and is defined in this file",
        "the kernel uses that pointer (and what it derives from it) only as the address of tl.store calls, "
        "each a statement on its own lines",
    };
  }
  const PassInfo& info() const override { return info_; }

  PassOutcome run(const PassContext& ctx, const PassArgs&) const override {
    const ModuleIR& ir = *ctx.ir;
    const Kernel& k = *ctx.kernel;
    if (k.home) return refuse(fmt::format("{} is defined in another module (its file is not rewritten)", k.name));
    std::string torch;
    for (const auto& [local, full] : ir.aliases) {
      if (full == "torch") torch = local;
    }
    if (torch.empty()) return refuse("the module does not import torch (import torch)");
    if (ctx.sites.empty()) return refuse(fmt::format("no launch of {} inside a function of this file", k.name));

    // The launches: which pointer parameter each passes a summed buffer for.
    std::string param, why;
    std::vector<Buffer> buffers;
    for (const LaunchSite* site : ctx.sites) {
      if (site->function.empty()) return refuse(fmt::format("{} is launched at module level", k.name));
      if (site->has_starred) return refuse(fmt::format("a launch of {} passes *args / **kwargs", k.name));
      auto b = summedBuffer(ctx, *site, torch, &param, &why);
      if (!b) return refuse(why);
      buffers.push_back(*b);
    }
    if (k.autotune) {
      return refuse(fmt::format("{} is autotuned: the autotuner's timing runs would add into the sum again", k.name));
    }

    // The kernel: the pointer only addresses stores.
    std::vector<const Node*> stores;
    if (!storesOnly(ctx, param, &stores, &why)) return refuse(why);
    if (stores.empty()) return refuse(fmt::format("{} stores nothing through '{}'", k.name, param));

    SourceEditor ed(ctx.text().text());
    const std::string tl = ctx.tl();
    const std::string total = ctx.freshName(param + "_total");
    const std::string helper = freshModuleName(ctx, "_fused_sum_into");
    // The helper, above the kernel's decorators.
    std::vector<std::string> h = {
        fmt::format("@{}.jit", ctx.triton()),
        fmt::format("def {}(total, ptr, value, mask):", helper),
        "    # fused-sum: what `tl.store(ptr, value, mask=mask)` would write, summed into total[0]",
        fmt::format("    {}.static_assert(ptr.dtype.element_ty.is_floating(), \"fused-sum: the summed buffer holds "
                    "floats\")",
                    tl),
        fmt::format("    v = {}.cast(value, ptr.dtype.element_ty)", tl),
        "    if ptr.type.is_block():",
        fmt::format("        v = {}.broadcast_to(v, ptr.shape)", tl),
        "        if mask is not None:",
        fmt::format("            v = {}.where(mask, v, 0)", tl),
        fmt::format("        {}.atomic_add(total, {}.sum(v.to(total.dtype.element_ty)), sem=\"relaxed\")", tl, tl),
        "    else:",
        fmt::format("        {}.atomic_add(total, v.to(total.dtype.element_ty), mask=mask, sem=\"relaxed\")", tl),
    };
    int top = definitionTopLine(*k.def);
    ed.insert(ctx.text().offset(top, 0), joinLines(h, "") + "\n\n");

    // Each store becomes a call of the helper.
    for (const Node* call : stores) {
      const Node* ptr = call->at("args").empty() ? keywordArg(*call, "pointer") : &call->at("args")[0];
      const Node* value = call->at("args").size() > 1 ? &call->at("args")[1] : keywordArg(*call, "value");
      const Node* mask = call->at("args").size() > 2 ? &call->at("args")[2] : keywordArg(*call, "mask");
      if (!ptr || !value) return refuse(fmt::format("line {}: a tl.store without its pointer and value", nodePos(*call)->line));
      std::string text = fmt::format("{}({}, {}, {}, {})", helper, total, ctx.slice(*ptr), ctx.slice(*value),
                                     mask ? ctx.slice(*mask) : "None");
      ed.replace(ctx.range(*call), text);
    }
    addKernelParam(ctx, ed, total, "");

    // The launchers.
    std::set<const Node*> done_allocs;
    std::vector<int> lines;
    for (const Buffer& b : buffers) {
      std::string acc = freshLocal(ctx, *b.fn, b.tensor + "_total");
      if (done_allocs.insert(b.alloc_stmt).second) {
        if (!b.alloc_new.empty()) ed.replace(ctx.range(*b.alloc_func), b.alloc_new);
        int last = nodePos(*b.alloc_stmt)->end_line;
        std::string indent = ctx.text().indentOf(nodePos(*b.alloc_stmt)->line);
        std::string line = fmt::format("{}{} = {}.zeros(1, dtype={}.promote_types({}.dtype, {}.float32), device={}.device)",
                                       indent, acc, torch, torch, b.tensor, torch, b.tensor);
        ed.insert(ctx.lineRange(last, last).end, line + "\n");
      }
      addLaunchKeyword(ctx, ed, *b.site, total, acc);
      for (const auto& [call, mean] : b.reductions) {
        std::string value = mean ? fmt::format("({}[0] / {}.numel())", acc, b.tensor) : acc + "[0]";
        ed.replace(ctx.range(*call), fmt::format("{}.to({}.dtype)", value, b.tensor));
        lines.push_back(nodePos(*call)->line);
      }
    }
    PassOutcome out = appliedEdits(ed, k.name);
    if (!out.applied) return out;
    out.param_types[total] = "*fp32";
    std::string at;
    for (int l : lines) at += (at.empty() ? "" : ", ") + std::to_string(l);
    out.notes.push_back(fmt::format("the sum of what {} stores through '{}' is taken by the kernel (line {} read it from "
                                    "the accumulator); atomics make its last bits depend on the order the programs add",
                                    k.name, param, at));
    return out;
  }

 private:
  // The buffer a launch passes and sums, and the pointer parameter it is passed for (the same
  // for every launch); nullopt and `why` otherwise.
  static std::optional<Buffer> summedBuffer(const PassContext& ctx, const LaunchSite& site, const std::string& torch,
                                            std::string* param, std::string* why) {
    const ModuleIR& ir = *ctx.ir;
    auto fit = ir.functions.find(site.function);
    if (fit == ir.functions.end() || !fit->second.def) {
      *why = fmt::format("the function that launches {} is not found", ctx.kernel->name);
      return std::nullopt;
    }
    const FunctionInfo& f = fit->second;
    // The summed tensors the launch passes, as plain names, with their uses in the function.
    std::optional<Buffer> found;
    std::string last_reason;
    for (const LaunchArg& a : site.args) {
      const Param* p = ctx.kernel->param(a.param);
      if (!p || p->is_constexpr || !isType(*a.expr, "Name")) continue;
      if (!param->empty() && a.param != *param) continue;
      std::string name = (*a.expr)["id"];
      std::string reason;
      auto b = bufferUses(ctx, f, site, name, *a.expr, torch, &reason);
      if (!b) {
        if (!reason.empty()) last_reason = reason;
        continue;
      }
      if (found) {
        *why = fmt::format("two tensors that the launch of {} passes are summed after it ({} and {})", ctx.kernel->name,
                           found->tensor, name);
        return std::nullopt;
      }
      found = b;
      *param = a.param;
    }
    if (!found) {
      *why = !last_reason.empty() ? last_reason
                                  : fmt::format("no tensor that {} launches {} with is summed whole after the launch "
                                                "(torch.sum(t), t.sum(), t.mean())",
                                                site.function, ctx.kernel->name);
      return std::nullopt;
    }
    found->site = &site;
    found->fn = f.def;
    return found;
  }

  // `name`'s uses in `f`: one allocation, the launch, metadata, whole sums after the launch.
  // nullopt without a reason when it is not summed at all.
  static std::optional<Buffer> bufferUses(const PassContext& ctx, const FunctionInfo& f, const LaunchSite& site,
                                          const std::string& name, const Node& launch_arg, const std::string& torch,
                                          std::string* why) {
    Buffer b;
    b.tensor = name;
    const ModuleIR& ir = *ctx.ir;
    const size_t launch_at = ctx.range(*site.call).begin;
    std::string other;  // the first use that is none of those
    bool launch_in_loop = false;
    // `t = torch.sum(t)` at the function's top level (or in a `with`) rebinds the name to the
    // sum: what follows it reads the sum, not the buffer.
    size_t rebound_at = std::string::npos;
    const Node* rebinding = nullptr;
    Parents parents;
    walkWithParents(f.def->at("body"), parents, [&](const Node& n, const Parents& up) {
      if (rebinding || !isType(n, "Assign") || assignedName(n) != name || ctx.range(n).begin < launch_at) return;
      bool nested = std::any_of(up.begin(), up.end(), [](const Node* p) {
        return isStatement(*p) && !isType(*p, "With") && !isType(*p, "FunctionDef");
      });
      if (!nested && isReduction(ir, n["value"], name)) {
        rebinding = &n;
        rebound_at = ctx.range(n).end;
      }
    });
    walkWithParents(f.def->at("body"), parents, [&](const Node& n, const Parents& up) {
      if (&n == site.call) {
        launch_in_loop = std::any_of(up.begin(), up.end(), [](const Node* p) { return isLoop(*p); });
      }
      if (!isType(n, "Name") || n["id"] != name || !other.empty()) return;
      if (&n == &launch_arg) return;
      if (ctx.range(n).begin >= rebound_at) return;  // the sum, under the buffer's name
      int line = nodePos(n)->line;
      if (n.value("ctx", "") == "Store") return;  // the assignments are checked below
      const Node* parent = up.empty() ? nullptr : up.back();
      const Node* grand = up.size() > 1 ? up[up.size() - 2] : nullptr;
      // t.stride(0), t.shape, t.dtype ...
      if (parent && isType(*parent, "Attribute") && isMetadataAttribute((*parent)["attr"])) return;
      // t.sum() / t.mean(), torch.sum(t) / torch.mean(t): whole, no other argument.
      const Node* reduction = nullptr;
      bool mean = false;
      if (parent && isType(*parent, "Attribute") && grand && isType(*grand, "Call") && &(*grand)["func"] == parent &&
          ((*parent)["attr"] == "sum" || (*parent)["attr"] == "mean")) {
        reduction = grand;
        mean = (*parent)["attr"] == "mean";
        if (!(*grand)["args"].empty() || !(*grand)["keywords"].empty()) {
          other = fmt::format("line {}: {}.{}(...) sums along a dimension or with options", line, name,
                              (*parent)["attr"].get<std::string>());
          return;
        }
      } else if (parent && isType(*parent, "Call") && (*parent)["args"].size() == 1 && &(*parent)["args"][0] == &n) {
        std::string q = ir.qualifiedName((*parent)["func"]);
        if (q == "torch.sum" || q == "torch.mean") {
          reduction = parent;
          mean = q == "torch.mean";
          if (!(*parent)["keywords"].empty()) {
            other = fmt::format("line {}: {}({}, ...) sums with options", line, q, name);
            return;
          }
        }
      }
      if (reduction) {
        if (ctx.range(*reduction).begin < launch_at) {
          other = fmt::format("line {}: {} is summed before the launch", line, name);
          return;
        }
        b.reductions.push_back({reduction, mean});
        return;
      }
      other = fmt::format("line {}: {} is used otherwise than summed whole after the launch", line, name);
    });
    if (b.reductions.empty()) {
      // Not a summed buffer (no reason), unless it is summed along a dimension.
      if (other.find(" sums ") != std::string::npos) *why = other;
      return std::nullopt;
    }
    if (!other.empty()) {
      *why = other;
      return std::nullopt;
    }
    if (launch_in_loop) {
      *why = fmt::format("the launch of {} that fills {} is inside a loop", ctx.kernel->name, name);
      return std::nullopt;
    }
    auto as = f.assignments.find(name);
    if (as != f.assignments.end() && rebinding) {
      std::vector<Assignment> before;
      for (const Assignment& a : as->second) {
        if (ctx.range(*a.stmt).begin < rebound_at) before.push_back(a);
      }
      if (before.size() == 2 && before[1].stmt == rebinding) before.pop_back();
      if (before.size() == 1) {
        // The allocation, then the rebinding (and whatever the sum is bound to later).
        const Node* stmt = before[0].stmt;
        as = f.assignments.end();
        return allocation(ctx, b, *stmt, launch_at, torch, why);
      }
    }
    if (as == f.assignments.end() || as->second.size() != 1 || as->second[0].augmented ||
        !isType(*as->second[0].stmt, "Assign") || as->second[0].stmt->at("targets").size() != 1 ||
        !isType(as->second[0].stmt->at("targets")[0], "Name")) {
      *why = fmt::format("{} is not allocated by one assignment `{} = torch.zeros(...)` in {}", name, name, f.name);
      return std::nullopt;
    }
    return allocation(ctx, b, *as->second[0].stmt, launch_at, torch, why);
  }

  // `t = torch.sum(t)`, `t = t.sum()`, and the means: a whole reduction of `name`.
  static bool isReduction(const ModuleIR& ir, const Node& v, const std::string& name) {
    if (!isType(v, "Call") || !v["keywords"].empty()) return false;
    const Node& f = v["func"];
    if (isType(f, "Attribute") && (f["attr"] == "sum" || f["attr"] == "mean") && v["args"].empty()) {
      return isType(f["value"], "Name") && f["value"]["id"] == name;
    }
    std::string q = ir.qualifiedName(f);
    return (q == "torch.sum" || q == "torch.mean") && v["args"].size() == 1 && isType(v["args"][0], "Name") &&
           v["args"][0]["id"] == name;
  }

  // The allocation statement `t = torch.zeros(...)` before the launch, into `b`.
  static std::optional<Buffer> allocation(const PassContext& ctx, Buffer b, const Node& stmt, size_t launch_at,
                                          const std::string& torch, std::string* why) {
    const ModuleIR& ir = *ctx.ir;
    const std::string& name = b.tensor;
    if (!isType(stmt, "Assign") || stmt["targets"].size() != 1 || !isType(stmt["targets"][0], "Name")) {
      *why = fmt::format("{} is not allocated by one assignment `{} = torch.zeros(...)`", name, name);
      return std::nullopt;
    }
    if (ctx.range(stmt).begin > launch_at) {
      *why = fmt::format("{} is assigned after the launch", name);
      return std::nullopt;
    }
    const Node& value = stmt["value"];
    if (!isType(value, "Call")) {
      *why = fmt::format("{} is not allocated by the launcher (torch.zeros / torch.empty ...)", name);
      return std::nullopt;
    }
    const Node& func = value["func"];
    std::string q = ir.qualifiedName(func);
    b.alloc_stmt = &stmt;
    b.alloc_func = &func;
    if (q == "torch.zeros") b.alloc_new = torch + ".empty";
    else if (q == "torch.zeros_like") b.alloc_new = torch + ".empty_like";
    else if (q == "torch.empty" || q == "torch.empty_like") b.alloc_new = "";
    else if (isType(func, "Attribute") && func["attr"] == "new_zeros") b.alloc_new = ctx.slice(func["value"]) + ".new_empty";
    else if (isType(func, "Attribute") && func["attr"] == "new_empty") b.alloc_new = "";
    else {
      *why = fmt::format("{} is not allocated by torch.zeros / torch.empty / zeros_like / new_zeros", name);
      return std::nullopt;
    }
    return b;
  }

  // Does the kernel use `param` (and the names derived from it) only as the address of
  // tl.store statements? Those stores, in source order.
  static bool storesOnly(const PassContext& ctx, const std::string& param, std::vector<const Node*>* stores,
                         std::string* why) {
    std::set<std::string> derived = ctx.derivedFrom(param);
    derived.insert(param);
    std::set<const Node*> seen;
    std::string bad;
    Parents parents;
    walkWithParents(ctx.body(), parents, [&](const Node& n, const Parents& up) {
      if (!bad.empty() || !isType(n, "Name") || !derived.count(n["id"].get<std::string>())) return;
      int line = nodePos(n)->line;
      if (n.value("ctx", "") == "Store") {
        // Bound from the pointer: checked at its uses (`p = base + offs`, `p += step`).
        return;
      }
      // The innermost call and statement around the name.
      const Node* call = nullptr;
      size_t call_at = 0;
      for (size_t i = up.size(); i-- > 0;) {
        if (isType(*up[i], "Call")) {
          call = up[i];
          call_at = i;
          break;
        }
        if (isStatement(*up[i])) break;
      }
      if (call) {
        const Node* ptr = (*call)["args"].empty() ? keywordArg(*call, "pointer") : &(*call)["args"][0];
        bool in_ptr = ptr && contains(*ptr, &n);
        if (ctx.isTlCall(*call, "store") && in_ptr) {
          const Node* stmt = call_at > 0 ? up[call_at - 1] : nullptr;
          if (!stmt || !isType(*stmt, "Expr") || &(*stmt)["value"] != call) {
            bad = fmt::format("line {}: the tl.store through '{}' is not a statement of its own", line, param);
            return;
          }
          if (seen.insert(call).second) stores->push_back(call);
          return;
        }
        bad = fmt::format("line {}: '{}' is passed to {} (only tl.store's address may use it)", line, n["id"].get<std::string>(),
                          ctx.slice((*call)["func"]));
        return;
      }
      // Pointer arithmetic bound to a derived name: `p = param + offs`, `param += step`.
      for (size_t i = up.size(); i-- > 0;) {
        if (!isStatement(*up[i])) continue;
        std::string target = assignedName(*up[i]);
        if (!target.empty() && derived.count(target)) return;
        break;
      }
      bad = fmt::format("line {}: '{}' is read otherwise than as a tl.store's address", line, n["id"].get<std::string>());
    });
    if (!bad.empty()) {
      *why = bad;
      return false;
    }
    std::sort(stores->begin(), stores->end(),
              [&](const Node* a, const Node* b) { return ctx.range(*a).begin < ctx.range(*b).begin; });
    return true;
  }

  // `base`, or `base_2`, ...: a name the module's text does not hold.
  static std::string freshModuleName(const PassContext& ctx, const std::string& base) {
    const std::string& text = ctx.text().text();
    for (int i = 1;; ++i) {
      std::string name = i == 1 ? base : fmt::format("{}_{}", base, i);
      if (text.find(name) == std::string::npos) return name;
    }
  }

  // `base`, or `base_2`, ...: a name the function does not mention.
  static std::string freshLocal(const PassContext& ctx, const Node& fn, const std::string& base) {
    std::set<std::string> names;
    walk(fn, [&](const Node& n) {
      if (isType(n, "Name")) names.insert(n["id"].get<std::string>());
      if (isType(n, "arg")) names.insert(n["arg"].get<std::string>());
      return true;
    });
    (void)ctx;
    for (int i = 1;; ++i) {
      std::string name = i == 1 ? base : fmt::format("{}_{}", base, i);
      if (!names.count(name)) return name;
    }
  }

  PassInfo info_;
};

}  // namespace

std::unique_ptr<Pass> makeFusedSumPass() { return std::make_unique<FusedSumPass>(); }

}  // namespace tf

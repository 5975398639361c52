#include "kernel/tunables.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <tuple>

namespace tf {

const char* toString(TunableOrigin o) {
  switch (o) {
    case TunableOrigin::kLaunchLiteral: return "launch-literal";
    case TunableOrigin::kLocalLiteral: return "launcher-variable";
    case TunableOrigin::kLauncherScale: return "launcher-scale";
    case TunableOrigin::kLocalDerived: return "launcher-derived";
    case TunableOrigin::kLaunchOverride: return "launch-override";
    case TunableOrigin::kModuleConstant: return "module-constant";
    case TunableOrigin::kKernelDefault: return "kernel-default";
    case TunableOrigin::kAbsentOption: return "triton-default";
    case TunableOrigin::kAutotune: return "autotune";
    case TunableOrigin::kHeuristic: return "heuristics";
  }
  return "?";
}

const char* toString(TunableRole r) {
  switch (r) {
    case TunableRole::kTileM: return "tile-m";
    case TunableRole::kTileN: return "tile-n";
    case TunableRole::kTileK: return "tile-k";
    case TunableRole::kBlock: return "block";
    case TunableRole::kGroup: return "group";
    case TunableRole::kNumWarps: return "num_warps";
    case TunableRole::kNumStages: return "num_stages";
    case TunableRole::kOther: return "other";
  }
  return "?";
}

const Tunable* TunableSet::find(std::string_view id) const {
  for (const auto& t : items) if (t.id == id) return &t;
  return nullptr;
}

std::vector<const Tunable*> TunableSet::active() const {
  std::vector<const Tunable*> out;
  for (const auto& t : items) if (t.tunable) out.push_back(&t);
  return out;
}

namespace {

constexpr int64_t kTritonDefaultWarps = 4;
constexpr int64_t kTritonDefaultStages = 3;

class Discoverer {
 public:
  Discoverer(const ModuleIR& ir, const std::string& launcher, const std::vector<std::string>& only, bool backward)
      : ir_(ir), src_(ir.source->source), launcher_(launcher), only_(only.begin(), only.end()), backward_(backward) {}

  TunableSet run() {
    std::set<std::string> reach = reachableFunctions();
    std::map<std::string, int> sites_per_kernel;
    for (size_t i = 0; i < ir_.launches.size(); ++i) {
      const LaunchSite& site = ir_.launches[i];
      if (!reach.count(site.function)) continue;
      if (!only_.empty() && !only_.count(site.kernel)) continue;
      set_.sites.push_back(static_cast<int>(i));
      const Kernel* k = ir_.kernel(site.kernel);
      if (!set_.facts.count(k->name)) set_.facts[k->name] = analyzeKernel(ir_, *k);
      int nth = ++sites_per_kernel[k->name];
      std::string suffix = nth > 1 ? fmt::format("#{}", nth) : "";
      discoverSite(static_cast<int>(i), *k, suffix);
    }
    if (set_.sites.empty()) {
      std::string unfollowed = unfollowedConstruct(reach);
      set_.notes.push_back(fmt::format("no kernel launch found in '{}' or the functions it calls{}", launcher_,
                                       unfollowed.empty() ? "" : ": " + unfollowed));
    }
    markAmbiguousMirrors();
    tieSharedValues();
    for (int i : set_.sites) discoverSmScale(i);
    return std::move(set_);
  }

 private:
  // The launcher (a function, an alias, Class.apply) and every function of this module it
  // calls, directly or through helpers, aliases, autograd Functions and methods.
  std::set<std::string> reachableFunctions() {
    std::string why;
    std::vector<std::string> entries = ir_.entryFunctions(launcher_, &why);
    if (entries.empty()) set_.notes.push_back(why);
    std::set<std::string> forward = closure(entries);
    if (!backward_) return forward;
    // Backward: from the backward methods of the autograd Functions the forward call reaches.
    std::vector<std::string> backs;
    const std::string suffix = ".forward";
    for (const auto& f : forward) {
      if (f.size() <= suffix.size() || f.compare(f.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
      std::string back = f.substr(0, f.size() - suffix.size()) + ".backward";
      if (ir_.functions.count(back)) backs.push_back(back);
    }
    if (backs.empty() && !entries.empty()) {
      set_.notes.push_back(fmt::format("direction = \"backward\", but '{}' reaches no torch.autograd.Function with a "
                                       "backward method in this file",
                                       launcher_));
    }
    return closure(backs);
  }

  // The functions `entries` call, directly or through helpers, aliases, autograd Functions
  // and methods, with the entries themselves.
  std::set<std::string> closure(std::vector<std::string> todo) {
    std::set<std::string> seen;
    while (!todo.empty()) {
      std::string f = todo.back();
      todo.pop_back();
      if (!seen.insert(f).second) continue;
      auto it = ir_.functions.find(f);
      if (it == ir_.functions.end()) continue;
      walk(it->second.def->at("body"), [&](const Node& n) {
        if (isType(n, "Call")) {
          std::string callee = ir_.calleeOf(n, f);
          if (!callee.empty()) todo.push_back(callee);
        }
        return true;
      });
    }
    return seen;
  }

  // With no launch found: the first construct of the reachable functions that may launch a
  // kernel tritonforge could not follow, named with its line (a subscripted call whose
  // callee is no kernel it can tell; else a call through a local name it cannot resolve).
  std::string unfollowedConstruct(const std::set<std::string>& reach) const {
    auto lineOf = [](const Node& n) { auto p = nodePos(n); return p ? p->line : 0; };
    auto clip = [](std::string text) {
      for (char& c : text) if (c == '\n' || c == '\r') c = ' ';
      return text.size() > 80 ? text.substr(0, 77) + "..." : text;
    };
    // How `name` is bound in `fn`: " (bound to `v` at line L)", or "" when it is not.
    auto binding = [&](const FunctionInfo& fn, const std::string& name) -> std::string {
      auto a = fn.assignments.find(name);
      if (a != fn.assignments.end() && !a->second.empty()) {
        std::string out;
        for (const auto& b : a->second) {
          out += out.empty() ? ", bound to " : " and to ";
          out += b.value ? fmt::format("`{}` (line {})", clip(src_.slice(*b.value)), lineOf(*b.stmt))
                         : fmt::format("a value unpacked or iterated at line {}", lineOf(*b.stmt));
        }
        return out;
      }
      if (std::find(fn.params.begin(), fn.params.end(), name) != fn.params.end()) {
        return fmt::format(", a parameter of '{}' that no default and no caller of this file binds to a kernel",
                           fn.name);
      }
      return "";
    };
    std::string launch, call;
    for (const auto& f : reach) {
      const FunctionInfo* fn = function(f);
      if (!fn) continue;
      walk(fn->def->at("body"), [&](const Node& n) {
        const std::string& t = nodeType(n);
        if (t == "FunctionDef" || t == "Lambda" || t == "ClassDef" || t == "AsyncFunctionDef") return false;
        if (t != "Call") return true;
        if (isType(n["func"], "Subscript") && launch.empty()) {
          const Node& target = n["func"]["value"];
          std::string name = dottedName(target);
          launch = fmt::format("line {}: `{}[...](...)` launches {}{}, which is no @triton.jit kernel tritonforge can "
                               "tell (it follows a kernel's name, a local name bound to one kernel, a constant key "
                               "of a module-level dict of kernels, and a parameter whose default or caller gives one)",
                               lineOf(n), clip(src_.slice(target)), name.empty() ? "a computed value" : "'" + name + "'",
                               name.empty() ? "" : binding(*fn, name));
        } else if (call.empty() && ir_.calleeOf(n, f).empty()) {
          std::string name = dottedName(n["func"]);
          if (!name.empty() && name.find('.') == std::string::npos && fn->assignments.count(name)) {
            call = fmt::format("line {}: `{}(...)` calls '{}'{}, which tritonforge cannot follow to a function of this "
                               "file", lineOf(n), name, name, binding(*fn, name));
          }
        }
        return true;
      });
    }
    return launch.empty() ? call : launch;
  }

  const FunctionInfo* function(const std::string& name) const {
    auto it = ir_.functions.find(name);
    return it == ir_.functions.end() ? nullptr : &it->second;
  }

  // A grid the launcher computes from the GPU's SM count (`num_sm = props.multi_processor_count`
  // or `props["multi_processor_count"]`, then `grid = (min(rows, num_sm * 4),)`): the count is
  // a choice of programs per SM, tuned as a percent of it: the read becomes
  // `(props.multi_processor_count * 200 // 100)`. Every read in the grid or in the values of
  // the local names it depends on (through any chain of them) is one tunable.
  void discoverSmScale(int index) {
    const LaunchSite& site = ir_.launches[static_cast<size_t>(index)];
    if (!function(site.function) || !site.grid) return;
    for (const Node* e : gridSources(site)) {
      walk(*e, [&](const Node& n) {
        if (!readsSmCount(n)) return true;
        auto r = src_.range(n);
        if (!r) return false;
        for (const auto& t : set_.items) {
          if (t.origin == TunableOrigin::kLauncherScale && t.target == *r) return false;
        }
        Tunable t;
        t.kernel = site.kernel;
        t.param = "sm_count_pct";
        t.id = site.kernel + "." + t.param;
        for (int nth = 2; set_.find(t.id); ++nth) t.id = fmt::format("{}.{}#{}", site.kernel, t.param, nth);
        t.site = index;
        t.origin = TunableOrigin::kLauncherScale;
        t.role = TunableRole::kOther;
        t.value = 100;
        t.target = *r;
        t.expr_text = src_.slice(n);
        t.insert_prefix = "(" + t.expr_text + " * ";
        t.insert_suffix = " // 100)";
        t.choices = {25, 50, 100, 200, 400};
        auto pos = nodePos(n);
        t.note = fmt::format("the SM count read at line {}, which the grid of {} is computed from, in percent",
                             pos ? pos->line : 0, site.kernel);
        set_.items.push_back(std::move(t));
        return false;
      });
    }
  }

  // The last part of a call's function name (`triton.cdiv(...)` -> "cdiv").
  static std::string calleeName(const Node& call) {
    std::string f = dottedName(call["func"]);
    return f.substr(f.rfind('.') + 1);  // npos + 1 is 0: the whole name
  }

  // `props.multi_processor_count`, `props["multi_processor_count"]`, or a call of a helper
  // named for the count (`get_device_sm_count()`, `get_multiprocessor_count(i)`, `num_sms()`).
  static bool readsSmCount(const Node& v) {
    if (isType(v, "Attribute")) return v["attr"] == "multi_processor_count";
    if (isType(v, "Call")) {
      std::string f = calleeName(v);
      std::transform(f.begin(), f.end(), f.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      for (const char* name : {"sm_count", "num_sms", "multiprocessor_count", "multi_processor_count"}) {
        if (f.find(name) != std::string::npos) return true;
      }
      return false;
    }
    if (isType(v, "Subscript")) {
      auto s = strLiteral(v["slice"]);
      return s && *s == "multi_processor_count";
    }
    return false;
  }

  // Does `expr` mention the name `var` (or META['param'] / META.param)?
  static bool mentions(const Node& expr, const std::string& var, const std::string& param) {
    bool found = false;
    walk(expr, [&](const Node& n) {
      if (found) return false;
      if (isType(n, "Name") && !var.empty() && n["id"] == var) found = true;
      if (isType(n, "Subscript")) {
        if (auto s = strLiteral(n["slice"]); s && *s == param) found = true;
      }
      if (isType(n, "Attribute") && n["attr"] == param) found = true;
      return true;
    });
    return found;
  }

  // The grid expression, following one level of variable (grid = (...); kernel[grid]): its one
  // assignment, or the one the launch reads on every path.
  const Node* gridExpr(const LaunchSite& site) const {
    const Node* g = site.grid;
    if (isType(*g, "Name")) {
      if (const FunctionInfo* f = function(site.function)) {
        auto it = f->assignments.find((*g)["id"].get<std::string>());
        if (it != f->assignments.end() && it->second.size() == 1 && it->second[0].value) return it->second[0].value;
        const Assignment* a = reachingAssignment(src_, *f, (*g)["id"].get<std::string>(), *site.call);
        if (a && a->value && !a->augmented) return a->value;
      }
    }
    return g;
  }

  // The grid expression and the values of every local name it is computed from, through any
  // chain of them (`grid = (MID,)`, `MID = triton.cdiv(M, BLOCK)`): every assignment of each
  // name, whichever branch it is in.
  std::vector<const Node*> gridSources(const LaunchSite& site) const {
    std::vector<const Node*> exprs;
    if (!site.grid) return exprs;
    exprs.push_back(site.grid);
    const FunctionInfo* fn = function(site.function);
    if (!fn) return exprs;
    std::set<std::string> names;
    for (size_t i = 0; i < exprs.size(); ++i) {
      walk(*exprs[i], [&](const Node& n) {
        if (!isType(n, "Name") || !names.insert(n["id"].get<std::string>()).second) return true;
        auto it = fn->assignments.find(n["id"].get<std::string>());
        if (it == fn->assignments.end()) return true;
        for (const auto& a : it->second) {
          if (a.value) exprs.push_back(a.value);
        }
        return true;
      });
    }
    return exprs;
  }

  // Is the launch's grid computed from `var` (or META['param']), directly or through local names?
  bool gridReads(const LaunchSite& site, const std::string& var, const std::string& param) const {
    for (const Node* e : gridSources(site)) {
      if (mentions(*e, var, param)) return true;
    }
    return false;
  }

  // Do the grid's programs step by `var` (or META['param'])? The grid names it, or divides by
  // it (a `//` or `/` whose divisor, a cdiv / ceil_div whose second argument names it), itself
  // or in the value of a local name it is computed from (`grid = (MID,)`, `MID =
  // triton.cdiv(M, BLOCK)`). A grid computed from a value that merely depends on it (a warp
  // count chosen from the block, then programs per SM from the warps) does not step by it.
  bool gridStepsBy(const LaunchSite& site, const std::string& var, const std::string& param) const {
    if (mentions(*gridExpr(site), var, param)) return true;
    for (const Node* e : gridSources(site)) {
      bool found = false;
      walk(*e, [&](const Node& n) {
        if (found) return false;
        if (isType(n, "BinOp")) {
          const std::string& op = nodeType(n["op"]);
          if ((op == "FloorDiv" || op == "Div") && mentions(n["right"], var, param)) found = true;
        } else if (isType(n, "Call") && n["args"].is_array() && n["args"].size() >= 2) {
          std::string last = calleeName(n);
          if ((last == "cdiv" || last == "ceil_div" || last == "div_up" || last == "ceildiv") &&
              mentions(n["args"][1], var, param)) {
            found = true;
          }
        }
        return true;
      });
      if (found) return true;
    }
    return false;
  }

  // Does the launch's grid read `var` from before assignment `a` (computed earlier, so it
  // would not follow a value written there)?
  bool gridReadsEarlier(const LaunchSite& site, const std::string& var, const Assignment& a) const {
    const Node* g = gridExpr(site);
    auto gr = src_.range(*g);
    auto ar = src_.range(*a.stmt);
    return gr && ar && gr->begin < ar->begin && mentions(*g, var, "");
  }

  // Grid literals equal to the value of `t` that the grid computes the program count from.
  // When the kernel tells which grid axis steps by the parameter (pid_m = program_id(0);
  // pid_m * BLOCK_M), only that element of a tuple grid is searched; a parameter no program
  // id steps by (a K tile) has no mirror.
  void collectMirrors(const LaunchSite& site, int64_t value, Tunable& t) {
    const Node* g = gridExpr(site);
    if (!g) return;
    const KernelFacts& facts = set_.facts.at(t.kernel);
    auto it = facts.params.find(t.param);
    if (it == facts.params.end() || !it->second.pid_scaled) return;
    std::vector<const Node*> parts;
    bool tuple = isType(*g, "Tuple") || isType(*g, "List");
    if (tuple && !it->second.pid_axes.empty()) {
      for (int axis : it->second.pid_axes) {
        if (axis >= 0 && static_cast<size_t>(axis) < (*g)["elts"].size()) parts.push_back(&(*g)["elts"][static_cast<size_t>(axis)]);
      }
    } else {
      parts.push_back(g);
    }
    for (const Node* part : parts) {
      walk(*part, [&](const Node& n) {
        if (auto v = intLiteral(n); v && *v == value && isType(n, "Constant")) {
          if (auto r = src_.range(n)) t.mirrors.push_back(*r);
        }
        return true;
      });
    }
  }

  // One written value passed for several parameters (`BLOCK = 32` then BLOCK_M=BLOCK,
  // BLOCK_N=BLOCK): the first is tuned and the others follow it, since the edit is the same text.
  // Likewise an insertion (`, num_warps=8` added to a launch) at one point for one parameter:
  // a launch site per kernel a local name may hold shares its call's text. An autotuned kernel's
  // parameters all target its config list, which applyConfig rewrites as one config from all of
  // their values: they are independent dimensions, not one text.
  void tieSharedValues() {
    std::map<std::tuple<size_t, size_t, std::string>, std::string> owner;
    for (auto& t : set_.items) {
      if (!t.tunable || t.origin == TunableOrigin::kAutotune) continue;
      bool insertion = t.target.begin == t.target.end;
      if (insertion && t.target.begin == 0) continue;
      // Insertions at one point are one text when they write the same thing: the same option,
      // or the same name's line where its assignments join (whichever parameter it is passed for).
      auto key = std::make_tuple(t.target.begin, t.target.end,
                                 insertion ? (t.insert_prefix.empty() ? t.param : t.insert_prefix) : std::string());
      auto it = owner.find(key);
      if (it == owner.end()) {
        owner[key] = t.id;
        continue;
      }
      t.tunable = false;
      t.note = fmt::format("written by the same text as {}: it follows that parameter", it->second);
    }
  }

  // A range cannot mirror two tunables: then neither can be tuned safely by a text edit.
  void markAmbiguousMirrors() {
    std::map<size_t, std::vector<Tunable*>> by_begin;
    for (auto& t : set_.items) for (const auto& r : t.mirrors) by_begin[r.begin].push_back(&t);
    for (auto& [begin, owners] : by_begin) {
      if (owners.size() < 2) continue;
      for (Tunable* t : owners) {
        if (!t->tunable) continue;
        t->tunable = false;
        t->note = fmt::format("the grid repeats the literal {} for several parameters; give the grid "
                              "variables or META[...] so that it follows the block sizes",
                              t->value ? std::to_string(*t->value) : "?");
      }
    }
  }

  TunableRole roleOf(const KernelFacts& facts, const std::string& param) const {
    auto it = facts.params.find(param);
    if (it == facts.params.end()) return TunableRole::kOther;
    const ParamUsage& u = it->second;
    if (u.dot_role == "m") return TunableRole::kTileM;
    if (u.dot_role == "n") return TunableRole::kTileN;
    if (u.dot_role == "k") return TunableRole::kTileK;
    if (u.tile_extent) return TunableRole::kBlock;
    if (u.index_arith) return TunableRole::kGroup;
    return TunableRole::kOther;
  }

  // Resolves the value expression `e` passed for `param` at `site`.
  void resolveValue(const LaunchSite& site, const Node& e, Tunable& t) {
    if (auto v = intLiteral(e)) {
      t.origin = TunableOrigin::kLaunchLiteral;
      t.value = *v;
      t.target = *src_.range(e);
      collectMirrors(site, *v, t);
      return;
    }
    if (isType(e, "Name")) {
      std::string var = e["id"].get<std::string>();
      const FunctionInfo* f = function(site.function);
      const std::vector<Assignment>* assigns = nullptr;
      if (f) {
        auto it = f->assignments.find(var);
        if (it != f->assignments.end()) assigns = &it->second;
      }
      // A launch option (num_warps, num_stages) changes how the kernel runs, never what it
      // computes: whatever its value is computed from, the launch's own keyword can be set.
      const bool option = t.role == TunableRole::kNumWarps || t.role == TunableRole::kNumStages;
      auto overrideAtLaunch = [&] {
        t.origin = TunableOrigin::kLaunchOverride;
        t.expr_text = var;
        t.target = *src_.range(e);
      };
      if (!assigns) {
        if (option && !mentions(*gridExpr(site), var, "")) return overrideAtLaunch();
        if (f && std::find(f->params.begin(), f->params.end(), var) != f->params.end()) {
          t.tunable = false;
          t.note = fmt::format("comes from the launcher's parameter '{}'", var);
          return;
        }
        auto mit = ir_.module_assignments.find(var);
        if (mit != ir_.module_assignments.end()) {
          if (auto v = intLiteral(*mit->second)) {
            t.origin = TunableOrigin::kModuleConstant;
            t.value = *v;
            t.target = *src_.range(*mit->second);
            return;
          }
        }
        t.tunable = false;
        t.note = fmt::format("'{}' is not defined in '{}'", var, site.function);
        return;
      }
      // One plain assignment: at the top of the function, or a literal in a block (a branch,
      // a loop, a `with`) that the launch comes later in (`BLOCK = 1024` where the launcher
      // picks its launch).
      bool in_block = assigns->size() == 1 && (*assigns)[0].conditional && (*assigns)[0].value &&
                      intLiteral(*(*assigns)[0].value) && f->def && (*assigns)[0].stmt &&
                      followsInItsBlock(src_, *f->def, *(*assigns)[0].stmt, *site.call);
      bool simple = assigns->size() == 1 && !(*assigns)[0].augmented && (*assigns)[0].value != nullptr &&
                    (!(*assigns)[0].conditional || in_block);
      if (simple) {
        const Node& value = *(*assigns)[0].value;
        if (auto v = intLiteral(value)) {
          t.origin = TunableOrigin::kLocalLiteral;
          t.value = *v;
          t.target = *src_.range(value);
          return;
        }
        t.origin = TunableOrigin::kLocalDerived;
        t.expr_text = src_.slice(value);
        t.target = *src_.range(value);
        return;
      }
      // Assigned in several places, one of which the launch reads on every path (`if rank == 2:
      // ... W = 32 if fp8 else 16; grid = (cdiv(M, H), cdiv(N, W)); k[grid](..., W)`): that
      // assignment is rewritten, so the grid, the output shapes and the flags computed from the
      // name after it (`EVEN = N % W == 0`) follow the tuned value.
      if (const Assignment* a = reachingAssignment(src_, *f, var, *site.call);
          a && a->value && !a->augmented && !gridReadsEarlier(site, var, *a)) {
        if (auto v = intLiteral(*a->value)) {
          t.origin = TunableOrigin::kLocalLiteral;
          t.value = *v;
        } else {
          t.origin = TunableOrigin::kLocalDerived;
          t.expr_text = src_.slice(*a->value);
        }
        t.target = *src_.range(*a->value);
        return;
      }
      // Assigned in several branches that join before the launch (`BLOCK = 1024; if n <= 4096:
      // BLOCK = triton.next_power_of_2(n); parts = triton.cdiv(n, BLOCK)`): a tuned value is a
      // line `BLOCK = V` inserted where they join, which the grid and the rest then read.
      if (!option) {
        if (auto j = joinPoint(src_, *f, var, *site.call)) {
          auto grid = src_.range(*gridExpr(site));
          if (!(grid && grid->begin < j->at && gridReads(site, var, ""))) {
            t.origin = TunableOrigin::kLocalDerived;
            t.expr_text = var;
            t.target = {j->at, j->at};
            t.insert_prefix = std::string(static_cast<size_t>(j->indent), ' ') + var + " = ";
            t.insert_suffix = "\n";
            return;
          }
        }
      }
      // Bound by unpacking something the code computes (`b, h, s, d = q.shape`): a value of
      // the data, not a choice of the writer.
      for (const auto& a : *assigns) {
        if (!a.value) {
          if (option && !mentions(*gridExpr(site), var, "")) return overrideAtLaunch();
          t.tunable = false;
          t.note = fmt::format("'{}' is unpacked from a value computed at run time (a shape?); left as written", var);
          // Not searched, but a pass that makes the block a step (column-loop) may cap it at
          // the launch, where nothing else reads it.
          if (!gridReads(site, var, "")) overrideAtLaunch();
          return;
        }
      }
      // Set several times in straight-line code (`BLOCK = n * 8 // BLOCK_N; BLOCK = max(1, BLOCK)`):
      // the last assignment before the launch is the value the grid and the launch both read,
      // so it is the one rewritten.
      if (const Assignment* last = lastStraightLine(*assigns, site)) {
        t.origin = TunableOrigin::kLocalDerived;
        t.expr_text = src_.slice(*last->value);
        t.target = *src_.range(*last->value);
        return;
      }
      // Set in several places: replace the value at the launch only, if nothing else reads it.
      // (A launch option never changes what the kernel computes: only a grid that names it
      // directly keeps it as written.)
      if (option ? mentions(*gridExpr(site), var, "") : gridReads(site, var, "")) {
        t.tunable = false;
        t.note = fmt::format("'{}' is computed in several places and also shapes the grid", var);
        return;
      }
      t.origin = TunableOrigin::kLaunchOverride;
      t.expr_text = var;
      t.target = *src_.range(e);
      return;
    }
    // Any other expression at the launch site: a derived value, rewritten in place.
    t.origin = TunableOrigin::kLocalDerived;
    t.expr_text = src_.slice(e);
    t.target = *src_.range(e);
  }

  // The last of several unconditional, plain assignments of a name, when it comes before the
  // launch (and so before the grid the launch reads); none when any is in a branch, a loop,
  // augmented or unpacked.
  const Assignment* lastStraightLine(const std::vector<Assignment>& assigns, const LaunchSite& site) const {
    if (assigns.empty()) return nullptr;
    for (const auto& a : assigns) {
      if (a.augmented || a.conditional || !a.value || !a.stmt) return nullptr;
    }
    const Assignment& last = assigns.back();
    auto at = src_.range(*last.stmt);
    auto call = src_.range(*site.call);
    auto value = src_.range(*last.value);
    if (!at || !call || !value || at->end > call->begin) return nullptr;
    // A grid computed before that assignment would read an earlier value.
    if (auto grid = src_.range(*gridExpr(site)); !grid || grid->begin < at->end) return nullptr;
    for (const auto& a : assigns) {
      auto r = src_.range(*a.stmt);
      if (!r || r->begin > at->begin) return nullptr;  // source order, as recorded
    }
    return &last;
  }

  // Where to insert ", name=value" into a launch call: after its last argument.
  std::optional<size_t> insertionPoint(const LaunchSite& site) const {
    size_t best = 0;
    bool any = false;
    for (const auto& a : (*site.call)["args"]) {
      if (auto r = src_.range(a)) {
        best = std::max(best, r->end);
        any = true;
      }
    }
    for (const auto& kw : (*site.call)["keywords"]) {
      if (auto r = src_.range(kw)) {
        best = std::max(best, r->end);
        any = true;
      }
    }
    if (!any) return std::nullopt;
    return best;
  }

  void discoverSite(int index, const Kernel& k, const std::string& suffix) {
    const LaunchSite& site = ir_.launches[static_cast<size_t>(index)];
    const KernelFacts& facts = set_.facts.at(k.name);
    if (site.has_starred) {
      set_.notes.push_back(fmt::format("{}: a launch passes *args/**kwargs; only what is visible is tuned", k.name));
    }
    bool autotuned = k.autotune && k.autotune->configs_understood;
    if (k.autotune && !k.autotune->configs_understood) {
      set_.notes.push_back(fmt::format("{}: @triton.autotune configs are not a literal list of triton.Config; "
                                       "left as they are",
                                       k.name));
    }
    if (autotuned && !suffix.empty()) return;  // autotune tunables are per kernel, not per site
    // Configs computed at run time (a comprehension, a function's result): what they set is
    // what the launch leaves unset. Searched per kernel, as written configs are.
    const bool unread = k.autotune && !k.autotune->configs_understood && k.autotune->configs && suffix.empty() &&
                        src_.range(*k.autotune->configs).has_value();
    auto setByUnreadConfigs = [&](Tunable& t) {
      t.origin = TunableOrigin::kAutotune;
      t.site = -1;
      t.target = *src_.range(*k.autotune->configs);
      t.configs_unread = true;
      t.expr_text = "as autotuned";
    };
    std::set<std::string> autotune_keys;
    if (autotuned) {
      for (const auto& c : k.autotune->configs_list) for (const auto& [key, v] : c.kwargs) autotune_keys.insert(key);
    }

    for (const auto& p : k.params) {
      if (!p.is_constexpr) continue;
      Tunable t;
      t.id = k.name + "." + p.name + suffix;
      t.kernel = k.name;
      t.param = p.name;
      t.site = index;
      t.role = roleOf(facts, p.name);
      const LaunchArg* arg = site.arg(p.name);
      auto heur = std::find_if(k.heuristics.begin(), k.heuristics.end(),
                               [&](const HeuristicEntry& h) { return h.param == p.name; });
      if (autotuned && autotune_keys.count(p.name)) {
        t.origin = TunableOrigin::kAutotune;
        t.site = -1;
        t.target = *src_.range(*k.autotune->configs);
        const auto& first = k.autotune->configs_list.front();
        if (first.kwargs.count(p.name)) t.value = first.kwargs.at(p.name);
        std::set<int64_t> offered;
        for (const auto& c : k.autotune->configs_list) {
          if (auto v = c.kwargs.find(p.name); v != c.kwargs.end()) offered.insert(v->second);
        }
        t.choices.assign(offered.begin(), offered.end());
      } else if (heur != k.heuristics.end()) {
        t.origin = TunableOrigin::kHeuristic;
        t.site = -1;
        if (!heur->body && heur->value && isType(*heur->value, "Name") && src_.range(*heur->value)) {
          // A function given by name (`{'BLOCK_N': heur_block_n}`): a value replaces it as a
          // lambda, and a cap wraps a call of it.
          t.target = *src_.range(*heur->value);
          t.expr_text = src_.slice(*heur->value) + "(args)";
          t.insert_prefix = "lambda args: ";
        } else if (!heur->body) {
          t.tunable = false;
          t.note = "the heuristic is neither a lambda nor a function's name";
        } else {
          t.target = *src_.range(*heur->body);
          t.expr_text = src_.slice(*heur->body);
          if (auto v = intLiteral(*heur->body)) t.value = *v;
        }
      } else if (arg) {
        resolveValue(site, *arg->expr, t);
      } else if (!p.default_value && unread) {
        setByUnreadConfigs(t);
      } else if (p.default_value) {
        if (p.default_int) {
          t.origin = TunableOrigin::kKernelDefault;
          t.value = *p.default_int;
          t.target = *src_.range(*p.default_value);
        } else {
          t.tunable = false;
          t.note = "its default is not an integer literal";
        }
      } else {
        t.tunable = false;
        t.note = "not passed at the launch";
      }
      if (k.home && t.origin != TunableOrigin::kLaunchLiteral && t.origin != TunableOrigin::kLocalLiteral &&
          t.origin != TunableOrigin::kLocalDerived && t.origin != TunableOrigin::kLaunchOverride &&
          t.origin != TunableOrigin::kModuleConstant && t.tunable) {
        // Written in the module that defines the kernel: a variant is the task's source only.
        t.tunable = false;
        t.target = {};
        t.expr_text.clear();
        t.note = fmt::format("set in {}, where the kernel is defined: only the task's source is rewritten",
                             k.home_path);
      }
      classify(site, facts, p, t);
      set_.items.push_back(std::move(t));
    }

    for (const char* option : {"num_warps", "num_stages"}) {
      Tunable t;
      t.id = k.name + "." + option + suffix;
      t.kernel = k.name;
      t.param = option;
      t.site = index;
      t.role = std::string(option) == "num_warps" ? TunableRole::kNumWarps : TunableRole::kNumStages;
      int64_t dflt = t.role == TunableRole::kNumWarps ? kTritonDefaultWarps : kTritonDefaultStages;
      if (autotuned) {
        t.origin = TunableOrigin::kAutotune;
        t.site = -1;
        t.target = *src_.range(*k.autotune->configs);
        const auto& first = k.autotune->configs_list.front();
        t.value = first.options.count(option) ? first.options.at(option) : dflt;
      } else if (unread) {
        setByUnreadConfigs(t);
      } else if (auto it = site.options.find(option); it != site.options.end()) {
        resolveValue(site, *it->second.expr, t);
      } else if (unpackedKeys(ir_, site).count(option)) {
        // Written into a dict the launch unpacks (Liger's `**kernel_args`): added at the launch,
        // it would be given twice (a TypeError at every call).
        t.origin = TunableOrigin::kAbsentOption;
        t.value = dflt;
        t.tunable = false;
        t.note = "set through a dict the launch unpacks (**kwargs): added at the launch, it would be given twice";
      } else if (auto at = insertionPoint(site)) {
        t.origin = TunableOrigin::kAbsentOption;
        t.value = dflt;
        t.target = {*at, *at};
        t.insert_prefix = fmt::format(", {}=", option);
      } else {
        t.tunable = false;
        t.note = "the launch has no arguments to add it after";
      }
      if (k.home && autotuned) {
        t.tunable = false;
        t.target = {};
        t.note = fmt::format("set by the @triton.autotune configs in {}: only the task's source is rewritten",
                             k.home_path);
      } else if (k.autotune && !autotuned && !t.configs_unread && t.tunable) {
        // The autotuner passes each config's options itself: the same option at the launch is
        // given twice (a TypeError at the first call).
        t.tunable = false;
        t.note = "the kernel is @triton.autotune'd (configs not read): its configs set the launch options";
      }
      if (t.role == TunableRole::kNumStages && t.tunable && !(facts.loops > 0 && facts.loop_has_load)) {
        t.tunable = false;
        t.note = "no loop that loads: software pipelining has nothing to overlap";
      }
      set_.items.push_back(std::move(t));
    }
    if (unread) requireCompleteConfig(k);
  }

  // A candidate replaces computed configs with one literal config, which must give every
  // parameter they set: when one of them is not searched (a flag), none is, and the configs
  // stay as written. (num_stages without a loop that loads is left out of the config: Triton's
  // default then.) A block the writer autotunes is a choice, even where the analysis sees no
  // loop or program stepping by it: the configs vary it, and verification checks each value.
  void requireCompleteConfig(const Kernel& k) {
    const Tunable* blocker = nullptr;
    for (auto& t : set_.items) {
      if (t.kernel != k.name || !t.configs_unread) continue;
      if (t.tunable && t.covers_dimension) {
        t.covers_dimension = false;
        t.note = "set by the computed @triton.autotune configs, which vary it";
      }
      if (t.tunable || t.role == TunableRole::kNumStages) continue;
      if (!blocker) blocker = &t;
    }
    if (!blocker) return;
    std::string why = fmt::format("the @triton.autotune configs are computed at run time and also set {} ({}): "
                                  "left as they are",
                                  blocker->param, blocker->note.empty() ? "not searched" : blocker->note);
    for (auto& t : set_.items) {
      if (t.kernel != k.name || !t.configs_unread) continue;
      t.tunable = false;
      if (&t != blocker) t.note = why;
    }
  }

  void classify(const LaunchSite& site, const KernelFacts& facts, const Param& p, Tunable& t) {
    if (!t.tunable) {
      // Left alone, but what it spans is still a fact: a block computed at run time that covers
      // the row is what the column-loop pass rewrites (it caps the computed value).
      auto it = facts.params.find(p.name);
      if (t.role == TunableRole::kBlock && it != facts.params.end() && it->second.used) {
        t.covers_dimension = spansDimension(site, it->second, p.name);
      }
      return;
    }
    auto it = facts.params.find(p.name);
    if (it == facts.params.end() || !it->second.used) {
      t.tunable = false;
      t.note = "not used by the kernel";
      return;
    }
    const ParamUsage& u = it->second;
    // A value the writer's own config list varies (a split-K factor) is a choice whatever the
    // kernel computes with it: any listed value computes the same result. Only those values
    // are searched.
    if (t.role == TunableRole::kOther && t.origin == TunableOrigin::kAutotune && t.choices.size() > 1) {
      t.note = "varied by the @triton.autotune configs: their values are searched";
      return;
    }
    if (t.role == TunableRole::kOther) {
      t.tunable = false;
      t.note = "not a tile or block size (a flag or a value the kernel computes with)";
      return;
    }
    if (t.role == TunableRole::kGroup) {
      // A program-order group (GROUP_M) is a choice; one the launcher computes from the
      // tensors' sizes (a quantization group: cdiv(N, scale.size(1))) describes the data.
      static const char* kShapeQueries[] = {".size(", ".shape", ".numel(", ".stride(", ".dim("};
      bool from_tensors = std::any_of(std::begin(kShapeQueries), std::end(kShapeQueries),
                                      [&](const char* q) { return t.expr_text.find(q) != std::string::npos; });
      if (t.origin == TunableOrigin::kLocalDerived && from_tensors) {
        t.tunable = false;
        t.note = "computed from the tensors' sizes: a value the kernel computes with, not a program order";
      }
      return;
    }
    if (spansDimension(site, u, p.name)) {
      t.covers_dimension = true;
      t.note = fmt::format("{} spans a whole dimension (no loop or program steps by it): it must not shrink",
                           p.name);
      if (t.origin == TunableOrigin::kLocalDerived || t.origin == TunableOrigin::kHeuristic) {
        t.tunable = false;  // computed from the shape to cover it: the only safe value is the computed one
        t.note += "; it is computed from the shape, so it is left as written";
      }
    }
  }

  // A tile extent that no program id, loop or grid steps by: the block spans a whole dimension.
  // The grid follows the parameter if it names it (META['P'], or the variable bound to it).
  bool spansDimension(const LaunchSite& site, const ParamUsage& u, const std::string& param) const {
    std::string var;
    if (const LaunchArg* a = site.arg(param); a && isType(*a->expr, "Name")) var = (*a->expr)["id"].get<std::string>();
    return u.tile_extent && !u.pid_scaled && !u.loop_stepped && !gridStepsBy(site, var, param);
  }

  const ModuleIR& ir_;
  const SourceText& src_;
  std::string launcher_;
  std::set<std::string> only_;
  bool backward_ = false;
  TunableSet set_;
};

}  // namespace

TunableSet discoverTunables(const ModuleIR& ir, const std::string& launcher,
                            const std::vector<std::string>& only_kernels, bool backward) {
  return Discoverer(ir, launcher, only_kernels, backward).run();
}

nlohmann::json tunablesJson(const TunableSet& tunables) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& t : tunables.items) {
    nlohmann::json j = {{"id", t.id},           {"kernel", t.kernel},           {"param", t.param},
                        {"origin", toString(t.origin)}, {"role", toString(t.role)}, {"tunable", t.tunable}};
    if (t.value) j["value"] = *t.value;
    if (!t.expr_text.empty()) j["expression"] = t.expr_text;
    if (t.covers_dimension) j["covers_dimension"] = true;
    if (t.configs_unread) j["configs_unread"] = true;
    if (!t.choices.empty()) j["choices"] = t.choices;
    if (!t.note.empty()) j["note"] = t.note;
    arr.push_back(j);
  }
  return arr;
}

}  // namespace tf

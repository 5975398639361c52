// prefetch: a loop without a dot whose loads do not depend on what the loop computes (a
// recurrence over time steps reading q, k, v for each step; a walk over a row's blocks) issues
// each load one step ahead: the value a step uses was requested before the previous step's work,
// so the load's latency overlaps that work instead of stalling the step.
//
//   b_k_next = tl.load(p_k, mask=m & (0 < T), other=0)
//   for t in range(0, T):                          for t in range(0, T):
//       b_k = tl.load(p_k, mask=m, other=0)    ->      b_k = b_k_next
//       ...                                            b_k_next = tl.load(p_k + (H * K), mask=m & (t + 1 < T), other=0)
//       p_k += H * K                                   ...
//                                                      p_k += H * K
//
// Why: Triton 3.6 pipelines a loop's loads into shared memory only where they feed a dot; a
// recurrence's per-step vectors are loaded and waited for inside each step (compiled for sm_90
// with tl.range(..., num_stages=3): no async copy). The value of step t+1's load is the same
// whether it is issued at step t or at t+1 when its address and mask read only values that
// the loop does not change, the loop's variable (read as V + STEP), and pointers the loop moves
// by a loop-invariant amount once per step (`p += C`, read as p + C), and when no store of the
// loop writes through the same pointer parameter. The extra load of the last step and the
// one before an empty loop are masked off (`V + STEP < END`, `LO < END`).
//
// Recognition, in the order of the refusals: a `for V in range(...)` / tl.range loop (any depth,
// no else, no break / continue / return), without tl.dot, with a positive literal or constexpr
// step; the statements at the top of its body, or in branches on constexpr parameters only
// (`if USE_G:`; the load before the loop goes under the same conditions), that hold a tl.load
// (not in a nested loop, not under a conditional expression); the load's names; the stores of
// the loop (their pointer parameters, from the Kernel IR).
//
// Entry point: makePrefetchPass().
#include <fmt/format.h>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kernel/kernel_ir.h"
#include "transform/pass_context.h"
#include "transform/passes/loop_split.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {

// A name the loop moves once per step by a loop-invariant amount: `p += C` at the top of its body.
struct Bump {
  std::string step;  // C's text
  size_t index = 0;  // the index in the body of the statement that holds it
  std::set<std::string> conds;  // the constexpr branches it is in (`(USE_G)`, `not (USE_G)`)
};

struct LoopShape {
  const Node* loop = nullptr;
  std::string var, lo, end, step;
  std::set<std::string> stored;   // every name the body binds (and the loop's variable)
  std::map<std::string, Bump> bumps;
  // Names bound once at the top of the body from known names (`cols = start + tl.arange(0, B)`):
  // read through their value. Statement index and value.
  std::map<std::string, std::pair<size_t, const Node*>> derived;
};

class PrefetchPass : public Pass {
 public:
  PrefetchPass() {
    info_.name = "prefetch";
    info_.summary = "A loop without a dot issues its loads one step ahead: the next step's values are requested "
                    "before this step's work (a recurrence's per-step vectors, a walk over a row's blocks).";
    info_.preconditions = {
        "a loop `for V in range(...)` or tl.range without else, break, continue or return, and without tl.dot, "
        "its step a positive literal or a constexpr parameter",
        "a statement at the top of its body (or in branches on constexpr parameters) holds a tl.load (not volatile, "
        "not under a conditional expression) whose pointer, mask "
        "and other read only names the loop does not bind, V, pointers moved once per step by a loop-invariant "
        "amount (`p += C` at the top of the body), and names bound once before it at the top of the body from "
        "those (`cols = start + tl.arange(0, BLOCK)`, read through their value)",
        "no store or atomic of the loop writes through the load's pointer parameter (nor through one the Kernel IR "
        "cannot name)",
    };
  }
  const PassInfo& info() const override { return info_; }

  PassOutcome run(const PassContext& ctx, const PassArgs&) const override {
    std::vector<const Node*> loops;
    walk(ctx.body(), [&](const Node& n) {
      if (isType(n, "FunctionDef") || isType(n, "Lambda")) return false;
      if (isType(n, "For")) loops.push_back(&n);
      return true;
    });
    if (loops.empty()) return refuse(fmt::format("{} has no loop", ctx.kernel->name));
    KernelIR kir = buildKernelIR(*ctx.ir, *ctx.kernel);
    SourceEditor ed(ctx.text().text());
    std::string first_why;
    std::set<std::string> taken;
    int prefetched = 0;
    std::vector<int> lines;
    for (const Node* loop : loops) {
      std::string why;
      int n = rewriteLoop(ctx, kir, *loop, ed, taken, &why);
      if (n > 0) {
        prefetched += n;
        lines.push_back(nodePos(*loop)->line);
      } else if (first_why.empty()) {
        first_why = why.rfind("line ", 0) == 0 ? why : fmt::format("line {}: {}", nodePos(*loop)->line, why);
      }
    }
    if (prefetched == 0) return refuse(first_why);
    PassOutcome out = appliedEdits(ed, ctx.kernel->name);
    if (!out.applied) return out;
    std::string at;
    for (int l : lines) at += (at.empty() ? "" : ", ") + std::to_string(l);
    out.notes.push_back(fmt::format("{} load(s) issued one step ahead (loops at lines {})", prefetched, at));
    return out;
  }

 private:
  static bool hasEscape(const Node& body) {
    bool found = false;
    for (const auto& st : body) {
      walk(st, [&](const Node& n) {
        if (isType(n, "FunctionDef") || isType(n, "Lambda")) return false;
        // A nested loop's own break / continue stay in it.
        if (isType(n, "For") || isType(n, "While")) {
          walk(n, [&](const Node& m) {
            if (isType(m, "Return")) found = true;
            return !found;
          });
          return false;
        }
        if (isType(n, "Break") || isType(n, "Continue") || isType(n, "Return")) found = true;
        return !found;
      });
    }
    return found;
  }

  static std::optional<LoopShape> shapeOf(const PassContext& ctx, const Node& loop, std::string* why) {
    LoopShape s;
    s.loop = &loop;
    const Node& it = loop["iter"];
    if (!isType(it, "Call") || !(dottedName(it["func"]) == "range" || ctx.isTlCall(it, "range"))) {
      *why = "the loop is not over range(...) or tl.range(...)";
      return std::nullopt;
    }
    if (!isType(loop["target"], "Name") || !loop["orelse"].empty()) {
      *why = "the loop's variable is not one name, or the loop has an else";
      return std::nullopt;
    }
    const Node& args = it["args"];
    if (args.empty() || args.size() > 3) {
      *why = "the range's bounds are not given positionally";
      return std::nullopt;
    }
    s.var = loop["target"]["id"];
    s.lo = args.size() >= 2 ? ctx.slice(args[0]) : "0";
    s.end = ctx.slice(args[args.size() >= 2 ? 1 : 0]);
    s.step = "1";
    if (args.size() == 3) {
      if (!isConstantStep(ctx, args[2])) {
        *why = "the range's step is neither a positive literal nor a constexpr parameter";
        return std::nullopt;
      }
      s.step = ctx.slice(args[2]);
    }
    bool dot = false;
    walk(loop["body"], [&](const Node& n) {
      if (ctx.isTlCall(n, "dot") || ctx.isTlCall(n, "dot_scaled")) dot = true;
      return !dot;
    });
    if (dot) {
      *why = "the loop holds a tl.dot (Triton pipelines a dot's loads itself)";
      return std::nullopt;
    }
    if (hasEscape(loop["body"])) {
      *why = "the loop's body holds a break, continue or return";
      return std::nullopt;
    }
    std::map<std::string, int> counts = storeCounts(loop["body"]);
    s.stored.insert(s.var);
    for (const auto& [name, count] : counts) s.stored.insert(name);
    const Node& body = loop["body"];
    // Bumps at the top of the body or in its branches on constexpr parameters.
    eachStatement(ctx, body, [&](const Node& st, size_t i, const std::vector<std::string>& conds) {
      if (!isType(st, "AugAssign") || !isType(st["target"], "Name") || !isType(st["op"], "Add")) return;
      std::string p = st["target"]["id"];
      if (counts[p] != 1 || p == s.var) return;
      bool invariant = true;
      forEachName(st["value"], [&](const Node& n) { invariant = invariant && !s.stored.count(n["id"].get<std::string>()); });
      if (invariant) s.bumps[p] = {ctx.slice(st["value"]), i, std::set<std::string>(conds.begin(), conds.end())};
    });
    // Names derived from known ones: bound once, at the top of the body, by a plain assignment
    // whose value reads known names only (and calls no load: a gather stays).
    for (size_t i = 0; i < body.size(); ++i) {
      const Node& st = body[i];
      std::string name = assignedName(st);
      if (name.empty() || !isType(st, "Assign") || counts[name] != 1 || name == s.var) continue;
      bool load = false;
      walk(st["value"], [&](const Node& n) {
        if (ctx.isTlCall(n, "load")) load = true;
        return !load;
      });
      if (!load && readsOnlyKnown(st["value"], s, i, {})) s.derived[name] = {i, &st["value"]};
    }
    return s;
  }

  // The names `n` reads are loop-invariant, the loop's variable, moved pointers, or derived
  // names bound before statement `index`.
  // A bump counts for a load under the constexpr conditions `conds` when it happens whenever the
  // load does (its own conditions are among the load's).
  static bool bumpHolds(const Bump& b, const std::set<std::string>& conds) {
    for (const auto& c : b.conds) {
      if (!conds.count(c)) return false;
    }
    return true;
  }

  // `at`: the top-level statement the load is in; a pointer moved in that same statement (a
  // branch holding both) is not read (which comes first inside it is not followed).
  static bool readsOnlyKnown(const Node& n, const LoopShape& s, size_t index, const std::set<std::string>& conds,
                             std::optional<size_t> at = std::nullopt) {
    bool ok = true;
    forEachName(n, [&](const Node& x) {
      const std::string& id = x["id"].get_ref<const std::string&>();
      if (!s.stored.count(id) || id == s.var) return;
      if (auto b = s.bumps.find(id); b != s.bumps.end()) {
        ok = ok && bumpHolds(b->second, conds) && (!at || b->second.index != *at);
        return;
      }
      auto d = s.derived.find(id);
      if (d == s.derived.end() || d->second.first >= index) {
        ok = false;
        return;
      }
      ok = ok && readsOnlyKnown(*d->second.second, s, d->second.first, conds, at);
    });
    return ok;
  }

  // The Kernel IR's access at `call` (a load or store of the kernel's own body), or null.
  static const IrAccess* accessAt(const KernelIR& kir, const Node& call) {
    auto p = nodePos(call);
    if (!p) return nullptr;
    for (const auto& a : kir.accesses) {
      if (a.via.empty() && a.loc.line == p->line && a.loc.col == p->col) return &a;
    }
    return nullptr;
  }

  // `text` of `n`, read as of top-level statement `read`, with the loop's variable and the
  // moved pointers as they will be one step on, written where the load ahead goes (after
  // statement `at`) (`ahead`), or as they are at the loop's entry (`!ahead`). A pointer p moved
  // by C at statement b holds, after `at`, its value of this step as of `read` plus C once
  // where b < at; one step on, as of `read`, it holds that value plus C: so it reads p + C,
  // except where read <= b < at (p already moved, the value as of `read` was before the move),
  // where it reads p. At the entry, as of `read`: p, moved once where b < read.
  static std::string shifted(const PassContext& ctx, const Node& n, const LoopShape& s, bool ahead, size_t read,
                             size_t at) {
    TextEdits subs;
    forEachName(n, [&](const Node& x) {
      const std::string& id = x["id"].get_ref<const std::string&>();
      if (id == s.var) {
        subs.push_back({ctx.range(x), ahead ? fmt::format("({} + {})", s.var, s.step) : fmt::format("({})", s.lo)});
      } else if (auto b = s.bumps.find(id); b != s.bumps.end()) {
        size_t bi = b->second.index;
        bool moved = ahead ? !(read <= bi && bi < at) : bi < read;
        if (moved) subs.push_back({ctx.range(x), fmt::format("({} + ({}))", id, b->second.step)});
      } else if (auto d = s.derived.find(id); d != s.derived.end()) {
        // Read through its value, as of the statement that binds it.
        subs.push_back({ctx.range(x), "(" + shifted(ctx, *d->second.second, s, ahead, d->second.first, at) + ")"});
      }
    });
    return sliceWith(ctx, n, subs);
  }

  static std::string loadText(const PassContext& ctx, const Node& call, const LoopShape& s, bool ahead, size_t index) {
    std::string tl = ctx.tl();
    std::string guard = ahead ? fmt::format("({} + {} < {})", s.var, s.step, s.end) : fmt::format("({} < {})", s.lo, s.end);
    std::string out = fmt::format("{}.load({}", tl, shifted(ctx, call["args"][0], s, ahead, index, index));
    const Node* mask = call["args"].size() >= 2 ? &call["args"][1] : keywordArg(call, "mask");
    const Node* other = call["args"].size() >= 3 ? &call["args"][2] : keywordArg(call, "other");
    out += mask ? fmt::format(", mask=({}) & {}", shifted(ctx, *mask, s, ahead, index, index), guard)
                : fmt::format(", mask={}", guard);
    if (other) out += fmt::format(", other={}", shifted(ctx, *other, s, ahead, index, index));
    for (const auto& kw : call["keywords"]) {
      if (!kw["arg"].is_string()) {  // **options
        out += fmt::format(", **{}", ctx.slice(kw["value"]));
        continue;
      }
      std::string name = kw["arg"].get<std::string>();
      if (name == "mask" || name == "other") continue;
      out += fmt::format(", {}={}", name, ctx.slice(kw["value"]));
    }
    return out + ")";
  }

  // Does the call reach a @triton.jit helper of the module that stores or updates memory
  // (itself or through the helpers it calls)?
  static bool helperStores(const PassContext& ctx, const Node& call, int depth) {
    std::string callee = dottedName(call["func"]);
    const Kernel* helper = callee.empty() ? nullptr : ctx.ir->kernel(callee);
    if (!helper || !helper->def) return false;
    if (depth > 4) return true;  // deeper than followed: assumed to
    const ModuleIR& names = helper->home ? *helper->home : *ctx.ir;
    bool stores = false;
    walk((*helper->def)["body"], [&](const Node& n) {
      if (!isType(n, "Call")) return !stores;
      // tl.store, a descriptor's .store, tl.atomic_*.
      if (tlNameIn(names, n["func"]).rfind("atomic_", 0) == 0 ||
          (isType(n["func"], "Attribute") && n["func"]["attr"] == "store")) {
        stores = true;
      } else if (!helper->home && helperStores(ctx, n, depth + 1)) {
        stores = true;
      }
      return !stores;
    });
    return stores;
  }

  // Does `test` read only the kernel's constexpr parameters (a branch Triton takes or drops
  // when it compiles)?
  static bool constexprTest(const PassContext& ctx, const Node& test) {
    bool ok = true, any = false;
    walk(test, [&](const Node& n) {
      if (isType(n, "Call") || isType(n, "Attribute") || isType(n, "Subscript")) ok = false;
      if (isType(n, "Name")) {
        const Param* p = ctx.kernel->param(n["id"].get<std::string>());
        ok = ok && p && p->is_constexpr;
        any = true;
      }
      return ok;
    });
    return ok && any;
  }

  // Each statement at the top of a loop's `body`, and in its branches on constexpr
  // parameters (at any depth), with the index in `body` of the top-level statement that holds
  // it and the branches' conditions (`(USE_G)`, `not (USE_G)`). Other compound statements are
  // passed whole.
  using StatementFn = std::function<void(const Node&, size_t, const std::vector<std::string>&)>;
  static void eachStatement(const PassContext& ctx, const Node& body, const StatementFn& fn) {
    std::function<void(const Node&, std::optional<size_t>, const std::vector<std::string>&)> visit =
        [&](const Node& block, std::optional<size_t> top, const std::vector<std::string>& conds) {
          for (size_t j = 0; j < block.size(); ++j) {
            const Node& st = block[j];
            size_t i = top ? *top : j;
            if (!isType(st, "If") || !constexprTest(ctx, st["test"])) {
              fn(st, i, conds);
              continue;
            }
            std::string test = ctx.slice(st["test"]);
            std::vector<std::string> then = conds, otherwise = conds;
            then.push_back("(" + test + ")");
            otherwise.push_back("not (" + test + ")");
            visit(st["body"], i, then);
            visit(st["orelse"], i, otherwise);
          }
        };
    visit(body, std::nullopt, {});
  }

  struct LoopRewrite {
    const PassContext& ctx;
    const KernelIR& kir;
    const LoopShape& s;
    SourceEditor& ed;
    std::set<std::string>& taken;
    std::set<std::string> written;
    std::string indent_loop, pre, reason = "no statement at the top of the loop's body holds a tl.load";
    int count = 0;

    void statement(const Node& st, size_t i, const std::vector<std::string>& conds) {
      std::vector<const Node*> loads;
      walk(st, [&](const Node& n) {
        if (ctx.isTlCall(n, "load") && !n["args"].empty()) {
          loads.push_back(&n);
          return false;  // a load inside a load's address is a gather of this one
        }
        // A load under a condition (`tl.load(p) if HAS_P else 0`) may be of a pointer that
        // is None where the condition is false: it is not issued ahead.
        return !(isType(n, "Lambda") || isType(n, "IfExp") || isType(n, "BoolOp"));
      });
      if (loads.empty()) return;
      // The statement must begin its line (not `for ...: x = tl.load(p)` or `if C: ...` on one
      // line): the next step's load goes on the line after it, at its indentation.
      Range line_range = ctx.lineRange(st);
      std::string before = ctx.text().text().substr(line_range.begin, ctx.range(st).begin - line_range.begin);
      if (before.find_first_not_of(" \t") != std::string::npos) {
        reason = fmt::format("line {}: the load's statement shares its line with the statement around it",
                             nodePos(st)->line);
        return;
      }
      std::string indent = ctx.text().indentOf(nodePos(st)->line);
      std::string after;
      TextEdits in_stmt;
      for (const Node* call : loads) {
        const Node* vol = keywordArg(*call, "volatile");
        if (vol && ctx.slice(*vol) != "False") {
          reason = fmt::format("line {}: the load is volatile", nodePos(*call)->line);
          continue;
        }
        if (!readsOnlyKnown(*call, s, i, std::set<std::string>(conds.begin(), conds.end()), i)) {
          reason = fmt::format("line {}: the load reads a value the loop computes", nodePos(*call)->line);
          continue;
        }
        const IrAccess* access = accessAt(kir, *call);
        // Where the loop stores, the load's pointer parameter must be known (and not stored to).
        if (!written.empty() && (!access || access->ptr.base.empty())) {
          reason = fmt::format("line {}: the load's pointer parameter is not known, and the loop stores",
                               nodePos(*call)->line);
          continue;
        }
        if (access && (access->block_ptr >= 0 || access->descriptor >= 0)) {
          reason = fmt::format("line {}: the load is through a block pointer (a mask cannot guard it)",
                               nodePos(*call)->line);
          continue;
        }
        if (!written.empty() && (written.count(access->ptr.base) || written.count(""))) {
          reason = fmt::format("line {}: the loop stores through {} too (or through a pointer the analysis cannot "
                               "name)",
                               nodePos(*call)->line, access->ptr.base);
          continue;
        }
        if (!access) {
          // Not in the IR (a form it does not follow): a block pointer cannot be ruled out.
          bool pointer_param = false;
          const Node& ptr = (*call)["args"][0];
          forEachName(ptr, [&](const Node& x) {
            const Param* p = ctx.kernel->param(x["id"].get<std::string>());
            pointer_param = pointer_param || (p && !p->is_constexpr);
          });
          if (!pointer_param && !s.bumps.count(isType(ptr, "Name") ? ptr["id"].get<std::string>() : "")) {
            reason = fmt::format("line {}: the load's pointer is not followed", nodePos(*call)->line);
            continue;
          }
        }
        std::string target = assignedName(st);
        std::string stem = target.empty() ? std::string("prefetched") : target;
        std::string name = ctx.freshName(stem + "_next");
        for (int k = 2; taken.count(name); ++k) name = ctx.freshName(fmt::format("{}_next{}", stem, k));
        taken.insert(name);
        // Before the loop, under the branches' constexpr conditions (Triton drops the others).
        std::string load = fmt::format("{} = {}\n", name, loadText(ctx, *call, s, false, i));
        if (conds.empty()) {
          pre += indent_loop + load;
        } else {
          std::string all;
          for (const auto& c : conds) all += (all.empty() ? "" : " and ") + c;
          pre += fmt::format("{}if {}:\n{}{}{}", indent_loop, all, indent_loop, ctx.indentUnit(), load);
        }
        after += fmt::format("{}{} = {}\n", indent, name, loadText(ctx, *call, s, true, i));
        in_stmt.push_back({ctx.range(*call), name});
        ++count;
      }
      if (in_stmt.empty()) return;
      // The statement reads the value loaded a step ahead; the next step's load follows it.
      std::string rewritten = withEdits(ctx, line_range, in_stmt);
      if (!rewritten.empty() && rewritten.back() != '\n') rewritten += "\n";
      ed.replace(line_range, rewritten + after);
    }
  };

  static int rewriteLoop(const PassContext& ctx, const KernelIR& kir, const Node& loop, SourceEditor& ed,
                         std::set<std::string>& taken, std::string* why) {
    auto s = shapeOf(ctx, loop, why);
    if (!s) return 0;
    LoopRewrite rw{ctx, kir, *s, ed, taken};
    // The pointer parameters the loop writes through ("" stands for one the IR cannot name,
    // and for a @triton.jit helper the loop calls that stores).
    walk(loop["body"], [&](const Node& n) {
      if (ctx.isTlCall(n, "store") || ctx.tlFunction(n).rfind("atomic_", 0) == 0) {
        const IrAccess* a = accessAt(kir, n);
        rw.written.insert(a ? a->ptr.base : "");
      } else if (isType(n, "Call") && helperStores(ctx, n, 0)) {
        rw.written.insert("");
      }
      return true;
    });
    rw.indent_loop = ctx.text().indentOf(nodePos(loop)->line);
    eachStatement(ctx, loop["body"], [&](const Node& st, size_t i, const std::vector<std::string>& conds) {
      if (isType(st, "Assign") || isType(st, "AnnAssign") || isType(st, "AugAssign") || isType(st, "Expr")) {
        rw.statement(st, i, conds);
      }
    });
    if (rw.count == 0) {
      *why = rw.reason;
      return 0;
    }
    ed.insert(ctx.lineRange(loop).begin, rw.pre);
    return rw.count;
  }

  PassInfo info_;
};

}  // namespace

std::unique_ptr<Pass> makePrefetchPass() { return std::make_unique<PrefetchPass>(); }

}  // namespace tf

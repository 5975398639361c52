// causal-split: a causal attention loop over key blocks becomes two loops over the same
// loop-carried values: first the key blocks that lie wholly below the query block's first
// row, where the causal comparison holds for every element and is dropped, then the blocks
// from the diagonal on, as written.
//
//   offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)               (top of the kernel body)
//   for start_n in range(LO, END, BLOCK_N):                        (or tl.range: options kept)
//       offs_n = start_n + tl.arange(0, BLOCK_N)
//       keep = (offs_m[:, None] >= offs_n[None, :]) & (offs_n[None, :] < seq_len)
//       s = tl.where(keep, s, float("-inf"))
// becomes
//   unmasked_end = tl.minimum((pid_m * BLOCK_M) // BLOCK_N * BLOCK_N, END)
//   for start_n in range(LO, unmasked_end, BLOCK_N):  ... (no select when END is seq_len)
//   for start_n in range(unmasked_end, END, BLOCK_N): ... as written
//
// Why it is exact: in the first loop start_n steps from LO (a multiple of BLOCK_N) and stays
// below D = (pid_m * BLOCK_M) // BLOCK_N * BLOCK_N, a multiple of BLOCK_N too, so every key
// index start_n + j (j < BLOCK_N) is below D <= pid_m * BLOCK_M, the block's first row: the
// comparison (>= or >) is true everywhere. The second loop starts on the first one's step
// sequence, so together they visit the original start_n values; the minimum with END keeps
// the first loop from passing the original end (a nonzero LO also takes a maximum with LO).
// A bounds conjunct `offs_n[None, :] < E` goes too, E the range's END or, for `end =
// tl.minimum(X, seq_len)`, seq_len: every key of the first loop is below unmasked_end <= END <= E.
// Measured on the H200 (Triton 3.6, B=4 H=32 S=2048 D=128 fp16, BLOCK_M=128 BLOCK_N=64,
// 8 warps, 3 stages): 0.4699 ms as written, 0.4257 ms split (1.10x): only the diagonal
// blocks compute the comparison and the select.
//
// Also recognized: the select alone under `if FLAG:` (FLAG constexpr: the first loop drops
// the `if`), a masked tile of zeros that the dot is added to after the select, and a loop
// start bound once to 0.
//
// Entry point: makeCausalSplitPass(). Recognition in CausalSplitPass::run, in the order of
// its refusals: the causal tl.where, its loop, the row and key offsets, the loop bounds, the
// form of the where (what becomes of it when the comparison was its whole condition).
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <stdexcept>
#include <set>
#include <string>
#include <vector>

#include "transform/pass_context.h"
#include "transform/passes/loop_split.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {

// `x[:, None]` (column) or `x[None, :]` (row): the subscripted value, else nullptr.
const Node* broadcastOf(const Node& e, bool column) {
  return broadcastAxis(e) == (column ? 0 : 1) ? &e["value"] : nullptr;
}

bool isZero(const Node& n) {
  if (!isType(n, "Constant")) return false;
  std::string vt = n.value("vt", "");
  return (vt == "int" || vt == "float") && n["value"].get<double>() == 0.0;
}

bool contains(const PassContext& ctx, const Node& outer, const Node& inner) {
  Range o = ctx.range(outer), i = ctx.range(inner);
  return o.begin <= i.begin && i.end <= o.end;
}

// A comparison that reads like a causal one: greater side `A[:, None]`, smaller side
// `B[None, :]` or `start + B[None, :]`. Its parts, else nullopt.
struct CausalCompare {
  const Node* rows = nullptr;  // A[:, None]
  const Node* keys = nullptr;  // the smaller side
};

std::optional<CausalCompare> causalShape(const Node& c) {
  if (!isType(c, "Compare") || c["ops"].size() != 1 || c["comparators"].size() != 1) return std::nullopt;
  const std::string& op = nodeType(c["ops"][0]);
  const Node* greater = nullptr;
  const Node* smaller = nullptr;
  if (op == "GtE" || op == "Gt") {
    greater = &c["left"];
    smaller = &c["comparators"][0];
  } else if (op == "LtE" || op == "Lt") {
    greater = &c["comparators"][0];
    smaller = &c["left"];
  } else {
    return std::nullopt;
  }
  if (!broadcastOf(*greater, true)) return std::nullopt;
  bool keys = broadcastOf(*smaller, false) != nullptr;
  if (isType(*smaller, "BinOp") && isType((*smaller)["op"], "Add")) {
    keys = broadcastOf((*smaller)["left"], false) || broadcastOf((*smaller)["right"], false);
  }
  if (!keys) return std::nullopt;
  return CausalCompare{greater, smaller};
}

class CausalSplitPass : public Pass {
 public:
  CausalSplitPass() {
    info_.name = "causal-split";
    info_.summary = "A causal attention loop over key blocks in two: the blocks below the query block's first row "
                    "without the causal comparison, then the diagonal blocks as written.";
    info_.preconditions = {
        "one tl.where(COND, X, -inf) (or a negative constant fill; also Y + tl.where(COND, 0, -inf)) whose COND, "
        "inline or a name bound just for it, is a conjunction (&) with a conjunct offs_m[:, None] >= "
        "offs_n[None, :] (or >, or the mirrored <= / <)",
        "it lies at the top level of the body of a loop `for start_n in range(LO, END, BLOCK_N)` (or tl.range, "
        "whose options both loops keep) at the top level of the kernel body, with no break, continue or return",
        "offs_m = pid * BLOCK_M + tl.arange(0, ...) once at the top of the body, pid from tl.program_id; offs_n = "
        "start_n + tl.arange(0, BLOCK_N) in the loop, or the conjunct compares with start_n + offs_n[None, :] "
        "where offs_n = tl.arange(0, BLOCK_N)",
        "LO is 0 or a multiple of BLOCK_N (E * BLOCK_N, or a name bound once to that before the loop)",
        "the masked value comes from a tl.dot of the loop (so dropping the select keeps its shape)",
    };
  }
  const PassInfo& info() const override { return info_; }

  PassOutcome run(const PassContext& ctx, const PassArgs&) const override {
    const Node& body = ctx.body();
    std::map<std::string, int> stores = storeCounts(body);

    // 1. The tl.where calls whose condition has a causal-looking conjunct.
    struct Where {
      const Node* call = nullptr;
      const Node* cond = nullptr;       // the condition expression
      const Node* mask_stmt = nullptr;  // `keep = COND`, when the where reads a name
      std::vector<const Node*> conjuncts;
      size_t causal = 0;                // index of the causal conjunct
      CausalCompare compare;
    };
    std::vector<Where> wheres;
    std::vector<const Node*> mask_assigns;
    walk(body, [&](const Node& n) {
      if (isType(n, "Assign") && n["targets"].size() == 1 && isType(n["targets"][0], "Name"))
        mask_assigns.push_back(&n);
      return true;
    });
    walk(body, [&](const Node& n) {
      if (!ctx.isTlCall(n, "where") || n["args"].size() != 3) return true;
      Where w;
      w.call = &n;
      w.cond = &n["args"][0];
      if (isType(*w.cond, "Name")) {
        std::string name = nameOf(*w.cond);
        for (const Node* a : mask_assigns) {
          if (nameOf((*a)["targets"][0]) == name) w.mask_stmt = a;
        }
        if (!w.mask_stmt || countOf(stores, name) != 1) return true;
        w.cond = &(*w.mask_stmt)["value"];
      }
      conjunctsOf(*w.cond, &w.conjuncts);
      int found = 0;
      for (size_t i = 0; i < w.conjuncts.size(); ++i) {
        if (auto c = causalShape(*w.conjuncts[i])) {
          w.causal = i;
          w.compare = *c;
          ++found;
        }
      }
      if (found == 1) wheres.push_back(w);
      return true;
    });
    if (wheres.empty()) {
      return refuse("no tl.where whose condition has a causal conjunct (offs_m[:, None] >= offs_n[None, :])");
    }
    if (wheres.size() > 1) return refuse("several tl.where calls have a causal conjunct; causal-split splits one");
    const Where& w = wheres[0];

    // 2. Its loop: the innermost one around it, at the top level of the kernel body.
    const Node* loop = nullptr;
    walk(body, [&](const Node& n) {
      if ((isType(n, "For") || isType(n, "While")) && contains(ctx, n, *w.call)) loop = &n;
      return true;
    });
    if (!loop) return refuse("the causal tl.where is not inside a loop");
    if (!isType(*loop, "For")) return refuse("the causal tl.where is in a while loop");
    if (ctx.bodyIndex(loop) < 0)
      return refuse("the loop with the causal mask is not at the top level of the kernel body");
    if (!(*loop)["orelse"].empty()) return refuse("the loop has an else clause");
    const Node& loop_body = (*loop)["body"];
    std::string var = nameOf((*loop)["target"]);
    if (var.empty()) return refuse("the loop's target is not a name");
    const Node& it = (*loop)["iter"];
    bool builtin_range = isType(it, "Call") && dottedName(it["func"]) == "range";
    if (!builtin_range && !ctx.isTlCall(it, "range")) return refuse("the loop is not over range(...) or tl.range(...)");
    if (it["args"].size() != 3) return refuse("the loop's range does not give start, end and step positionally");
    const Node& lo = it["args"][0];
    const Node& end = it["args"][1];
    const Node& step = it["args"][2];
    bool stop = false;
    walk(loop_body, [&](const Node& n) {
      const std::string& t = nodeType(n);
      if (t == "Break" || t == "Continue" || t == "Return") stop = true;
      return !stop;
    });
    if (stop) return refuse("the loop has a break, continue or return");
    std::map<std::string, int> loop_stores = storeCounts(loop_body);
    int var_hints = 0;  // start_n = tl.multiple_of(start_n, ...) stays true in both loops
    for (const auto& s : loop_body) {
      if (isType(s, "Assign") && s["targets"].size() == 1 && nameOf(s["targets"][0]) == var &&
          ctx.isTlCall(s["value"], "multiple_of") && !s["value"]["args"].empty() &&
          nameOf(s["value"]["args"][0]) == var) {
        ++var_hints;
      }
    }
    if (countOf(loop_stores, var) != var_hints) return refuse(fmt::format("the loop rebinds its variable '{}'", var));

    // The loop-body statements that hold the where and the mask.
    auto topIndex = [&](const Node& n) -> int {
      for (size_t i = 0; i < loop_body.size(); ++i) {
        if (contains(ctx, loop_body[i], n)) return static_cast<int>(i);
      }
      return -1;
    };
    int where_index = topIndex(*w.call);
    if (where_index < 0) return refuse("the causal tl.where is not in the loop's body");
    // `if FLAG:` around the where alone (FLAG a constexpr parameter, `if IS_CAUSAL:`): the If is
    // the statement that loop 1 drops or edits. Dropping the select is exact in loop 1 whatever
    // FLAG is (the comparison holds there; with FLAG false nothing was selected).
    const Node* where_stmt_p = &loop_body[where_index];
    if (isType(*where_stmt_p, "If") && (*where_stmt_p)["orelse"].empty() && (*where_stmt_p)["body"].size() == 1 &&
        isType((*where_stmt_p)["test"], "Name")) {
      const Param* flag = ctx.kernel->param(nameOf((*where_stmt_p)["test"]));
      if (!flag || !flag->is_constexpr) {
        return refuse("the causal tl.where is under an `if` whose test is not a constexpr parameter");
      }
      where_stmt_p = &(*where_stmt_p)["body"][0];
    }
    const Node& where_stmt = *where_stmt_p;
    bool where_top = isType(where_stmt, "Assign") || isType(where_stmt, "AugAssign");
    if (!where_top) return refuse("the causal tl.where is not in an assignment at the top level of the loop body");
    int cond_index = where_index;
    if (w.mask_stmt) {
      cond_index = topIndex(*w.mask_stmt);
      if (cond_index < 0 || &loop_body[cond_index] != w.mask_stmt || cond_index > where_index) {
        return refuse("the causal mask is not bound at the top level of the loop body, before its tl.where");
      }
      // The mask's name: bound once, read once (by the where).
      std::string mask = nameOf((*w.mask_stmt)["targets"][0]);
      int reads = 0;
      walk(*ctx.kernel->def, [&](const Node& n) {
        if (isType(n, "Name") && n["id"] == mask && n.value("ctx", "") != "Store") ++reads;
        return true;
      });
      if (reads != 1) return refuse(fmt::format("the mask '{}' is used for more than its tl.where", mask));
    }

    // 3. Rows: offs_m = pid * BLOCK_M + tl.arange(0, ...), once, at the top of the body.
    std::string rows_name = nameOf(*broadcastOf(*w.compare.rows, true));
    std::string pid, block_m;
    if (std::string why = rowOffsets(ctx, rows_name, loop, stores, &pid, &block_m); !why.empty()) return refuse(why);

    // 4. Keys: start_n + tl.arange(0, BLOCK_N), BLOCK_N the loop's step.
    if (!isConstantStep(ctx, step)) return refuse("the loop's step is not a constexpr parameter or a positive literal");
    if (std::string why = keyOffsets(ctx, *w.compare.keys, var, loop_body, loop_stores, cond_index, stores, step);
        !why.empty()) {
      return refuse(why);
    }

    // 5. Bounds: LO on the step sequence. The second loop reads END after the first one ran:
    // an expression, or a name the loop rebinds, is bound to a fresh name before the loops
    // (where the original evaluated it), as is an expression for LO (read twice).
    // 0, or a name bound once, at the top of the kernel body, to 0 (`lo = 0`).
    bool lo_zero = intLiteral(lo) == 0;
    if (!lo_zero && !nameOf(lo).empty() && countOf(stores, nameOf(lo)) == 1) {
      for (const auto& st : body) {
        if (isType(st, "Assign") && st["targets"].size() == 1 && nameOf(st["targets"][0]) == nameOf(lo)) {
          lo_zero = intLiteral(st["value"]) == 0;
        }
      }
    }
    if (!lo_zero && !multipleOfStep(ctx, lo, step, loop, stores, 0)) {
      return refuse(fmt::format("the loop starts at '{}', not at 0 or a multiple of {}: the second loop would leave "
                                "the first one's steps",
                                ctx.slice(lo), ctx.slice(step)));
    }
    // 6. The where: a select of the scores, or a mask added to them.
    const Node& fill = (*w.call)["args"][2];
    if (!isNegativeFill(fill)) return refuse("the causal tl.where does not fill with -inf or a negative constant");
    const Node& kept = (*w.call)["args"][1];
    // Loop 1 drops the causal conjunct, and a bounds conjunct `keys < E` with E one of END's
    // bounds (END itself, or seq_len of `end = tl.minimum(..., seq_len)`): its keys stay below
    // unmasked_end <= END <= E there.
    std::vector<bool> dropped(w.conjuncts.size(), false);
    dropped[w.causal] = true;
    const std::string keys_text = ctx.slice(*w.compare.keys);
    const std::set<std::string> bounds = endBounds(ctx, end);
    for (size_t i = 0; i < w.conjuncts.size(); ++i) {
      const Node& c = *w.conjuncts[i];
      if (!isType(c, "Compare") || c["ops"].size() != 1 || c["comparators"].size() != 1) continue;
      const std::string& op = nodeType(c["ops"][0]);
      if ((op == "Lt" && ctx.slice(c["left"]) == keys_text && bounds.count(ctx.slice(c["comparators"][0]))) ||
          (op == "Gt" && ctx.slice(c["comparators"][0]) == keys_text && bounds.count(ctx.slice(c["left"])))) {
        dropped[i] = true;
      }
    }
    bool all_dropped = std::find(dropped.begin(), dropped.end(), false) == dropped.end();
    TextEdits loop1;
    bool shares_line = false;
    auto removeStatement = [&](int i) {
      Range r = statementLines(ctx, loop_body, i);
      if (r.begin == r.end) shares_line = true;
      loop1.emplace_back(r, "");
    };
    const Node& wvalue = where_stmt["value"];
    if (!isZero(kept)) {
      if (!fromDot(ctx, loop_body, where_index, kept, 0) && !zerosTile(ctx, loop_body, where_index, kept, step)) {
        return refuse(notFromDot(ctx, kept));
      }
      if (all_dropped) {
        bool self = isType(where_stmt, "Assign") && where_stmt["targets"].size() == 1 && &wvalue == w.call &&
                    !nameOf(kept).empty() && nameOf(where_stmt["targets"][0]) == nameOf(kept);
        if (self) {
          removeStatement(where_index);
        } else {
          std::string x = ctx.slice(kept);
          loop1.emplace_back(ctx.range(*w.call), &wvalue == w.call ? x : atomText(ctx, kept, x));
        }
      }
    } else {
      // Additive: T += tl.where(C, 0, -inf), or Y + tl.where(C, 0, -inf).
      if (isType(where_stmt, "AugAssign") && isType(where_stmt["op"], "Add") && &wvalue == w.call) {
        if (!fromDot(ctx, loop_body, where_index, where_stmt["target"], 0))
          return refuse(notFromDot(ctx, where_stmt["target"]));
        if (all_dropped) removeStatement(where_index);
      } else {
        const Node* sum = parentOf(where_stmt, w.call);
        if (!sum || !isType(*sum, "BinOp") || !isType((*sum)["op"], "Add")) {
          return refuse("the causal tl.where(COND, 0, ...) is not added to the scores");
        }
        const Node& other = &(*sum)["left"] == w.call ? (*sum)["right"] : (*sum)["left"];
        if (!fromDot(ctx, loop_body, where_index, other, 0)) return refuse(notFromDot(ctx, other));
        if (all_dropped) {
          std::string y = ctx.slice(other);
          bool self = isType(where_stmt, "Assign") && where_stmt["targets"].size() == 1 && &wvalue == sum &&
                      !nameOf(other).empty() && nameOf(where_stmt["targets"][0]) == nameOf(other);
          if (self) {
            removeStatement(where_index);
          } else {
            loop1.emplace_back(ctx.range(*sum), &wvalue == sum ? y : atomText(ctx, other, y));
          }
        }
      }
    }
    if (all_dropped && w.mask_stmt) removeStatement(cond_index);
    if (shares_line) return refuse("the causal tl.where or its mask shares a line with another statement");
    if (!all_dropped) {
      std::vector<std::string> rest;
      size_t kept_count = std::count(dropped.begin(), dropped.end(), false);
      for (size_t i = 0; i < w.conjuncts.size(); ++i) {
        if (dropped[i]) continue;
        std::string c = ctx.slice(*w.conjuncts[i]);
        rest.push_back(kept_count > 1 ? atomText(ctx, *w.conjuncts[i], c) : c);
      }
      std::string joined;
      for (const auto& r : rest) joined += (joined.empty() ? "" : " & ") + r;
      loop1.emplace_back(ctx.range(*w.cond), joined);
    }

    // 7. Emission: the split point, loop 1 (to the split, without the comparison), loop 2.
    std::string tl = ctx.tl();
    std::vector<std::string> before;
    auto boundName = [&](const Node& bound, const std::string& base) {
      std::string name = nameOf(bound);
      if (intLiteral(bound) || (!name.empty() && !countOf(loop_stores, name))) return ctx.slice(bound);
      name = ctx.freshName(base);
      before.push_back(fmt::format("{} = {}", name, ctx.slice(bound)));
      return name;
    };
    std::string lo_text = lo_zero ? ctx.slice(lo) : boundName(lo, "keys_start");
    std::string end_text = boundName(end, "keys_end");
    std::string split = ctx.freshName("unmasked_end");
    std::string diag = fmt::format("({} * {}) // {} * {}", pid, block_m, ctx.slice(step), ctx.slice(step));
    std::string point = fmt::format("{}.minimum({}, {})", tl, diag, end_text);
    if (!lo_zero) point = fmt::format("{}.maximum({}, {})", tl, lo_text, point);
    before.push_back(fmt::format("{} = {}", split, point));
    if (lo_text != ctx.slice(lo)) loop1.emplace_back(ctx.range(lo), lo_text);
    loop1.emplace_back(ctx.range(end), split);
    TextEdits loop2 = {{ctx.range(lo), split}};
    if (end_text != ctx.slice(end)) loop2.emplace_back(ctx.range(end), end_text);
    Range lines = ctx.lineRange(*loop);
    std::string indent = ctx.bodyIndent();
    std::string text = fmt::format("{}# causal-split: key blocks below the first row ({} * {}) need no causal mask\n",
                                   indent, pid, block_m);
    for (const auto& b : before) text += indent + b + "\n";
    text += withEdits(ctx, lines, loop1);
    text += withEdits(ctx, lines, loop2);
    SourceEditor ed(ctx.text().text());
    ed.replace(lines, text);
    PassOutcome out;
    out.applied = true;
    out.source = ed.apply();
    out.notes.push_back(fmt::format("{} starts from {} without the causal comparison, then from {} as written", var,
                                    ctx.slice(lo), split));
    return out;
  }

 private:
  static bool sameValue(const PassContext& ctx, const Node& a, const Node& b) {
    if (auto x = intLiteral(a)) return intLiteral(b) == x;
    return !nameOf(a).empty() && nameOf(a) == nameOf(b) && ctx.kernel->param(nameOf(a));
  }

  // The top-level statement of the kernel body that binds `name` (once in the whole body), else nullptr.
  static const Node* topBinding(const PassContext& ctx, const std::string& name,
                                const std::map<std::string, int>& stores) {
    if (countOf(stores, name) != 1) return nullptr;
    for (const auto& s : ctx.body()) {
      if (isType(s, "Assign") && s["targets"].size() == 1 && nameOf(s["targets"][0]) == name) return &s;
    }
    return nullptr;
  }

  // The extent X of `tl.arange(0, X)`, written inline or bound once at the top of the body.
  static const Node* arangeExtent(const PassContext& ctx, const Node& e, const std::map<std::string, int>& stores) {
    const Node* call = &e;
    if (isType(e, "Name")) {
      const Node* s = topBinding(ctx, nameOf(e), stores);
      if (!s) return nullptr;
      call = &(*s)["value"];
    }
    if (!ctx.isTlCall(*call, "arange") || (*call)["args"].size() != 2 || intLiteral((*call)["args"][0]) != 0)
      return nullptr;
    return &(*call)["args"][1];
  }

  // "" when `rows` is pid * BLOCK_M + tl.arange(0, ...) bound once before the loop (pid and
  // BLOCK_M written out), else why not.
  static std::string rowOffsets(const PassContext& ctx, const std::string& rows, const Node* loop,
                                const std::map<std::string, int>& stores, std::string* pid, std::string* block_m) {
    std::string no = fmt::format("the causal conjunct's rows are not offs_m[:, None] with offs_m = pid * BLOCK_M + "
                                 "tl.arange(0, BLOCK_M) bound once at the top of the body, pid from tl.program_id");
    if (rows.empty()) return no;
    const Node* s = topBinding(ctx, rows, stores);
    if (!s || ctx.bodyIndex(s) > ctx.bodyIndex(loop)) return no;
    const Node& v = (*s)["value"];
    if (!isType(v, "BinOp") || !isType(v["op"], "Add")) return no;
    for (const char* side : {"left", "right"}) {
      const Node& product = v[side];
      const Node& other = v[std::string(side) == "left" ? "right" : "left"];
      if (!arangeExtent(ctx, other, stores) || !isType(product, "BinOp") || !isType(product["op"], "Mult")) continue;
      for (const char* pside : {"left", "right"}) {
        const Node& p = product[pside];
        const Node& b = product[std::string(pside) == "left" ? "right" : "left"];
        std::string pname = nameOf(p);
        bool is_pid = false;
        for (const auto& pv : ctx.pidVars()) is_pid = is_pid || pv.name == pname;
        if (!is_pid || countOf(stores, pname) != 1 || !isConstantStep(ctx, b)) continue;
        *pid = pname;
        *block_m = ctx.slice(b);
        return "";
      }
    }
    return no;
  }

  // "" when `keys` (the smaller side of the conjunct) is offs_n[None, :] with offs_n = start_n
  // + tl.arange(0, STEP) bound in the loop before statement `before`, or start_n + a[None, :]
  // with a = tl.arange(0, STEP); else why not.
  static std::string keyOffsets(const PassContext& ctx, const Node& keys, const std::string& var, const Node& loop_body,
                                const std::map<std::string, int>& loop_stores, int before,
                                const std::map<std::string, int>& stores, const Node& step) {
    std::string no = fmt::format("the causal conjunct's keys are not offs_n[None, :] with offs_n = {} + tl.arange(0, "
                                 "{}) in the loop (nor {} + offs_n[None, :] with offs_n = tl.arange(0, {}))",
                                 var, ctx.slice(step), var, ctx.slice(step));
    // start + tl.arange(0, X) (either order): X, else nullptr.
    auto startPlus = [&](const Node& e, bool broadcast) -> const Node* {
      if (!isType(e, "BinOp") || !isType(e["op"], "Add")) return nullptr;
      for (const char* side : {"left", "right"}) {
        const Node& a = e[side];
        const Node& b = e[std::string(side) == "left" ? "right" : "left"];
        if (nameOf(a) != var) continue;
        const Node* r = broadcast ? broadcastOf(b, false) : &b;
        if (r) return arangeExtent(ctx, *r, stores);
      }
      return nullptr;
    };
    const Node* extent = nullptr;
    if (const Node* k = broadcastOf(keys, false)) {
      std::string name = nameOf(*k);
      if (name.empty() || countOf(loop_stores, name) != 1) return no;
      for (int i = 0; i < before; ++i) {
        const Node& s = loop_body[i];
        if (isType(s, "Assign") && s["targets"].size() == 1 && nameOf(s["targets"][0]) == name)
          extent = startPlus(s["value"], false);
      }
    } else {
      extent = startPlus(keys, true);
    }
    if (!extent) return no;
    if (!sameValue(ctx, *extent, step)) {
      auto e = intLiteral(*extent), s = intLiteral(step);
      if (!(e && s && *e <= *s)) {
        return fmt::format("the key block tl.arange(0, {}) is not the loop's step {}", ctx.slice(*extent),
                           ctx.slice(step));
      }
    }
    return "";
  }

  // LO = E * STEP (either order), an int literal multiple of a literal step, or a name bound
  // once to such before the loop.
  static bool multipleOfStep(const PassContext& ctx, const Node& lo, const Node& step, const Node* loop,
                             const std::map<std::string, int>& stores, int depth) {
    if (auto v = intLiteral(lo); v && intLiteral(step)) return *v % *intLiteral(step) == 0;
    if (isType(lo, "BinOp") && isType(lo["op"], "Mult")) {
      return sameValue(ctx, lo["left"], step) || sameValue(ctx, lo["right"], step);
    }
    if (isType(lo, "Name") && depth == 0) {
      const Node* s = topBinding(ctx, nameOf(lo), stores);
      return s && ctx.bodyIndex(s) < ctx.bodyIndex(loop) && multipleOfStep(ctx, (*s)["value"], step, loop, stores, 1);
    }
    return false;
  }

  // float("-inf"), -float("inf"), -math.inf, or a negated number (-1.0e6).
  static bool isNegativeFill(const Node& n) {
    auto isFloatCall = [](const Node& c, const std::string& s) {
      return isType(c, "Call") && dottedName(c["func"]) == "float" && c["args"].size() == 1 &&
             strLiteral(c["args"][0]) == s;
    };
    if (isFloatCall(n, "-inf")) return true;
    if (!isType(n, "UnaryOp") || !isType(n["op"], "USub")) return false;
    const Node& x = n["operand"];
    if (isFloatCall(x, "inf") || dottedName(x) == "math.inf") return true;
    if (!isType(x, "Constant")) return false;
    std::string vt = x.value("vt", "");
    return (vt == "int" || vt == "float") && x["value"].get<double>() > 0;
  }

  // `s` bound at the top of the loop body, before statement `before`, to a 2-D tile of zeros
  // whose columns are the key step (`s = tl.zeros([BLOCK_M, BLOCK_N], ...)`, the dot added to
  // it after the select): dropping the select keeps its shape.
  static bool zerosTile(const PassContext& ctx, const Node& loop_body, int before, const Node& e, const Node& step) {
    std::string name = nameOf(e);
    if (name.empty()) return false;
    for (int j = before - 1; j >= 0; --j) {
      const Node& s = loop_body[j];
      if (!isType(s, "Assign") || s["targets"].size() != 1 || nameOf(s["targets"][0]) != name) continue;
      const Node& v = s["value"];
      if (!ctx.isTlCall(v, "zeros") || v["args"].empty()) return false;
      const Node& shape = v["args"][0];
      if (!(isType(shape, "List") || isType(shape, "Tuple")) || shape["elts"].size() != 2) return false;
      return ctx.slice(shape["elts"][1]) == ctx.slice(step);
    }
    return false;
  }

  static std::string notFromDot(const PassContext& ctx, const Node& e) {
    return fmt::format("the masked value '{}' does not come from a tl.dot in the loop (without the select its shape "
                       "could change)",
                       ctx.slice(e));
  }

  // The node directly above `target` below `root` (arrays skipped), else nullptr.
  static const Node* parentOf(const Node& root, const Node* target) {
    const Node* found = nullptr;
    std::function<void(const Node&, const Node*)> visit = [&](const Node& n, const Node* parent) {
      if (found) return;
      if (&n == target) {
        found = parent;
        return;
      }
      const Node* up = n.is_object() ? &n : parent;
      if (n.is_object() || n.is_array()) {
        for (const auto& [k, v] : n.items()) {
          if (k != "_p") visit(v, up);
        }
      }
    };
    visit(root, nullptr);
    return found;
  }

  PassInfo info_;
};

}  // namespace

std::unique_ptr<Pass> makeCausalSplitPass() { return std::make_unique<CausalSplitPass>(); }

}  // namespace tf

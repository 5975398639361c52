// tail-split: a loop over blocks whose body compares the block's offsets with the loop's own
// end (the bounds mask of the last, partial block) becomes two loops over the same
// loop-carried values: first the whole blocks, where the comparison holds everywhere and is
// dropped (loads and stores without masks, a select without its condition), then the rest of
// the range, as written (at most one block).
//
//   for start_n in range(LO, END, BLOCK_N):          whole_end = LO + tl.maximum(END - LO, 0)
//       offs_n = start_n + tl.arange(0, BLOCK_N)                     // BLOCK_N * BLOCK_N
//       k = tl.load(p + offs_n[None, :], mask=   ->  for start_n in range(LO, whole_end, BLOCK_N):
//                   offs_n[None, :] < END, ...)        ... k = tl.load(p + offs_n[None, :])
//       s = tl.where(offs_n[None, :] < END, s, -inf)   ... (the select dropped)
//                                                    for start_n in range(whole_end, END, BLOCK_N):
//                                                        ... as written
//
// Why it is exact: the first loop's start_n steps from LO below whole_end, and whole_end - LO
// is a multiple of BLOCK_N no larger than END - LO, so every offset start_n + j (j < BLOCK_N)
// is below start_n + BLOCK_N <= whole_end <= END: the comparison is true everywhere there.
// A mask that is true everywhere loads and stores what no mask does, a select whose condition
// is true keeps its first value. The second loop starts on the first one's step sequence, so
// together they visit the original start_n values in order. (The maximum with 0 keeps an
// empty range empty: END < LO runs no step in either loop.)
// Shapes: a mask broadcasts the pointer, a condition the selected value: both are left only
// where the pointer (or the selected value, or the tl.dot it comes from) already spans the
// offsets' axis, so dropping the comparison keeps every shape.
// Measured on the H200 (Triton 3.6; the suite's attention B=4 H=32 S=2048 D=128 fp16 as
// tritonforge hands it back, 128x64 tiles, 8 warps, 3 stages): 0.642 ms with the key loop's
// bounds comparison, 0.594 ms without (scripts/gpu/conv_probe.py): the select and compare of
// every score cost 7%.
//
// Every loop at the top level of the kernel body that qualifies is split (a row kernel's
// several loops over the columns alike).
//
// Entry point: makeTailSplitPass(). Recognition in TailSplitPass::plan, in the order of its
// refusals: the loop, its offsets, the comparisons and where they are used, their shapes.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "transform/pass_context.h"
#include "transform/passes/loop_split.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {

class TailSplitPass : public Pass {
 public:
  TailSplitPass() {
    info_.name = "tail-split";
    info_.summary = "A loop over blocks whose masks compare the block's offsets with the loop's end in two: the "
                    "whole blocks without the comparison, then the last, partial block as written.";
    info_.preconditions = {
        "a loop `for V in range(LO, END, STEP)` (or tl.range) at the top level of the kernel body, STEP a "
        "constexpr parameter or a positive literal, without break, continue or return, V not rebound (but "
        "for tl.multiple_of hints)",
        "offsets O = V + tl.arange(0, STEP) bound once at the top level of its body, or V + A with A = "
        "tl.arange(0, STEP) bound once in the kernel",
        "comparisons O < E (or O[None, :] / O[:, None], or E > O), E the range's END as written or, for END bound "
        "to tl.minimum(X, Y), a parameter or literal X or Y; for a loop counting blocks one by one (step 1), "
        "A < B - V * X with A = tl.arange(0, X), X constexpr, one B for all (Triton's matmul tutorial)",
        "the comparisons, inline or bound to a name just for them, used only as a load's or store's mask= or a "
        "tl.where's condition, whole or as a conjunct (&)",
        "the pointer of such a load or store, or the value such a tl.where keeps, reads O (or comes from a "
        "tl.dot of the loop), so that dropping the comparison keeps its shape",
    };
  }
  const PassInfo& info() const override { return info_; }

  PassOutcome run(const PassContext& ctx, const PassArgs&) const override {
    std::string first_why;
    SourceEditor ed(ctx.text().text());
    std::set<std::string> taken;  // names this run gives, for the next loop's fresh names
    PassOutcome out;
    for (const auto& st : ctx.body()) {
      if (!isType(st, "For")) continue;
      std::string why;
      std::optional<std::string> text;
      try {
        text = plan(ctx, st, &taken, &why, &out.notes);
      } catch (const std::logic_error&) {
        why = "the comparisons' edits overlap";
      }
      if (!text) {
        if (first_why.empty()) first_why = why;
        continue;
      }
      ed.replace(ctx.lineRange(st), *text);
      out.applied = true;
    }
    if (!out.applied) return refuse(first_why.empty() ? "no loop at the top level of the kernel body" : first_why);
    out.source = ed.apply();
    return out;
  }

 private:
  // The text that replaces `loop`'s lines, else nullopt and `why`.
  std::optional<std::string> plan(const PassContext& ctx, const Node& loop, std::set<std::string>* taken,
                                  std::string* why, std::vector<std::string>* notes) const {
    auto no = [&](std::string reason) -> std::optional<std::string> {
      *why = std::move(reason);
      return std::nullopt;
    };
    // 1. The loop.
    const Node& it = loop["iter"];
    bool builtin_range = isType(it, "Call") && dottedName(it["func"]) == "range";
    if (!builtin_range && !ctx.isTlCall(it, "range")) return no("the loop is not over range(...) or tl.range(...)");
    const size_t nargs = it["args"].size();
    if (nargs < 1 || nargs > 3) return no("the loop's range does not give its bounds positionally");
    if (!loop["orelse"].empty()) return no("the loop has an else clause");
    std::string var = nameOf(loop["target"]);
    if (var.empty()) return no("the loop's target is not a name");
    const Node* lo = nargs >= 2 ? &it["args"][0] : nullptr;
    const Node& end = it["args"][nargs == 1 ? 0 : 1];
    const Node* step_p = nargs == 3 ? &it["args"][2] : nullptr;
    // Counted: the loop counts blocks one by one, the masks compare a block range with what is
    // left (`offs_k < K - k * BLOCK_K`, Triton's matmul tutorial). Stepped: it steps over the
    // offsets themselves (`for k in range(0, K, BLOCK_K)`).
    const bool counted = !step_p || intLiteral(*step_p) == 1;
    if (!counted && !isConstantStep(ctx, *step_p))
      return no("the loop's step is not a constexpr parameter or a positive literal");
    const Node& step = counted ? end : *step_p;  // (unused when counted)
    const Node& body = loop["body"];
    const int loop_at = ctx.bodyIndex(&loop);
    bool stop = false;
    walk(body, [&](const Node& n) {
      const std::string& t = nodeType(n);
      if (t == "Break" || t == "Continue" || t == "Return") stop = true;
      return !stop;
    });
    if (stop) return no("the loop has a break, continue or return");
    std::map<std::string, int> stores = storeCounts(body);
    int var_hints = 0;
    for (const auto& s : body) {
      if (assignedName(s) == var && isType(s, "Assign") && ctx.isTlCall(s["value"], "multiple_of") &&
          !s["value"]["args"].empty() && nameOf(s["value"]["args"][0]) == var) {
        ++var_hints;
      }
    }
    if (countOf(stores, var) != var_hints) return no(fmt::format("the loop rebinds its variable '{}'", var));
    bool end_rebound = false;
    forEachName(end, [&](const Node& n) { end_rebound = end_rebound || countOf(stores, nameOf(n)) > 0; });
    if (end_rebound) return no("the loop body rebinds a name of the loop's end");

    // Block ranges bound once anywhere in the kernel: A = tl.arange(0, X), X the step (or a
    // literal no larger): V + A (either order, A broadcast or not) is an offsets form too.
    // Counted, any block range: A < B - V * X, X its extent.
    std::map<std::string, std::string> aranges;  // name -> extent text
    std::map<std::string, int> kernel_stores = storeCounts(ctx.body());
    walk(ctx.body(), [&](const Node& n) {
      std::string name = assignedName(n);
      if (name.empty() || !isType(n, "Assign") || countOf(kernel_stores, name) != 1) return true;
      const Node* x = arangeExtent(ctx, n["value"]);
      if (x && (counted ? isConstantStep(ctx, *x) : within(ctx, *x, step))) aranges[name] = ctx.slice(*x);
      return true;
    });
    // 2. Offsets: O = V + tl.arange(0, STEP) (or V + A, A such a range bound once in the
    // kernel), once, at the top level of the body.
    std::map<std::string, int> offsets;  // name -> the statement that binds it
    for (size_t i = 0; i < body.size(); ++i) {
      const Node& s = body[i];
      std::string name = assignedName(s);
      if (name.empty() || !isType(s, "Assign") || countOf(stores, name) != 1) continue;
      const Node& v = s["value"];
      if (counted || !isType(v, "BinOp") || !isType(v["op"], "Add")) continue;
      for (const char* side : {"left", "right"}) {
        const Node& a = v[side];
        const Node& r = v[std::string(side) == "left" ? "right" : "left"];
        const Node* extent = arangeExtent(ctx, r);
        bool block = (extent && within(ctx, *extent, step)) || aranges.count(nameOf(r));
        if (nameOf(a) == var && block) offsets[name] = static_cast<int>(i);
      }
    }

    // 3. The comparisons with the loop's end, and names bound to one alone.
    const std::string end_text = ctx.slice(end);
    const std::set<std::string> end_bounds = endBounds(ctx, end);
    if (offsets.empty() && aranges.empty()) {
      if (counted) return no("no block range `tl.arange(0, X)` (X a constexpr) for the loop's masks");
      return no(fmt::format("no offsets `o = {} + tl.arange(0, {})` at the top of the loop body, nor a block "
                            "range added to {} there",
                            var, ctx.slice(step), var));
    }
    auto unbroadcast = [](const Node& e) { return broadcastAxis(e) >= 0 ? &e["value"] : &e; };
    auto offsetsOf = [&](const Node& e) -> std::string {
      std::string n = nameOf(*unbroadcast(e));
      if (offsets.count(n)) return n;
      if (!isType(e, "BinOp") || !isType(e["op"], "Add")) return "";
      for (const char* side : {"left", "right"}) {
        std::string a = nameOf(*unbroadcast(e[side]));
        if (nameOf(e[std::string(side) == "left" ? "right" : "left"]) == var && aranges.count(a)) return a;
      }
      return "";
    };
    // Counted: `B - V * X` (or X * V) with X the block range's extent; the first comparison
    // fixes B and X, which the others must repeat (one split point for all).
    std::string limit, extent;
    auto rest = [&](const Node& e, const std::string& a) -> bool {
      if (!isType(e, "BinOp") || !isType(e["op"], "Sub")) return false;
      const Node& m = e["right"];
      if (!isType(m, "BinOp") || !isType(m["op"], "Mult")) return false;
      bool times = (nameOf(m["left"]) == var && ctx.slice(m["right"]) == aranges[a]) ||
                   (nameOf(m["right"]) == var && ctx.slice(m["left"]) == aranges[a]);
      if (!times) return false;
      bool rebound = false;
      forEachName(e["left"], [&](const Node& n) { rebound = rebound || countOf(stores, nameOf(n)) > 0; });
      if (rebound || mentionsName(e["left"], var)) return false;
      if (limit.empty()) {
        limit = ctx.slice(e["left"]);
        extent = aranges[a];
      }
      return limit == ctx.slice(e["left"]) && extent == aranges[a];
    };
    auto boundsCompare = [&](const Node& c) -> std::string {
      if (!isType(c, "Compare") || c["ops"].size() != 1 || c["comparators"].size() != 1) return "";
      const std::string& op = nodeType(c["ops"][0]);
      const Node* small = op == "Lt" ? &c["left"] : op == "Gt" ? &c["comparators"][0] : nullptr;
      const Node* large = op == "Lt" ? &c["comparators"][0] : op == "Gt" ? &c["left"] : nullptr;
      if (!small) return "";
      if (counted) {
        std::string a = nameOf(*unbroadcast(*small));
        return aranges.count(a) && rest(*large, a) ? a : "";
      }
      return end_bounds.count(ctx.slice(*large)) ? offsetsOf(*small) : "";
    };
    auto topIndex = [&](const Node& n) -> int {
      Range r = ctx.range(n);
      for (size_t i = 0; i < body.size(); ++i) {
        Range b = ctx.range(body[i]);
        if (b.begin <= r.begin && r.end <= b.end) return static_cast<int>(i);
      }
      return -1;
    };
    std::map<std::string, std::pair<int, std::string>> mask_names;  // name -> (statement, O)
    for (size_t i = 0; i < body.size(); ++i) {
      std::string name = assignedName(body[i]);
      if (name.empty() || !isType(body[i], "Assign") || countOf(stores, name) != 1) continue;
      std::string o = boundsCompare(body[i]["value"]);
      if (!o.empty()) mask_names[name] = {static_cast<int>(i), o};
    }
    // Every occurrence, and where it comes after the binding of its offsets (or mask).
    int occurrences = 0;
    std::string late;
    walk(body, [&](const Node& n) {
      std::string o;
      int bound_at = -1;
      if (std::string c = boundsCompare(n); !c.empty()) {
        for (const auto& [m, at] : mask_names) {
          if (&body[at.first]["value"] == &n) return true;  // the binding itself
        }
        o = c;
        bound_at = offsets.count(c) ? offsets[c] : -1;
      } else if (isType(n, "Name") && n.value("ctx", "") != "Store" && mask_names.count(nameOf(n))) {
        o = mask_names[nameOf(n)].second;
        bound_at = mask_names[nameOf(n)].first;
      } else {
        return true;
      }
      ++occurrences;
      if (topIndex(n) <= bound_at) late = ctx.slice(n);
      return true;
    });
    if (occurrences == 0 && counted) {
      return no(fmt::format("no comparison of a block range with what is left of a bound (`offs < B - {} * "
                            "BLOCK`) in the loop",
                            var));
    }
    if (occurrences == 0) {
      return no(fmt::format("no comparison of the block's offsets with the loop's end '{}' in the loop", end_text));
    }
    if (!late.empty()) return no(fmt::format("'{}' is read before its offsets are bound in the loop", late));

    // 4. Where they are used: a load's or store's mask, a tl.where's condition.
    auto isUse = [&](const Node& leaf) -> std::string {
      if (std::string c = boundsCompare(leaf); !c.empty()) return c;
      if (isType(leaf, "Name") && mask_names.count(nameOf(leaf))) return mask_names[nameOf(leaf)].second;
      return "";
    };
    struct Site {
      const Node* call = nullptr;
      const Node* cond = nullptr;  // the mask or condition expression
      std::vector<const Node*> leaves;
      std::vector<bool> dropped;
      std::set<std::string> offsets;
    };
    std::vector<Site> sites;
    int handled = 0;
    walk(body, [&](const Node& n) {
      const Node* cond = nullptr;
      if (ctx.isTlCall(n, "load") || ctx.isTlCall(n, "store")) {
        cond = keywordArg(n, "mask");
      } else if (ctx.isTlCall(n, "where") && n["args"].size() == 3) {
        cond = &n["args"][0];
      }
      if (!cond) return true;
      Site s;
      s.call = &n;
      s.cond = cond;
      conjunctsOf(*cond, &s.leaves);
      bool any = false;
      for (const Node* leaf : s.leaves) {
        std::string o = isUse(*leaf);
        s.dropped.push_back(!o.empty());
        if (!o.empty()) {
          s.offsets.insert(o);
          ++handled;
          any = true;
        }
      }
      if (any) sites.push_back(std::move(s));
      return true;
    });
    if (handled != occurrences) {
      return no(fmt::format("the comparison with '{}' is used elsewhere than as a load's or store's mask= or a "
                            "tl.where's condition",
                            end_text));
    }

    // 5. Shapes, and the first loop's edits.
    // Does `e` (read at body statement `at`) read one of `names`, directly or through names the
    // loop body binds before it?
    std::function<bool(const Node&, int, const std::set<std::string>&, int)> reads =
        [&](const Node& e, int at, const std::set<std::string>& names, int depth) {
          if (depth > 8) return false;
          bool found = false;
          forEachName(e, [&](const Node& n) {
            if (found) return;
            std::string name = nameOf(n);
            if (names.count(name)) {
              found = true;
              return;
            }
            bool in_loop = false;
            for (int j = at - 1; j >= 0 && !in_loop; --j) {
              if (assignedName(body[j]) != name) continue;
              in_loop = true;
              found = isType(body[j], "AugAssign") ? reads(body[j]["value"], j, names, depth + 1) ||
                                                         reads(body[j]["target"], j, names, depth + 1)
                                                   : reads(body[j]["value"], j, names, depth + 1);
            }
            // Bound before the loop (a pointer block advanced in it: `a_ptrs += ...`).
            const Node& top = ctx.body();
            for (int j = loop_at - 1; j >= 0 && !in_loop && !found; --j) {
              if (assignedName(top[j]) != name || !isType(top[j], "Assign")) continue;
              found = reads(top[j]["value"], 0, names, depth + 1);
              break;
            }
          });
          return found;
        };
    TextEdits loop1;
    bool shares_line = false;
    for (const Site& s : sites) {
      const Node& call = *s.call;
      int at = topIndex(call);
      bool all = std::find(s.dropped.begin(), s.dropped.end(), false) == s.dropped.end();
      if (ctx.isTlCall(call, "where")) {
        const Node& kept = call["args"][1];
        if (!fromDot(ctx, body, at, kept) && !reads(kept, at, s.offsets, 0)) {
          return no(fmt::format("the value '{}' that tl.where keeps neither reads the offsets nor comes from a "
                                "tl.dot (without the comparison its shape could change)",
                                ctx.slice(kept)));
        }
        if (all) {
          const Node& stmt = body[at];
          bool self = isType(stmt, "Assign") && &stmt["value"] == &call && assignedName(stmt) == nameOf(kept) &&
                      !nameOf(kept).empty();
          if (self) {
            Range r = statementLines(ctx, body, at);
            if (r.begin == r.end) shares_line = true;
            loop1.emplace_back(r, "");
          } else {
            loop1.emplace_back(ctx.range(call), atomText(ctx, kept, ctx.slice(kept)));
          }
          continue;
        }
      } else {
        if (call["args"].empty()) return no("a masked load or store passes its pointer by keyword");
        const Node& pointer = call["args"][0];
        if (!reads(pointer, at, s.offsets, 0)) {
          return no(fmt::format("the pointer '{}' of a masked load or store does not read the offsets (without the "
                                "mask its shape could change)",
                                ctx.slice(pointer)));
        }
        if (all) {
          loop1.emplace_back(keywordRemoval(ctx, call, "mask"), "");
          if (Range other = keywordRemoval(ctx, call, "other"); other.begin != other.end) loop1.emplace_back(other, "");
          continue;
        }
      }
      std::string joined;
      size_t kept_count = 0;
      for (size_t i = 0; i < s.leaves.size(); ++i) kept_count += !s.dropped[i];
      for (size_t i = 0; i < s.leaves.size(); ++i) {
        if (s.dropped[i]) continue;
        std::string c = ctx.slice(*s.leaves[i]);
        joined += (joined.empty() ? "" : " & ") + (kept_count > 1 ? atomText(ctx, *s.leaves[i], c) : c);
      }
      loop1.emplace_back(ctx.range(*s.cond), joined);
    }
    for (const auto& [name, at] : mask_names) {
      Range r = statementLines(ctx, body, at.first);
      if (r.begin == r.end) shares_line = true;
      loop1.emplace_back(r, "");
    }
    if (shares_line) return no("a dropped select or mask shares a line with another statement");

    // 6. Emission: the end of the whole blocks, loop 1 to it without the comparisons, loop 2.
    auto fresh = [&](const std::string& base) {
      std::string name = ctx.freshName(base);
      for (int i = 2; taken->count(name); ++i) name = ctx.freshName(fmt::format("{}_{}", base, i));
      taken->insert(name);
      return name;
    };
    std::string indent = ctx.bodyIndent();
    std::string tl = ctx.tl();
    std::string before;
    // Read once where the loop read them: an expression or a name the loop rebinds gets a name.
    auto bound = [&](const Node& b, const std::string& base) {
      std::string n = nameOf(b);
      if (intLiteral(b) || (!n.empty() && !countOf(stores, n))) return ctx.slice(b);
      std::string name = fresh(base);
      before += fmt::format("{}{} = {}\n", indent, name, ctx.slice(b));
      return name;
    };
    bool lo_zero = !lo || intLiteral(*lo) == 0;
    std::string lo_text = lo_zero ? "0" : bound(*lo, "blocks_start");
    std::string end_name = isType(end, "Name") || intLiteral(end) ? end_text : bound(end, "blocks_end");
    std::string whole = fresh("whole_end");
    std::string point;
    bool lo_atom = lo_zero || isType(*lo, "Name") || intLiteral(*lo) || lo_text != ctx.slice(*lo);
    if (counted) {
      // Block V is whole where V * X + X <= B, i.e. V < B // X (B >= 0).
      point = fmt::format("{}.minimum({}, {}.maximum({}, 0) // {})", tl, end_name, tl, limit, extent);
      if (!lo_zero) point = fmt::format("{}.maximum({}, {})", tl, lo_text, point);
    } else {
      std::string st = ctx.slice(step);
      point = lo_zero ? fmt::format("{}.maximum({}, 0) // {} * {}", tl, end_name, st, st)
                      : fmt::format("{} + {}.maximum({} - {}, 0) // {} * {}", lo_text, tl, end_name,
                                    lo_atom ? lo_text : "(" + lo_text + ")", st, st);
    }
    before += fmt::format("{}{} = {}\n", indent, whole, point);
    if (lo && !lo_zero && lo_text != ctx.slice(*lo)) loop1.emplace_back(ctx.range(*lo), lo_text);
    loop1.emplace_back(ctx.range(end), whole);
    TextEdits loop2;
    if (lo) {
      loop2.emplace_back(ctx.range(*lo), whole);
      if (end_name != end_text) loop2.emplace_back(ctx.range(end), end_name);
    } else {
      loop2.emplace_back(ctx.range(end), fmt::format("{}, {}", whole, end_name));
    }
    Range lines = ctx.lineRange(loop);
    std::string compared = counted ? fmt::format("{} - {} * {}", limit, var, extent) : end_text;
    std::string text = fmt::format("{}# tail-split: whole blocks of {} need no comparison with {}\n", indent, var,
                                   compared);
    text += before;
    text += withEdits(ctx, lines, loop1);
    text += withEdits(ctx, lines, loop2);
    notes->push_back(fmt::format("{} runs over whole blocks up to {} without comparing with {}, then as written", var,
                                 whole, compared));
    return text;
  }

  // X of `tl.arange(0, X)`, else nullptr.
  static const Node* arangeExtent(const PassContext& ctx, const Node& e) {
    if (!ctx.isTlCall(e, "arange") || e["args"].size() != 2 || intLiteral(e["args"][0]) != 0) return nullptr;
    return &e["args"][1];
  }

  // A block of `extent` offsets stays inside a step: the same text, or literals no larger.
  static bool within(const PassContext& ctx, const Node& extent, const Node& step) {
    auto e = intLiteral(extent), st = intLiteral(step);
    return ctx.slice(extent) == ctx.slice(step) || (e && st && *e <= *st);
  }

  PassInfo info_;
};

}  // namespace

std::unique_ptr<Pass> makeTailSplitPass() { return std::make_unique<TailSplitPass>(); }

}  // namespace tf

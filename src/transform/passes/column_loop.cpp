// column-loop: a row-wise kernel whose block spans the whole row (BLOCK >= the row length)
// becomes one that walks the row BLOCK columns at a time, so that BLOCK can be smaller than
// the row (rows of 64K fp32 values no longer need 64K values in registers).
//
// The body must be straight-line over one row: 1-D values built from tl.arange(0, BLOCK),
// full-row reductions (tl.sum / tl.max / tl.min), scalar arithmetic, stores. Each statement
// that reduces gets a loop before it that accumulates the reduction chunk by chunk (a BLOCK-
// wide accumulator, reduced after the loop), recomputing the row values it needs from the
// loads; the statement then reads the reduced value. Stores of row values go into a final
// loop. Scalars stay where they are. Values are re-read from memory (L2) rather than kept in
// registers.
//
// The online form (form=online, the default where it applies): a row max M = tl.max(E)
// followed by a sum of exponentials of the same values, tl.sum(tl.exp(E - M)) (or exp2),
// is computed in one read of the row, the running sum rescaled whenever the running max
// grows (Milakov and Gimelshein, "Online normalizer calculation for softmax", 2018):
//     m' = max(m, max(E_chunk));  s = s * exp(m - m') + sum(exp(E_chunk - m'));  m = m'
// So softmax becomes two passes over the row (max and sum together, then the writes)
// instead of three. Where the pattern is not there (layer norm), form=online falls back to
// one loop per reduction; form=passes asks for that always.
// Launcher: a BLOCK computed from the row length is capped (`min(..., block)`).
#include <fmt/format.h>

#include <regex>

#include "transform/pass_context.h"
#include "transform/row_analysis.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {

class ColumnLoopPass : public Pass {
 public:
  ColumnLoopPass() {
    info_.name = "column-loop";
    info_.summary = "Rows longer than one block: the row is processed BLOCK columns at a time, one loop per "
                    "reduction and one for the stores, so BLOCK may be smaller than the row.";
    info_.preconditions = {
        "the kernel body is straight-line (no loop, if or return): one row per program",
        "one constexpr block size spans the row: it appears as tl.arange(0, BLOCK) and no program id or loop "
        "steps by it; values are 1-D (no [:, None], reshape)",
        "full-row reductions are tl.sum / tl.max / tl.min over axis 0 (no argmax, scan, method forms)",
        "the row length is a kernel parameter, found from a mask (cols < n) or given as n=",
    };
    info_.params = {
        {"block", PassParamKind::kInt, "4096", false, 16, 65536, true, {},
         "the most columns per step: a BLOCK computed from the row length is capped at it"},
        {"n", PassParamKind::kNames, "", false, 0, 0, false, {}, "the row-length parameter (default: from the mask)"},
        {"form", PassParamKind::kChoice, "online", false, 0, 0, false, {"online", "passes"},
         "online: a max and a sum of exp(x - max) share one read of the row; passes: one loop per reduction"},
        {"fits", PassParamKind::kInt, "0", false, 0, 1 << 22, false, {},
         "0: every row is walked in chunks; a power of two larger than block: rows whose BLOCK is below it keep "
         "the body as written (one read of the row, held in registers) and longer rows are walked in chunks of "
         "block, chosen at compile time (`if BLOCK < fits:`); the launch caps BLOCK at fits"},
    };
    for (auto& p : info_.params) {
      if (p.name == "block") p.search = {"1024", "2048", "4096", "8192"};
    }
  }
  const PassInfo& info() const override { return info_; }

  PassOutcome run(const PassContext& ctx, const PassArgs& args) const override {
    const Kernel& k = *ctx.kernel;
    const Node& body = ctx.body();
    std::string tl = ctx.tl();
    std::string why;
    std::optional<RowBody> rb = analyzeRowBody(ctx, &why);
    if (!rb) return refuse(why);
    const std::string& block = rb->block;
    const std::vector<RowStmt>& stmts = rb->stmts;
    bool any_vector_store = false;
    for (const auto& r : stmts) any_vector_store = any_vector_store || (r.store && r.vector);
    if (!any_vector_store) return refuse("no store of a row value: nothing to loop over");

    // The row length: `X < n` with X a row value.
    std::string n = args.has("n") ? args.names("n")[0] : rowLength(ctx, *rb);
    if (n.empty()) return refuse("cannot tell the row length from the masks (cols < n); give n=PARAM");
    if (!k.param(n) || k.param(n)->is_constexpr) return refuse(fmt::format("'{}' is not a runtime parameter", n));

    const int64_t chunk_cols = args.integer("block"), fits = args.integer("fits");
    if (fits != 0 && ((fits & (fits - 1)) != 0 || fits <= chunk_cols)) {
      return refuse(fmt::format("fits={} must be 0 or a power of two larger than block={}", fits, chunk_cols));
    }

    // Emission.
    SourceEditor ed(ctx.text().text());
    // With `fits`, the body as written and the looped body end up side by side: the looped one
    // is cut out of the edited text between these marks.
    const auto first_stmt = nodePos(body.front());
    const auto last_stmt = nodePos(body.back());
    const Range body_lines{ctx.lineRange(first_stmt->line, first_stmt->end_line).begin,
                           ctx.lineRange(last_stmt->line, last_stmt->end_line).end};
    static constexpr std::string_view kBegin = "#@tf-column-loop-body\n", kEnd = "#@tf-column-loop-end\n";
    if (fits) ed.insert(body_lines.begin, std::string(kBegin));
    std::string indent = ctx.bodyIndent(), u = ctx.indentUnit();
    std::string col = ctx.freshName("col_start");
    std::set<std::string> taken;
    auto fresh = [&](const std::string& base) {
      std::string name = ctx.freshName(base);
      for (int i = 2; taken.count(name); ++i) name = ctx.freshName(fmt::format("{}_{}", base, i));
      taken.insert(name);
      return name;
    };
    std::map<const Node*, std::string> result_of;  // reduction call -> the scalar it became
    std::optional<OnlinePair> online;
    if (args.text("form") != "passes") online = findOnlinePair(ctx, stmts);
    // A row value that rebinds a name from its own earlier scalar value (`P = P + row * n +
    // cols`, P a pointer argument) would offset P again on every replay, and Triton refuses a
    // name that changes type inside a loop: the row value gets a fresh name, which the
    // statements after it read until the name is bound again.
    std::map<const Node*, std::string> renamed;  // statement -> the fresh name it binds
    std::set<std::string> row_names;             // names holding row values before statement i
    for (size_t i = 0; i < stmts.size(); ++i) {
      const RowStmt& r = stmts[i];
      bool was_row = row_names.count(r.target) > 0;
      if (!r.target.empty()) {
        if (r.vector) row_names.insert(r.target);
        else row_names.erase(r.target);
      }
      // A row value rebuilt from a row value (`x = x - m`) replays in order, as written.
      if (!r.vector || r.store || r.target.empty() || was_row || isType(*r.node, "AugAssign")) continue;
      bool reads_itself = false;
      forEachName(r.node->at("value"), [&](const Node& x) { reads_itself = reads_itself || x["id"] == r.target; });
      if (!reads_itself) continue;
      std::string name = fresh(r.target + "_row");
      renamed[r.node] = name;
      for (size_t j = i + 1; j < stmts.size(); ++j) {
        forEachName(stmts[j].node->at("value"), [&](const Node& x) {
          if (x["id"] == r.target) result_of[&x] = name;
        });
        if (stmts[j].target == r.target) break;
      }
    }
    // Statements after the last row value or store that hold no reduction (a scalar load of
    // what the row stores wrote, a barrier, a scalar store) run after the final loop, which
    // is where those stores now happen.
    size_t trailing = stmts.size();
    while (trailing > 0 && !stmts[trailing - 1].vector && stmts[trailing - 1].reductions.empty()) --trailing;
    int loops = 0;
    std::vector<std::string> loop_texts;
    bool first_loop = true;
    int passes = 0;
    for (const auto& r : stmts) passes += r.reductions.empty() ? 0 : 1;
    passes += online ? 0 : 1;
    for (size_t i = 0; i < stmts.size(); ++i) {
      const RowStmt& r = stmts[i];
      Range lines = ctx.lineRange(*r.node);
      if (online && i == online->sum_stmt) {
        // Its sum came out of the online loop: the statement reads it (or moves into the
        // final loop with it, as any row value).
        if (r.vector || r.store) {
          ed.replace(lines, "");
        } else {
          ed.replace(ctx.range(*online->sum_red), result_of.at(online->sum_red));
        }
        continue;
      }
      if (online && i == online->max_stmt) {
        const Node& operand = online->max_red->at("args")[0];
        std::set<size_t> needed;
        collectNeeded(ctx, stmts, i, operand, &needed);
        std::string m = fresh("row_max"), m_new = fresh("row_max_new"), m_safe = fresh("row_max_safe"),
                    sum = fresh("row_sum"), chunk = fresh("row_chunk");
        std::string fn = online->exp_fn;
        std::vector<std::string> lines_out = {
            fmt::format("# column-loop: the row is processed {} columns at a time, in {} passes (max and sum online)",
                        block, passes),
            fmt::format("{} = {}.max({}.full(({},), float(\"-inf\"), dtype={}.float32), axis=0)", m, tl, tl, block, tl),
            fmt::format("{} = {}.sum({}.zeros(({},), dtype={}.float32), axis=0)", sum, tl, tl, block, tl),
            fmt::format("for {} in range(0, {}, {}):", col, n, block)};
        first_loop = false;
        for (size_t j : needed) lines_out.push_back(u + replay(ctx, stmts[j], block, col, result_of, u, renamed));
        // The values as one name (an expression is bound to a fresh one, read twice).
        std::string values = exprText(ctx, operand, block, col, result_of);
        if (isType(operand, "Name")) {
          chunk = values;
        } else {
          lines_out.push_back(u + fmt::format("{} = {}", chunk, values));
        }
        lines_out.push_back(u + fmt::format("{} = {}.maximum({}, {}.max({}, axis=0))", m_new, tl, m, tl, chunk));
        // A chunk of -inf only (masked logits) while the max is still -inf: inf - inf would
        // make the sum NaN where the whole-row form gave exp(-inf - max) = 0.
        lines_out.push_back(u + fmt::format("{} = {}.where({} == float(\"-inf\"), 0.0, {})", m_safe, tl, m_new, m_new));
        lines_out.push_back(u + fmt::format("{} = {} * {}.{}({} - {}) + {}.sum({}.{}({} - {}), axis=0)", sum, sum, tl, fn,
                                            m, m_safe, tl, tl, fn, chunk, m_safe));
        lines_out.push_back(u + fmt::format("{} = {}", m, m_new));
        result_of[online->max_red] = m;
        result_of[online->sum_red] = sum;
        ++loops;
        std::string text = joinLines(lines_out, indent);
        if (r.vector || r.store) {
          ed.replace(lines, text);
        } else {
          ed.insert(lines.begin, text);
          ed.replace(ctx.range(*online->max_red), m);
        }
        continue;
      }
      if (!r.reductions.empty()) {
        // A loop before the statement accumulates its reductions.
        std::vector<std::string> init, step, after;
        std::set<size_t> needed;
        for (const Node* red : r.reductions) {
          const Node& operand = red->at("args")[0];
          collectNeeded(ctx, stmts, i, operand, &needed);
          std::string fn = ctx.tlFunction(*red);
          bool whole_rhs = !r.vector && !r.store && &r.node->at("value") == red;
          std::string base = whole_rhs ? r.target : (fn == "sum" ? "row_sum" : fn == "max" ? "row_max" : "row_min");
          std::string accn = fresh(base + "_acc");
          std::string optext = exprText(ctx, operand, block, col, result_of);
          if (fn == "sum") {
            init.push_back(fmt::format("{} = {}.zeros(({},), dtype={}.float32)", accn, tl, block, tl));
            step.push_back(fmt::format("{} += {}", accn, optext));
          } else {
            init.push_back(fmt::format("{} = {}.full(({},), float(\"{}\"), dtype={}.float32)", accn, tl, block,
                                       fn == "max" ? "-inf" : "inf", tl));
            step.push_back(fmt::format("{} = {}.{}({}, {})", accn, tl, fn == "max" ? "maximum" : "minimum", accn, optext));
          }
          std::string reduced = fmt::format("{}.{}({}, axis=0)", tl, fn, accn);
          if (r.vector || r.store) {
            std::string res = fresh(base);
            after.push_back(fmt::format("{} = {}", res, reduced));
            result_of[red] = res;
          } else {
            result_of[red] = reduced;
          }
        }
        std::vector<std::string> lines_out;
        if (first_loop) {
          lines_out.push_back(fmt::format("# column-loop: the row is processed {} columns at a time, in {} passes", block,
                                          passes));
          first_loop = false;
        }
        for (const auto& x : init) lines_out.push_back(x);
        lines_out.push_back(fmt::format("for {} in range(0, {}, {}):", col, n, block));
        for (size_t j : needed) lines_out.push_back(u + replay(ctx, stmts[j], block, col, result_of, u, renamed));
        for (const auto& x : step) lines_out.push_back(u + x);
        for (const auto& x : after) lines_out.push_back(x);
        ++loops;
        std::string text = joinLines(lines_out, indent);
        if (r.vector || r.store) {
          ed.replace(lines, text);  // the statement itself moves into later loops
        } else {
          ed.insert(lines.begin, text);
          for (const Node* red : r.reductions) {
            bool nested = false;
            for (const Node* other : r.reductions) {
              if (other != red && contains(ctx, *other, *red)) nested = true;
            }
            if (!nested) ed.replace(ctx.range(*red), result_of.at(red));
          }
        }
        continue;
      }
      if (r.vector) ed.replace(lines, "");  // a row value or a store of one: into the loops
    }
    // The final loop: the stores of row values.
    std::set<size_t> needed;
    for (size_t i = 0; i < stmts.size(); ++i) {
      if (!stmts[i].store || !stmts[i].vector) continue;
      needed.insert(i);
      collectNeeded(ctx, stmts, i, stmts[i].node->at("value"), &needed);
    }
    std::vector<std::string> final_lines = {fmt::format("for {} in range(0, {}, {}):", col, n, block)};
    for (size_t j : needed) final_lines.push_back(u + replay(ctx, stmts[j], block, col, result_of, u, renamed));
    for (size_t j = trailing; j < stmts.size(); ++j) {
      final_lines.push_back(std::string(ctx.slice(*stmts[j].node)));
      ed.replace(ctx.lineRange(*stmts[j].node), "");
    }
    auto last = nodePos(body.back());
    ed.insert(ctx.lineRange(last->line, last->end_line).end, joinLines(final_lines, indent));

    if (fits) ed.insert(body_lines.end, std::string(kEnd));
    // Launcher: cap a BLOCK computed from the row.
    int64_t cap = fits ? fits : chunk_cols;
    std::vector<TunableSet> sets = kernelTunables(ctx);
    PassOutcome out;
    for (const auto& set : sets) {
      for (const auto& t : set.items) {
        if (t.param != block) continue;
        if (t.origin == TunableOrigin::kLocalDerived) {
          // (A value set where several assignments join is an inserted line: prefix and suffix.)
          ed.replace(t.target, fmt::format("{}min({}, {}){}", t.insert_prefix, t.expr_text, cap, t.insert_suffix));
        } else if (t.origin == TunableOrigin::kHeuristic) {
          ed.replace(t.target, fmt::format("{}min({}, {})", t.insert_prefix, t.expr_text, cap));
        } else if (t.value && *t.value > cap && t.origin != TunableOrigin::kAutotune) {
          setTunable(ed, t, cap);
        } else if (!t.value && t.origin == TunableOrigin::kLaunchOverride && !t.expr_text.empty()) {
          // Computed at run time (`BLOCK, nw = settings(n)`), passed by name: capped at the launch.
          ed.replace(t.target, fmt::format("min({}, {})", t.expr_text, cap));
        }
      }
    }
    out.applied = true;
    out.source = ed.apply();
    if (fits) {
      // if BLOCK < fits: the body as written (the row fits in one block); else: the loops, in
      // chunks of `block` columns (BLOCK is then the cap, the chunk a literal).
      size_t b = out.source.find(kBegin), e = out.source.find(kEnd);
      if (b == std::string::npos || e == std::string::npos || e < b) return refuse("internal: the looped body was lost");
      std::string looped = out.source.substr(b + kBegin.size(), e - b - kBegin.size());
      looped = std::regex_replace(looped, std::regex("\\b" + block + "\\b"), std::to_string(chunk_cols));
      std::string as_written(ctx.text().slice(body_lines));
      auto shift = [&](const std::string& text) {
        std::string r;
        size_t at = 0;
        while (at < text.size()) {
          size_t nl = text.find('\n', at);
          size_t end = nl == std::string::npos ? text.size() : nl + 1;
          std::string line = text.substr(at, end - at);
          if (line.find_first_not_of(" \t\r\n") != std::string::npos) r += u;
          r += line;
          at = end;
        }
        return r;
      };
      std::string hybrid = fmt::format("{}# column-loop: a row of fewer than {} columns stays in one block, as written;"
                                       " longer rows are walked in chunks of {}\n{}if {} < {}:\n{}{}else:\n{}",
                                       indent, fits, chunk_cols, indent, block, fits, shift(as_written), indent,
                                       shift(looped));
      out.source = out.source.substr(0, b) + hybrid + out.source.substr(e + kEnd.size());
    }
    out.notes.push_back(fmt::format("{} passes over each row{}; {} is now a step, no longer the row length", passes,
                                    online ? " (the max and the sum of exponentials online, in one)" : "", block));
    return out;
  }

 private:
  // A max reduction and a later sum of exponentials of the same row values less that max.
  struct OnlinePair {
    size_t max_stmt = 0, sum_stmt = 0;
    const Node* max_red = nullptr;
    const Node* sum_red = nullptr;
    std::string exp_fn;  // exp or exp2
  };

  // The last statement before `before` that binds `name`, or npos.
  static size_t definitionOf(const std::vector<RowStmt>& stmts, const std::string& name, size_t before) {
    for (size_t j = before; j-- > 0;) {
      if (stmts[j].target == name) return j;
    }
    return std::string::npos;
  }

  // `e` with every name of a row value replaced by its definition, recursively, and without
  // blanks: two expressions with the same expansion compute the same row values. Scalars
  // stay names (collected in `scalars`). nullopt where a row value is updated in place.
  static std::optional<std::string> expand(const PassContext& ctx, const std::vector<RowStmt>& stmts, const Node& e,
                                           size_t limit, std::set<std::string>* scalars, int depth = 0) {
    if (depth > 32) return std::nullopt;
    TextEdits edits;
    bool ok = true;
    forEachName(e, [&](const Node& n) {
      if (!ok) return;
      std::string name = n["id"].get<std::string>();
      size_t j = definitionOf(stmts, name, limit);
      if (j == std::string::npos) return;
      if (!stmts[j].vector) {
        scalars->insert(name);
        return;
      }
      if (!isType(*stmts[j].node, "Assign")) {
        ok = false;
        return;
      }
      auto inner = expand(ctx, stmts, stmts[j].node->at("value"), j, scalars, depth + 1);
      if (!inner) {
        ok = false;
        return;
      }
      edits.emplace_back(ctx.range(n), "(" + *inner + ")");
    });
    if (!ok) return std::nullopt;
    std::string text = sliceWith(ctx, e, edits), out;
    for (char c : text) {
      if (c != ' ' && c != '\t' && c != '\n' && c != '\\') out += c;
    }
    return out;
  }

  // Through names of row values (plain assignments) to the expression they stand for.
  static std::pair<const Node*, size_t> resolve(const std::vector<RowStmt>& stmts, const Node& e, size_t limit) {
    const Node* n = &e;
    for (int hops = 0; hops < 32 && isType(*n, "Name"); ++hops) {
      size_t j = definitionOf(stmts, (*n)["id"].get<std::string>(), limit);
      if (j == std::string::npos || !stmts[j].vector || !isType(*stmts[j].node, "Assign")) break;
      n = &stmts[j].node->at("value");
      limit = j;
    }
    return {n, limit};
  }

  static std::optional<OnlinePair> findOnlinePair(const PassContext& ctx, const std::vector<RowStmt>& stmts) {
    for (size_t i = 0; i < stmts.size(); ++i) {
      if (stmts[i].reductions.size() != 1 || ctx.tlFunction(*stmts[i].reductions[0]) != "max") continue;
      const Node* max_red = stmts[i].reductions[0];
      std::set<std::string> scalars;
      auto values = expand(ctx, stmts, max_red->at("args")[0], i, &scalars);
      if (!values) continue;
      for (size_t j = i + 1; j < stmts.size(); ++j) {
        if (stmts[j].reductions.size() != 1 || ctx.tlFunction(*stmts[j].reductions[0]) != "sum") continue;
        const Node* sum_red = stmts[j].reductions[0];
        auto [call, lim] = resolve(stmts, sum_red->at("args")[0], j);
        if (!isType(*call, "Call") || !call->contains("args") || (*call)["args"].size() != 1) continue;
        std::string fn = ctx.tlFunction(*call);
        if (fn != "exp" && fn != "exp2") continue;
        auto [diff, lim2] = resolve(stmts, (*call)["args"][0], lim);
        if (!isType(*diff, "BinOp") || !isType((*diff)["op"], "Sub")) continue;
        // The right side is the max: the call itself, or the scalar bound to it whole.
        const Node& right = (*diff)["right"];
        bool is_max = &right == max_red;
        if (!is_max && isType(right, "Name")) {
          size_t d = definitionOf(stmts, right["id"].get<std::string>(), lim2);
          is_max = d == i && !stmts[d].vector && isType(*stmts[d].node, "Assign") && &stmts[d].node->at("value") == max_red;
        }
        if (!is_max) continue;
        std::set<std::string> other_scalars;
        auto left = expand(ctx, stmts, (*diff)["left"], lim2, &other_scalars);
        if (!left || *left != *values || other_scalars != scalars) continue;
        // The scalars the values read keep their meaning from the max to the sum.
        bool rebound = false;
        for (size_t k = i + 1; k < j; ++k) rebound = rebound || scalars.count(stmts[k].target) > 0;
        if (rebound) continue;
        return OnlinePair{i, j, max_red, sum_red, fn};
      }
    }
    return std::nullopt;
  }

  static bool contains(const PassContext& ctx, const Node& outer, const Node& inner) {
    Range o = ctx.range(outer), i = ctx.range(inner);
    return o.begin <= i.begin && i.end <= o.end && !(o == i);
  }

  // Indices of the row statements before `at` that `e` needs (through names), transitively.
  static void collectNeeded(const PassContext& ctx, const std::vector<RowStmt>& stmts, size_t at, const Node& e,
                            std::set<size_t>* out) {
    forEachName(e, [&](const Node& n) {
      std::string name = n["id"].get<std::string>();
      for (size_t j = at; j-- > 0;) {
        if (stmts[j].target != name) continue;
        if (stmts[j].vector && !out->count(j)) {
          out->insert(j);
          collectNeeded(ctx, stmts, j, stmts[j].node->at("value"), out);
          if (isType(*stmts[j].node, "AugAssign")) {
            // x += ... reads the previous x too.
            Node self = {{"_t", "Name"}, {"id", name}};
            collectNeeded(ctx, stmts, j, self, out);
          }
        }
        break;
      }
    });
  }

  // The text of `e` with tl.arange(0, BLOCK) offset to the chunk and reductions replaced.
  static std::string exprText(const PassContext& ctx, const Node& e, const std::string& block, const std::string& col,
                              const std::map<const Node*, std::string>& result_of) {
    TextEdits edits;
    std::function<void(const Node&)> visit = [&](const Node& n) {
      if (!n.is_object()) return;
      if (isType(n, "Name")) {
        if (auto it = result_of.find(&n); it != result_of.end()) edits.emplace_back(ctx.range(n), it->second);
        return;
      }
      if (isType(n, "Call")) {
        if (auto it = result_of.find(&n); it != result_of.end()) {
          edits.emplace_back(ctx.range(n), it->second);
          return;
        }
        if (ctx.tlFunction(n) == "arange") {
          edits.emplace_back(ctx.range(n), fmt::format("({} + {})", col, ctx.slice(n)));
          return;
        }
      }
      for (const auto& [key, v] : n.items()) {
        if (key == "_t" || key == "_p") continue;
        if (v.is_object()) visit(v);
        if (v.is_array()) {
          for (const auto& c : v) visit(c);
        }
      }
    };
    visit(e);
    std::string text = sliceWith(ctx, e, edits);
    // `cols = (col_start + tl.arange(0, BLOCK))` reads better without the parentheses.
    if (edits.size() == 1 && edits[0].first == ctx.range(e) && text.front() == '(') text = text.substr(1, text.size() - 2);
    return text;
  }

  static std::string replay(const PassContext& ctx, const RowStmt& r, const std::string& block, const std::string& col,
                            const std::map<const Node*, std::string>& result_of, const std::string& unit,
                            const std::map<const Node*, std::string>& renamed) {
    const Node& s = *r.node;
    std::string text;
    if (r.store) {
      text = exprText(ctx, s["value"], block, col, result_of);
    } else {
      const Node& value = s["value"];
      Range whole = ctx.range(s), v = ctx.range(value);
      auto fresh = renamed.find(&s);
      std::string head = fresh != renamed.end() ? fresh->second + " = "
                                                : std::string(ctx.text().slice(Range{whole.begin, v.begin}));
      text = head + exprText(ctx, value, block, col, result_of);
    }
    return indentFollowingLines(text, unit);
  }

  PassInfo info_;
};

}  // namespace

std::unique_ptr<Pass> makeColumnLoopPass() { return std::make_unique<ColumnLoopPass>(); }

}  // namespace tf

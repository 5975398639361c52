// online-softmax: a loop that finds a row's maximum followed by a loop that sums exp(x - max)
// over the same values becomes one loop that keeps a running maximum and rescales the sum
// when it grows: the row is read once instead of twice (cross-entropy, log-softmax, the first
// two of softmax's three loops).
//
//   for c in range(0, n, B):                 R = <-inf, a scalar>
//       x = load(c)                          for c in range(0, n, B):
//       mx = tl.maximum(mx, x)          ->       x = load(c)
//   R = tl.max(mx, axis=0)                       R_new = tl.maximum(R, tl.max(x, axis=0))
//   acc = zeros                                  R_safe = tl.where(R_new == -inf, 0.0, R_new)
//   for c in range(0, n, B):                     acc = acc * tl.exp(R - R_safe) + tl.exp(x - R_safe)
//       x = load(c)                              R = R_new
//       acc += tl.exp(x - R)
//
// After the loop R is the row maximum and acc what the second loop summed, so what follows
// is unchanged. R_safe keeps a chunk that is all -inf (masked logits) from making inf - inf.
#include <fmt/format.h>

#include "transform/pass_context.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {

std::string opType(const Node& n) { return n.at("op").is_object() ? nodeType(n.at("op")) : std::string(); }

bool mentions(const Node& n, const std::string& name) { return mentionsName(n, name); }

struct Match {
  const Node* loop_a = nullptr;
  const Node* max_stmt = nullptr;  // R = tl.max(MX, axis=0)
  const Node* loop_b = nullptr;
  const Node* acc_stmt = nullptr;  // ACC += tl.exp(E - R)
  const Node* exp_call = nullptr;
  const Node* values = nullptr;    // E
  std::string mx, r, acc, exp_fn;
};

class OnlineSoftmaxPass : public Pass {
 public:
  OnlineSoftmaxPass() {
    info_.name = "online-softmax";
    info_.summary = "A max loop and a sum-of-exp loop over the same values become one loop with a running max.";
    info_.preconditions = {
        "a loop whose only use of MX is `MX = tl.maximum(MX, E)` (its other statements plain assignments), "
        "then `R = tl.max(MX, axis=0)`, then a loop over the same range whose only use of R is "
        "`ACC += tl.exp(E - R)` (or tl.sum of it; tl.exp2 too) with E the same values as the first loop's",
        "ACC starts at zero; MX is read nowhere else; nothing between the loops reads R or MX",
    };
  }
  const PassInfo& info() const override { return info_; }

  PassOutcome run(const PassContext& ctx, const PassArgs&) const override {
    std::string why;
    std::optional<Match> m;
    std::function<void(const Node&)> search = [&](const Node& stmts) {
      for (size_t i = 0; i < stmts.size() && !m; ++i) {
        if (isType(stmts[i], "For")) {
          m = match(ctx, stmts, i, &why);
        }
      }
      for (size_t i = 0; i < stmts.size() && !m; ++i) {
        for (const char* key : {"body", "orelse"}) {
          if (!m && stmts[i].contains(key) && stmts[i][key].is_array() && !isType(stmts[i], "FunctionDef")) {
            search(stmts[i][key]);
          }
        }
      }
    };
    search(ctx.body());
    if (!m) {
      return refuse(why.empty() ? fmt::format("{} has no loop computing a max followed by a loop summing exp(x - max)",
                                              ctx.kernel->name)
                                : why);
    }
    // MX is read nowhere but in its loop and the max statement.
    int reads = 0;
    walk(ctx.body(), [&](const Node& n) {
      if (isType(n, "Name") && n["id"] == m->mx && n["ctx"] == "Load") ++reads;
      return true;
    });
    int expected = 0;
    walk(*m->loop_a, [&](const Node& n) {
      if (isType(n, "Name") && n["id"] == m->mx && n["ctx"] == "Load") ++expected;
      return true;
    });
    walk(*m->max_stmt, [&](const Node& n) {
      if (isType(n, "Name") && n["id"] == m->mx && n["ctx"] == "Load") ++expected;
      return true;
    });
    if (reads != expected) return refuse(fmt::format("'{}' is read after the max is taken", m->mx));

    std::string tl = ctx.tl();
    std::string u = ctx.indentUnit();
    auto fresh = [&](const std::string& base) { return ctx.freshName(base); };
    std::string r_new = fresh(m->r + "_new"), r_safe = fresh(m->r + "_safe");
    SourceEditor ed(ctx.text().text());
    // The first loop and the max statement: the running maximum starts at -inf.
    std::string indent = ctx.text().indentOf(nodePos(*m->loop_a)->line);
    auto last_a = nodePos(*m->max_stmt);
    ed.replace(ctx.lineRange(nodePos(*m->loop_a)->line, last_a->end_line),
               joinLines({fmt::format("# online-softmax: the maximum is kept running in the loop over the row below"),
                          fmt::format("{} = {}.max({}.full((1,), float(\"-inf\"), dtype={}.float32), axis=0)", m->r, tl,
                                      tl, tl)},
                         indent));
    // The accumulation.
    std::string bindent = ctx.text().indentOf(nodePos(*m->acc_stmt)->line);
    std::vector<std::string> lines;
    std::string values = ctx.slice(*m->values);
    if (!isType(*m->values, "Name")) {
      std::string chunk = fresh("chunk");
      lines.push_back(fmt::format("{} = {}", chunk, values));
      values = chunk;
    }
    // The added term as written, reading R_safe for R and the chunk's name for E.
    TextEdits te = {{ctx.range(*m->values), values}};
    const Node& exp_arg = m->exp_call->at("args")[0];
    te.push_back({ctx.range(exp_arg["right"]), r_safe});
    const Node& added = isType(*m->acc_stmt, "AugAssign") ? m->acc_stmt->at("value") : m->acc_stmt->at("value")["right"];
    std::string term = sliceWith(ctx, added, te);
    lines.push_back(fmt::format("{} = {}.maximum({}, {}.max({}, axis=0))", r_new, tl, m->r, tl, values));
    lines.push_back(fmt::format("{} = {}.where({} == float(\"-inf\"), 0.0, {})", r_safe, tl, r_new, r_new));
    lines.push_back(fmt::format("{} = {} * {}.{}({} - {}) + {}", m->acc, m->acc, tl, m->exp_fn, m->r, r_safe, term));
    lines.push_back(fmt::format("{} = {}", m->r, r_new));
    auto ap = nodePos(*m->acc_stmt);
    ed.replace(ctx.lineRange(ap->line, ap->end_line), joinLines(lines, bindent));
    PassOutcome out = appliedEdits(ed, ctx.kernel->name);
    if (!out.applied) return out;
    out.notes.push_back(fmt::format("the loops at lines {} and {} are one: {} is a running maximum, {} rescaled as it "
                                    "grows; the row is read once for both",
                                    nodePos(*m->loop_a)->line, nodePos(*m->loop_b)->line, m->r, m->acc));
    return out;
  }

 private:
  static std::optional<Match> match(const PassContext& ctx, const Node& stmts, size_t i, std::string* why) {
    auto fail = [&](std::string w) -> std::optional<Match> {
      if (why->empty()) *why = std::move(w);
      return std::nullopt;
    };
    const Node& a = stmts[i];
    if (!isRangeCall(ctx, a["iter"]) || !isType(a["target"], "Name") || !a["orelse"].empty()) return std::nullopt;
    Match m;
    m.loop_a = &a;
    const Node& abody = a["body"];
    size_t max_at = abody.size();
    for (size_t j = 0; j < abody.size(); ++j) {
      const Node& s = abody[j];
      if (!isType(s, "Assign") || assignedName(s).empty()) return std::nullopt;  // not a pure max loop
      const Node& v = s["value"];
      if (ctx.isTlCall(v, "maximum") && v["args"].size() == 2) {
        for (int side = 0; side < 2; ++side) {
          const Node& self = v["args"][side];
          if (isType(self, "Name") && self["id"] == assignedName(s)) {
            if (max_at != abody.size()) return fail(fmt::format("line {}: the loop keeps two maxima", nodePos(a)->line));
            max_at = j;
            m.mx = assignedName(s);
            m.values = &v["args"][1 - side];
          }
        }
      }
    }
    if (max_at == abody.size()) return std::nullopt;
    const Node* values_a = m.values;
    size_t values_a_at = max_at;
    for (size_t j = max_at + 1; j < abody.size(); ++j) {
      if (mentions(abody[j], m.mx)) return fail(fmt::format("line {}: the max loop reads '{}' again", nodePos(abody[j])->line, m.mx));
    }
    // R = tl.max(MX[, axis=0])
    if (i + 1 >= stmts.size()) return std::nullopt;
    const Node& ms = stmts[i + 1];
    if (assignedName(ms).empty() || !isType(ms, "Assign")) return fail("the max loop is not followed by R = tl.max(MX, axis=0)");
    const Node& red = ms["value"];
    if (!ctx.isTlCall(red, "max") || red["args"].empty() || !isType(red["args"][0], "Name") || red["args"][0]["id"] != m.mx) {
      return fail("the max loop is not followed by R = tl.max(MX, axis=0)");
    }
    m.max_stmt = &ms;
    m.r = assignedName(ms);
    // The next loop over the same range.
    size_t k = i + 2;
    for (; k < stmts.size(); ++k) {
      if (isType(stmts[k], "For")) break;
      if (mentions(stmts[k], m.r) || mentions(stmts[k], m.mx)) {
        return fail(fmt::format("line {}: '{}' is read between the loops", nodePos(stmts[k])->line, m.r));
      }
    }
    if (k == stmts.size()) return fail("no loop follows the max");
    const Node& b = stmts[k];
    if (!isRangeCall(ctx, b["iter"]) || !isType(b["target"], "Name") || b["target"]["id"] != a["target"]["id"] ||
        ctx.slice(b["iter"]) != ctx.slice(a["iter"]) || !b["orelse"].empty()) {
      return fail(fmt::format("line {}: the loop after the max does not walk the same range with the same variable",
                              nodePos(b)->line));
    }
    m.loop_b = &b;
    const Node& bbody = b["body"];
    size_t acc_at = bbody.size();
    for (size_t j = 0; j < bbody.size(); ++j) {
      if (!mentions(bbody[j], m.r)) continue;
      if (acc_at != bbody.size()) return fail(fmt::format("line {}: the sum loop reads '{}' twice", nodePos(bbody[j])->line, m.r));
      acc_at = j;
    }
    if (acc_at == bbody.size()) return fail(fmt::format("the loop after the max does not read '{}'", m.r));
    const Node& s = bbody[acc_at];
    m.acc_stmt = &s;
    m.acc = assignedName(s);
    const Node* added = nullptr;
    if (isType(s, "AugAssign") && opType(s) == "Add") {
      added = &s["value"];
    } else if (isType(s, "Assign") && !m.acc.empty() && isType(s["value"], "BinOp") && opType(s["value"]) == "Add" &&
               isType(s["value"]["left"], "Name") && s["value"]["left"]["id"] == m.acc) {
      added = &s["value"]["right"];
    }
    if (!added || m.acc.empty()) {
      return fail(fmt::format("line {}: '{}' is not read as ACC += tl.exp(E - {})", nodePos(s)->line, m.r, m.r));
    }
    const Node* e = added;
    if (ctx.isTlCall(*e, "sum") && !e->at("args").empty()) e = &e->at("args")[0];
    std::string fn = ctx.tlFunction(*e);
    if ((fn != "exp" && fn != "exp2") || e->at("args").size() != 1) {
      return fail(fmt::format("line {}: '{}' is not read as ACC += tl.exp(E - {})", nodePos(s)->line, m.r, m.r));
    }
    const Node& arg = e->at("args")[0];
    if (!isType(arg, "BinOp") || opType(arg) != "Sub" || !isType(arg["right"], "Name") || arg["right"]["id"] != m.r) {
      return fail(fmt::format("line {}: the exponent is not E - {}", nodePos(s)->line, m.r));
    }
    m.exp_call = e;
    m.exp_fn = fn;
    m.values = &arg["left"];
    if (mentions(*m.values, m.r) || mentions(*m.values, m.acc)) return fail("the exponent's values read the max or the sum");
    for (size_t j = 0; j < bbody.size(); ++j) {
      if (j != acc_at && assignedName(bbody[j]) == m.acc) return fail(fmt::format("'{}' is assigned twice in the loop", m.acc));
    }
    // The same values in both loops.
    if (canonicalValue(*values_a, abody, values_a_at) != canonicalValue(*m.values, bbody, acc_at)) {
      return fail(fmt::format("line {}: the sum loop's exponent is not taken of the values the max loop compared",
                              nodePos(s)->line));
    }
    // ACC starts at zero: its last assignment before the loop, in this statement list.
    const Node* init = nullptr;
    for (size_t j = k; j-- > 0;) {
      if (assignedName(stmts[j]) == m.acc) {
        init = &stmts[j];
        break;
      }
    }
    if (!init || !isType(*init, "Assign")) return fail(fmt::format("'{}' has no initial value before the loop", m.acc));
    const Node& iv = init->at("value");
    bool zero = ctx.isTlCall(iv, "zeros") ||
                (isType(iv, "Constant") && (iv["vt"] == "int" || iv["vt"] == "float") && iv["value"].get<double>() == 0.0) ||
                (ctx.isTlCall(iv, "full") && iv["args"].size() >= 2 && isType(iv["args"][1], "Constant") &&
                 (iv["args"][1]["vt"] == "int" || iv["args"][1]["vt"] == "float") && iv["args"][1]["value"].get<double>() == 0.0);
    if (!zero) return fail(fmt::format("'{}' does not start at zero", m.acc));
    return m;
  }

  PassInfo info_;
};

}  // namespace

std::unique_ptr<Pass> makeOnlineSoftmaxPass() { return std::make_unique<OnlineSoftmaxPass>(); }

}  // namespace tf

#include "transform/row_analysis.h"

#include <fmt/format.h>

#include <functional>

namespace tf {
namespace {

bool scanRowExpr(const PassContext& ctx, const Node& e, const std::set<std::string>& vectors, const std::string& block,
                 RowStmt* r, std::string* why);

}  // namespace

bool isRowReduction(const std::string& fn) { return fn == "sum" || fn == "max" || fn == "min"; }

bool isRowValue(const PassContext& ctx, const Node& e, const std::set<std::string>& vectors) {
  if (!e.is_object()) return false;
  if (isType(e, "Call")) {
    std::string fn = ctx.tlFunction(e);
    if (isRowReduction(fn)) return false;
    if (fn == "arange") return true;
  }
  if (isType(e, "Name")) return vectors.count(e["id"].get<std::string>()) > 0;
  for (const auto& [key, v] : e.items()) {
    if (key == "_t" || key == "_p") continue;
    if (v.is_object() && isRowValue(ctx, v, vectors)) return true;
    if (v.is_array()) {
      for (const auto& c : v) {
        if (isRowValue(ctx, c, vectors)) return true;
      }
    }
  }
  return false;
}

// The row values as they are when `at` is reached (for the mask search).
std::set<std::string> rowValuesAt(const PassContext& ctx, const std::vector<RowStmt>& stmts, const Node& at) {
  std::set<std::string> v;
  size_t pos = ctx.range(at).begin;
  for (const auto& r : stmts) {
    if (ctx.range(*r.node).begin > pos) break;
    if (r.vector && !r.target.empty()) v.insert(r.target);
  }
  return v;
}

namespace {

// Checks a statement's expression and collects its full-row reductions, innermost first.
bool scanRowExpr(const PassContext& ctx, const Node& e, const std::set<std::string>& vectors, const std::string& block,
                 RowStmt* r, std::string* why) {
  bool ok = true;
  std::function<void(const Node&)> visit = [&](const Node& n) {
    if (!ok || !n.is_object()) return;
    for (const auto& [key, v] : n.items()) {
      if (key == "_t" || key == "_p") continue;
      if (v.is_object()) visit(v);
      if (v.is_array()) {
        for (const auto& c : v) visit(c);
      }
    }
    int line = nodePos(n) ? nodePos(n)->line : 0;
    if (isType(n, "Call")) {
      std::string fn = ctx.tlFunction(n);
      if (fn == "arange") {
        bool zero = !n["args"].empty() && intLiteral(n["args"][0]) == 0;
        if (n["args"].size() != 2 || !zero || ctx.slice(n["args"][1]) != block) {
          *why = fmt::format("line {}: `{}` is not tl.arange(0, {})", line, ctx.slice(n), block);
          ok = false;
        }
        return;
      }
      bool vec_arg = !n["args"].empty() && isRowValue(ctx, n["args"][0], vectors);
      if (isRowReduction(fn) && vec_arg) {
        for (const auto& kw : n["keywords"]) {
          std::string k = kw["arg"].is_string() ? kw["arg"].get<std::string>() : "**";
          if (k != "axis" || !(intLiteral(kw["value"]) == 0)) {
            *why = fmt::format("line {}: `{}` is not a reduction over axis 0", line, ctx.slice(n));
            ok = false;
          }
        }
        if (n["args"].size() > 2 || (n["args"].size() == 2 && !(intLiteral(n["args"][1]) == 0))) {
          *why = fmt::format("line {}: `{}` is not a reduction over axis 0", line, ctx.slice(n));
          ok = false;
        }
        r->reductions.push_back(&n);
        return;
      }
      static const std::set<std::string> other = {"argmax", "argmin", "reduce", "cumsum", "cumprod", "xor_sum",
                                                  "associative_scan", "sort", "reshape", "view", "expand_dims",
                                                  "broadcast_to", "trans", "permute", "flip", "histogram", "dot"};
      if (other.count(fn) && (vec_arg || fn == "dot")) {
        *why = fmt::format("line {}: tl.{} over the row is not handled", line, fn);
        ok = false;
      }
      if (isType(n["func"], "Attribute") && isRowValue(ctx, n["func"]["value"], vectors)) {
        std::string m = n["func"]["attr"].get<std::string>();
        if (m != "to") {
          *why = fmt::format("line {}: the method call .{}() on a row value is not handled", line, m);
          ok = false;
        }
      }
    }
    if (isType(n, "Subscript") && isRowValue(ctx, n["value"], vectors)) {
      *why = fmt::format("line {}: `{}` indexes a row value (2-D values are not handled)", line, ctx.slice(n));
      ok = false;
    }
  };
  visit(e);
  return ok;
}

}  // namespace

std::optional<RowBody> analyzeRowBody(const PassContext& ctx, std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<RowBody> {
    *why = std::move(reason);
    return std::nullopt;
  };
  const Kernel& k = *ctx.kernel;
  const Node& body = ctx.body();
  // The block: the one tile extent, spanning the row.
  std::string block;
  for (const auto& [p, u] : ctx.facts.params) {
    if (!u.tile_extent) continue;
    if (!block.empty()) return fail("more than one constexpr tile extent: not a 1-D row kernel");
    block = p;
  }
  if (block.empty()) return fail(fmt::format("{} has no constexpr block (tl.arange(0, BLOCK))", k.name));
  const ParamUsage& bu = ctx.facts.params.at(block);
  if (bu.pid_scaled || bu.loop_stepped) {
    return fail(fmt::format("{} does not span the row: a program id or a loop steps by it already", block));
  }
  if (!ctx.facts.dots.empty()) return fail("the kernel has a tl.dot: not a row-wise kernel");

  // Statements.
  std::set<std::string> vectors;
  std::vector<RowStmt> stmts;
  for (const auto& s : body) {
    const std::string& t = nodeType(s);
    if (t == "Expr" && isType(s["value"], "Constant")) continue;  // a docstring
    RowStmt r;
    r.node = &s;
    if (t == "Assign" || t == "AugAssign" || t == "AnnAssign") {
      const Node& target = t == "Assign" ? s["targets"][0] : s["target"];
      if ((t == "Assign" && s["targets"].size() != 1) || !isType(target, "Name")) {
        return fail(fmt::format("line {}: only single-name assignments are handled", nodePos(s)->line));
      }
      if (!s["value"].is_object()) return fail("an annotation without a value");
      r.target = target["id"].get<std::string>();
      if (!scanRowExpr(ctx, s["value"], vectors, block, &r, why)) return std::nullopt;
      bool vec = isRowValue(ctx, s["value"], vectors);
      if (t == "AugAssign" && vectors.count(r.target)) vec = true;
      r.vector = vec;
      if (vec) vectors.insert(r.target);
      else vectors.erase(r.target);
    } else if (t == "Expr" && ctx.isTlCall(s["value"], "store")) {
      r.store = true;
      if (!scanRowExpr(ctx, s["value"], vectors, block, &r, why)) return std::nullopt;
      r.vector = isRowValue(ctx, s["value"], vectors);
    } else if (t == "Pass") {
      continue;
    } else if (t == "Expr" && ctx.isTlCall(s["value"], "debug_barrier")) {
      r.barrier = true;  // orders the program's memory accesses; no value
    } else {
      return fail(fmt::format("line {}: a {} statement: the body must be straight-line over one row",
                                nodePos(s)->line, t == "Expr" ? "call" : t));
    }
    stmts.push_back(r);
  }
  RowBody out;
  out.block = block;
  out.stmts = std::move(stmts);
  return out;
}

std::string rowLength(const PassContext& ctx, const RowBody& rb) {
  std::set<std::string> found;
  walk(ctx.body(), [&](const Node& x) {
    if (!isType(x, "Compare") || x["ops"].size() != 1 || !isType(x["ops"][0], "Lt")) return true;
    if (!isRowValue(ctx, x["left"], rowValuesAt(ctx, rb.stmts, x))) return true;
    const Node& r = x["comparators"][0];
    if (isType(r, "Name")) {
      const Param* p = ctx.kernel->param(r["id"].get<std::string>());
      if (p && !p->is_constexpr) found.insert(p->name);
    }
    return true;
  });
  return found.size() == 1 ? *found.begin() : "";
}

}  // namespace tf

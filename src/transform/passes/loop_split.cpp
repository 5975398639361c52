#include "transform/passes/loop_split.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace tf {

std::string nameOf(const Node& n) { return isType(n, "Name") ? n["id"].get<std::string>() : ""; }

int countOf(const std::map<std::string, int>& stores, const std::string& name) {
  auto it = stores.find(name);
  return it == stores.end() ? 0 : it->second;
}

std::string withEdits(const PassContext& ctx, Range whole, TextEdits edits) {
  std::sort(edits.begin(), edits.end(), [](const auto& a, const auto& b) { return a.first.begin < b.first.begin; });
  std::string out;
  size_t at = whole.begin;
  for (const auto& [r, text] : edits) {
    if (r.begin < at || r.end > whole.end) throw std::logic_error("loop split: overlapping edits");
    out += ctx.text().slice(Range{at, r.begin});
    out += text;
    at = r.end;
  }
  out += ctx.text().slice(Range{at, whole.end});
  return out;
}

void conjunctsOf(const Node& e, std::vector<const Node*>* out) {
  if (isType(e, "BinOp") && isType(e["op"], "BitAnd")) {
    conjunctsOf(e["left"], out);
    conjunctsOf(e["right"], out);
    return;
  }
  out->push_back(&e);
}

Range statementLines(const PassContext& ctx, const Node& loop_body, int i) {
  auto p = nodePos(loop_body[i]);
  if (i > 0 && nodePos(loop_body[i - 1])->end_line >= p->line) return {};
  if (i + 1 < static_cast<int>(loop_body.size()) && nodePos(loop_body[i + 1])->line <= p->end_line) return {};
  return ctx.lineRange(p->line, p->end_line);
}

bool fromDot(const PassContext& ctx, const Node& loop_body, int before, const Node& e, int depth) {
  if (depth > 8) return false;
  bool found = false;
  walk(e, [&](const Node& n) {
    if (ctx.isTlCall(n, "dot")) found = true;
    return !found;
  });
  if (found) return true;
  forEachName(e, [&](const Node& n) {
    if (found) return;
    std::string name = n["id"].get<std::string>();
    for (int j = before - 1; j >= 0 && !found; --j) {
      const Node& s = loop_body[j];
      if (isType(s, "Assign") && s["targets"].size() == 1 && assignedName(s) == name) {
        found = fromDot(ctx, loop_body, j, s["value"], depth + 1);
        break;
      }
      if (isType(s, "AugAssign") && assignedName(s) == name) found = fromDot(ctx, loop_body, j, s["value"], depth + 1);
    }
  });
  return found;
}

bool isConstantStep(const PassContext& ctx, const Node& n) {
  if (auto v = intLiteral(n)) return *v > 0;
  if (!isType(n, "Name")) return false;
  const Param* p = ctx.kernel->param(n["id"].get<std::string>());
  return p && p->is_constexpr;
}

std::set<std::string> endBounds(const PassContext& ctx, const Node& end) {
  std::set<std::string> out = {ctx.slice(end)};
  if (!isType(end, "Name")) return out;
  const std::string name = end["id"].get<std::string>();
  std::map<std::string, int> stores = storeCounts(ctx.body());
  if (countOf(stores, name) != 1) return out;
  for (const auto& st : ctx.body()) {
    if (!isType(st, "Assign") || assignedName(st) != name) continue;
    const Node& v = st["value"];
    if (!ctx.isTlCall(v, "minimum") || v["args"].size() != 2) break;
    for (const auto& a : v["args"]) {
      bool param = isType(a, "Name") && !stores.count(a["id"].get<std::string>());
      if (param || intLiteral(a)) out.insert(ctx.slice(a));
    }
  }
  return out;
}

}  // namespace tf

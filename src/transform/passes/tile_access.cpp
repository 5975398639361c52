// The tile accesses of a GEMM-like K loop (tile_access.h).
#include "transform/passes/tile_access.h"

#include <fmt/format.h>

#include <functional>
#include <optional>

namespace tf {

// A pointer parameter's tensor, for the names made after it: "b_ptr" -> "b".
std::string tensorName(const std::string& pointer) {
  bool ptr = pointer.size() > 4 && pointer.compare(pointer.size() - 4, 4, "_ptr") == 0;
  return ptr ? pointer.substr(0, pointer.size() - 4) : pointer;
}


// The signature types of the pointers the dots' operands are loaded from ({} if unknown).
std::set<std::string> operandTypes(const PassContext& ctx, const std::vector<const Node*>& dots) {
  std::set<std::string> out;
  if (ctx.signature.empty()) return out;
  std::set<std::string> names;
  for (const Node* d : dots) {
    for (size_t i = 0; i < 2 && i < d->at("args").size(); ++i) {
      forEachName(d->at("args")[i], [&](const Node& n) { names.insert(n["id"].get<std::string>()); });
    }
  }
  for (const auto& p : ctx.kernel->params) {
    auto sig = ctx.signature.find(p.name);
    if (sig == ctx.signature.end() || !sig->second.is_string()) continue;
    std::string type = sig->second.get<std::string>();
    if (type.rfind("*", 0) != 0) continue;
    std::set<std::string> d = ctx.derivedFrom(p.name);
    bool feeds = false;
    for (const auto& n : names) feeds = feeds || d.count(n);
    if (feeds) out.insert(type);
  }
  return out;
}

// Splits an Add tree into its terms.
static void terms(const Node& e, std::vector<const Node*>* out) {
  if (isType(e, "BinOp") && isType(e["op"], "Add")) {
    terms(e["left"], out);
    terms(e["right"], out);
    return;
  }
  out->push_back(&e);
}

// `v[:, None]` -> (v, 0); `v[None, :]` -> (v, 1).
static std::optional<std::pair<std::string, int>> broadcastIndex(const Node& e) {
  if (!isType(e, "Subscript") || !isType(e["value"], "Name") || !isType(e["slice"], "Tuple")) return std::nullopt;
  const Node& elts = e["slice"]["elts"];
  if (elts.size() != 2) return std::nullopt;
  auto none = [](const Node& x) { return isType(x, "Constant") && x["vt"] == "None"; };
  std::string v = e["value"]["id"].get<std::string>();
  if (isType(elts[0], "Slice") && none(elts[1])) return std::pair{v, 0};
  if (none(elts[0]) && isType(elts[1], "Slice")) return std::pair{v, 1};
  return std::nullopt;
}

// An index of the tile: `v[:, None]`, or one shifted by a scalar, `(k + v[None, :])`.
namespace {
struct IndexTerm {
  std::string name;
  int dim = 0;
  const Node* shift = nullptr;
};
}  // namespace
static std::optional<IndexTerm> indexTerm(const Node& e) {
  if (auto bi = broadcastIndex(e)) return IndexTerm{bi->first, bi->second, nullptr};
  if (!isType(e, "BinOp") || !isType(e["op"], "Add")) return std::nullopt;
  for (auto [idx, s] : {std::pair{"left", "right"}, std::pair{"right", "left"}}) {
    auto bi = broadcastIndex(e[idx]);
    bool scalar = true;
    walk(e[s], [&](const Node& n) {
      scalar = scalar && !isType(n, "Subscript") && !isType(n, "Call");
      return scalar;
    });
    if (bi && scalar) return IndexTerm{bi->first, bi->second, &e[s]};
  }
  return std::nullopt;
}

// Two expressions compared as written, spaces aside.
std::string squeeze(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\\') out += c;
  }
  return out;
}

// The last top-level assignment to `name` before byte `before` (kernel body or loop body).
static const Node* definition(const PassContext& ctx, const std::string& name, size_t before) {
  const Node* found = nullptr;
  walk(ctx.body(), [&](const Node& n) {
    if (isType(n, "Assign") && n["targets"].size() == 1 && isType(n["targets"][0], "Name") &&
        n["targets"][0]["id"] == name && ctx.range(n).end <= before) {
      found = &n;
    }
    return !isType(n, "FunctionDef") || &n == ctx.kernel->def;
  });
  return found;
}

// The value of a name the kernel binds exactly once (no `+=`, no loop over it), bound before
// `before`; nullptr otherwise. A pointer advanced in the loop (`a_ptrs += ...`) is not one.
const Node* boundOnce(const PassContext& ctx, const std::string& name, size_t before) {
  int binds = 0;
  walk(ctx.body(), [&](const Node& n) {
    if (isType(n, "Name") && n["id"] == name && n["ctx"] == "Store") ++binds;
    return true;
  });
  if (binds != 1) return nullptr;
  const Node* d = definition(ctx, name, before);
  return d ? &d->at("value") : nullptr;
}

// An index vector `start + tl.arange(0, T)` (or through one name bound to the arange).
static bool indexVector(const PassContext& ctx, const std::string& v, size_t before, TileAccess* t, int d) {
  const Node* def = definition(ctx, v, before);
  if (!def) return false;
  auto arange = [&](const Node& e) -> bool {
    const Node* call = &e;
    if (isType(e, "Name")) {
      const Node* n = definition(ctx, e["id"].get<std::string>(), ctx.range(*def).begin);
      call = n ? &n->at("value") : nullptr;
    }
    if (!call || !ctx.isTlCall(*call, "arange") || (*call)["args"].size() != 2 ||
        intLiteral((*call)["args"][0]) != 0) {
      return false;
    }
    t->tile[d] = ctx.slice((*call)["args"][1]);
    t->shape_reads.push_back(&(*call)["args"][1]);
    return true;
  };
  const Node& e = def->at("value");
  if (arange(e)) {
    t->offset[d] = "0";
    return true;
  }
  if (!isType(e, "BinOp") || !isType(e["op"], "Add")) return false;
  for (auto [tile, start] : {std::pair{"right", "left"}, std::pair{"left", "right"}}) {
    if (!arange(e[tile])) continue;
    t->offset[d] = ctx.slice(e[start]);
    t->start_reads.push_back(&e[start]);
    return true;
  }
  return false;
}

// A pointer advanced along K, as Triton's tutorial writes it: `p = base + r[:, None] * s0 +
// c[None, :] * s1` before the K loop, read by this load only, and `p += TILE * s` once per
// iteration at the loop body's top level, after the load. Gives the initial value, the
// advance and the loop variable's K offset (`k` for range(0, K, TILE), `k * TILE` for a step
// of 1, which needs the tile: `*step` is left for the caller).
namespace {
struct Advance {
  const Node* init = nullptr;
  const Node* stmt = nullptr;
  std::string var;
  const Node* step = nullptr;  // nullptr: 1
};
}  // namespace

static void shiftIndex(TileAccess* t, int d, const std::string& shift);
static bool advanceAlongK(const PassContext& ctx, const Advance& adv, TileAccess* t, std::string* why);
static bool advancedPointer(const PassContext& ctx, const std::string& name, const Node& loop, size_t load_at,
                            int line, Advance* adv, std::string* why) {
  int binds = 0, reads = 0;
  walk(ctx.body(), [&](const Node& n) {
    if (isType(n, "Name") && n["id"] == name) ++(n["ctx"] == "Store" ? binds : reads);
    return true;
  });
  for (const auto& s : loop["body"]) {
    if (isType(s, "AugAssign") && isType(s["target"], "Name") && s["target"]["id"] == name) adv->stmt = &s;
  }
  const Node* def = definition(ctx, name, ctx.range(loop).begin);
  if (!adv->stmt || !def || binds != 2 || !isType(adv->stmt->at("op"), "Add")) {
    *why = fmt::format("line {}: '{}' is neither bound once nor set before the K loop and advanced in it by `+=`",
                       line, name);
    return false;
  }
  if (reads != 1) {
    *why = fmt::format("line {}: the advanced pointer '{}' is read elsewhere too", line, name);
    return false;
  }
  if (ctx.range(*adv->stmt).begin < load_at) {
    *why = fmt::format("line {}: '{}' is advanced before the load in the K loop", line, name);
    return false;
  }
  bool skips = false;
  walk(loop, [&](const Node& n) {
    skips = skips || isType(n, "Continue") || isType(n, "Break");
    return !skips;
  });
  const Node& it = loop["iter"];
  bool is_range = isType(it, "Call") && ((isType(it["func"], "Name") && it["func"]["id"] == "range") ||
                                         ctx.isTlCall(it, "range"));
  size_t nargs = is_range ? it["args"].size() : 0;
  if (skips || !isType(loop["target"], "Name") || nargs < 1 || nargs > 3 ||
      (nargs >= 2 && intLiteral(it["args"][0]) != 0)) {
    *why = fmt::format("line {}: '{}' is advanced in a K loop that is not `for k in range(0, n[, step])` without "
                       "break or continue",
                       line, name);
    return false;
  }
  adv->init = &def->at("value");
  adv->var = loop["target"]["id"].get<std::string>();
  adv->step = nargs == 3 && intLiteral(it["args"][2]) != 1 ? &it["args"][2] : nullptr;
  return true;
}

// The pointer `base + r[:, None] * s0 + c[None, :] * s1` (or a name bound once to it, or a
// pointer advanced along K in `kloop`), for the access `what` ("load", "store") on line
// `line`. An index may be shifted by a scalar: `(k + c[None, :]) * s1`.
static bool matchTilePointer(const PassContext& ctx, const Node& pointer, size_t before, const char* what, int line,
                             const Node* kloop, TileAccess* t, std::string* why) {
  const Node* ptr = &pointer;
  Advance adv;
  if (isType(*ptr, "Name") && !ctx.kernel->param((*ptr)["id"].get<std::string>())) {
    std::string name = (*ptr)["id"].get<std::string>();
    if (const Node* v = boundOnce(ctx, name, before)) {
      ptr = v;
      before = ctx.range(*v).begin;
    } else if (kloop) {
      if (!advancedPointer(ctx, name, *kloop, before, line, &adv, why)) return false;
      ptr = adv.init;
      before = ctx.range(*adv.init).begin;
    }
  }
  std::string shape_why =
      fmt::format("line {}: the {}'s pointer is not base + rows[:, None] * s0 + cols[None, :] * s1", line, what);
  std::vector<const Node*> ts;
  terms(*ptr, &ts);
  if (ts.size() != 3) {
    *why = shape_why;
    return false;
  }
  bool dims_seen[2] = {false, false};
  for (const Node* term : ts) {
    if (isType(*term, "Name") && ctx.kernel->param((*term)["id"].get<std::string>())) {
      t->base = (*term)["id"].get<std::string>();
      continue;
    }
    // A base moved once from a parameter: `a_base = a_ptr + offset` (a batch's offset).
    if (isType(*term, "Name") && t->base.empty()) {
      const Node* v = boundOnce(ctx, (*term)["id"].get<std::string>(), before);
      if (v && isType(*v, "BinOp") && isType((*v)["op"], "Add")) {
        for (auto [p, o] : {std::pair{"left", "right"}, std::pair{"right", "left"}}) {
          const Node& param = (*v)[p];
          if (!isType(param, "Name") || !ctx.kernel->param(param["id"].get<std::string>())) continue;
          t->base = param["id"].get<std::string>();
          t->base_alias = (*term)["id"].get<std::string>();
          t->base_offset = &(*v)[o];
          break;
        }
        if (!t->base_alias.empty()) continue;
      }
    }
    const Node* idx = term;
    std::string stride = "1";
    if (isType(*term, "BinOp") && isType((*term)["op"], "Mult")) {
      const Node& l = (*term)["left"];
      const Node& r = (*term)["right"];
      if (indexTerm(l) && isType(r, "Name")) {
        idx = &l;
        stride = r["id"].get<std::string>();
      } else if (indexTerm(r) && isType(l, "Name")) {
        idx = &r;
        stride = l["id"].get<std::string>();
      }
    }
    auto it = indexTerm(*idx);
    if (!it || dims_seen[it->dim]) {
      *why = fmt::format("line {}: `{}` is not rows[:, None] * stride or cols[None, :] * stride (the index may be "
                         "shifted by a scalar: (k + cols[None, :]) * stride)",
                         line, ctx.slice(*term));
      return false;
    }
    int d = it->dim;
    dims_seen[d] = true;
    t->stride[d] = stride;
    t->index[d] = it->name;
    if (!indexVector(ctx, it->name, before, t, d)) {
      *why = fmt::format("line {}: '{}' is not start + tl.arange(0, TILE)", line, it->name);
      return false;
    }
    if (it->shift) {
      t->start_reads.push_back(it->shift);
      shiftIndex(t, d, ctx.slice(*it->shift));
    }
  }
  if (t->base.empty() || !dims_seen[0] || !dims_seen[1]) {
    *why = shape_why;
    return false;
  }
  if (adv.stmt) return advanceAlongK(ctx, adv, t, why);
  return true;
}

static void shiftIndex(TileAccess* t, int d, const std::string& shift) {
  t->shift[d] = shift;
  t->offset[d] = t->offset[d] == "0" ? shift : t->offset[d] + " + " + shift;
}

// The dimension the pointer advances along is the one whose tile times stride is the
// advance; the load at iteration k reads the tile shifted by the loop's K offset there.
static bool advanceAlongK(const PassContext& ctx, const Advance& adv, TileAccess* t, std::string* why) {
  int line = nodePos(*adv.stmt)->line;
  std::string by = squeeze(ctx.slice(adv.stmt->at("value")));
  int along = -1;
  for (int d = 0; d < 2; ++d) {
    std::string tile = squeeze(t->tile[d]), stride = squeeze(t->stride[d]);
    bool whole = t->stride[d] == "1" ? by == tile : by == tile + "*" + stride || by == stride + "*" + tile;
    if (whole && t->shift[d].empty()) along = along == -1 ? d : 2;
  }
  if (along < 0 || along > 1) {
    *why = fmt::format("line {}: '{}' advances by `{}`, not by one tile along one dimension (`{} * {}` or "
                       "`{} * {}`)",
                       line, adv.stmt->at("target")["id"].get<std::string>(),
                       ctx.slice(adv.stmt->at("value")), t->tile[0], t->stride[0], t->tile[1], t->stride[1]);
    return false;
  }
  std::string k_off = adv.var + " * " + t->tile[along];
  if (adv.step) {
    if (squeeze(ctx.slice(*adv.step)) != squeeze(t->tile[along])) {
      *why = fmt::format("line {}: the K loop steps by `{}`, neither 1 nor the tile {} the pointer advances by", line,
                         ctx.slice(*adv.step), t->tile[along]);
      return false;
    }
    k_off = adv.var;
  }
  shiftIndex(t, along, k_off);
  t->advance = adv.stmt;
  return true;
}

// The mask `(r[:, None] < E0) & (c[None, :] < E1)` (or a name bound once to it): exactly one
// bound per dimension, each on the pointer's own index vector. Gives the tensor's extents.
static bool matchBoundsMask(const PassContext& ctx, const Node* mask, size_t before, const char* what, int line,
                            TileAccess* t, std::string* why) {
  if (mask && isType(*mask, "Name")) mask = boundOnce(ctx, (*mask)["id"].get<std::string>(), before);
  if (!mask) {
    *why = fmt::format("line {}: the {} has no mask giving the tensor's extent", line, what);
    return false;
  }
  std::vector<const Node*> cmps;
  std::function<void(const Node&)> conj = [&](const Node& e) {
    if (isType(e, "BinOp") && isType(e["op"], "BitAnd")) {
      conj(e["left"]);
      conj(e["right"]);
    } else {
      cmps.push_back(&e);
    }
  };
  conj(*mask);
  for (const Node* c : cmps) {
    auto it = isType(*c, "Compare") && (*c)["ops"].size() == 1 && isType((*c)["ops"][0], "Lt")
                  ? indexTerm((*c)["left"])
                  : std::nullopt;
    if (!it) {
      *why = fmt::format("line {}: the mask term `{}` is not index < extent", line, ctx.slice(*c));
      return false;
    }
    int d = it->dim;
    if (it->name != t->index[d]) {
      *why = fmt::format("line {}: the mask term `{}` bounds '{}', not the {}'s index vector '{}'", line,
                         ctx.slice(*c), it->name, what, t->index[d]);
      return false;
    }
    if (!t->extent[d].empty()) {
      *why = fmt::format("line {}: the mask bounds '{}' twice", line, it->name);
      return false;
    }
    // The index shifted as the pointer's is (`k + c < K`), or the shift moved to the right
    // (`c < K - k`, as the tutorial writes it).
    const Node* extent = &(*c)["comparators"][0];
    std::string shift = it->shift ? squeeze(ctx.slice(*it->shift)) : "", want = squeeze(t->shift[d]);
    if (shift != want) {
      bool moved = shift.empty() && isType(*extent, "BinOp") && isType((*extent)["op"], "Sub") &&
                   squeeze(ctx.slice((*extent)["right"])) == want;
      if (!moved) {
        *why = fmt::format("line {}: the mask term `{}` does not bound the {}'s index `{}{}`", line, ctx.slice(*c),
                           what, t->index[d], want.empty() ? "" : " + " + t->shift[d]);
        return false;
      }
      extent = &(*extent)["left"];
    }
    t->extent[d] = ctx.slice(*extent);
    t->shape_reads.push_back(extent);
  }
  if (t->extent[0].empty() || t->extent[1].empty()) {
    *why = fmt::format("line {}: the mask does not bound both dimensions", line);
    return false;
  }
  return true;
}

static bool parseTileLoad(const PassContext& ctx, const Node& stmt, TileAccess* t, std::string* why) {
  const Node& call = stmt["value"];
  t->stmt = &stmt;
  t->call = &call;
  int line = nodePos(stmt)->line;
  if (call["args"].size() != 1) {
    *why = fmt::format("line {}: the load passes mask / other positionally", line);
    return false;
  }
  for (const auto& kw : call["keywords"]) {
    std::string k = kw["arg"].is_string() ? kw["arg"].get<std::string>() : "**";
    if (k == "mask") continue;
    if (k == "other" && (intLiteral(kw["value"]) == 0 ||
                         (isType(kw["value"], "Constant") && kw["value"]["vt"] == "float" && kw["value"]["value"] == 0.0))) {
      continue;
    }
    *why = fmt::format("line {}: the load passes {}=... (descriptor loads pad with zeros and take no hints)", line, k);
    return false;
  }
  size_t before = ctx.range(stmt).begin;
  return matchTilePointer(ctx, call["args"][0], before, "load", line, t->use, t, why) &&
         matchBoundsMask(ctx, keywordArg(call, "mask"), before, "load", line, t, why);
}

// `tl.store(pointer, value, mask=...)` as one statement, the value of the tile's shape.
bool parseTileStore(const PassContext& ctx, const Node& stmt, TileAccess* t, std::string* why) {
  const Node& call = stmt["value"];
  t->stmt = t->use = &stmt;
  t->call = &call;
  int line = nodePos(stmt)->line;
  if (call["args"].size() != 2) {
    *why = fmt::format("line {}: the store is not tl.store(pointer, value, mask=...)", line);
    return false;
  }
  for (const auto& kw : call["keywords"]) {
    std::string k = kw["arg"].is_string() ? kw["arg"].get<std::string>() : "**";
    if (k == "mask") continue;
    *why = fmt::format("line {}: the store passes {}=... (a descriptor store takes no hints)", line, k);
    return false;
  }
  size_t before = ctx.range(stmt).begin;
  if (!matchTilePointer(ctx, call["args"][0], before, "store", line, nullptr, t, why) ||
      !matchBoundsMask(ctx, keywordArg(call, "mask"), before, "store", line, t, why)) {
    return false;
  }
  if (!t->base_alias.empty()) {
    *why = fmt::format("line {}: '{}' is {} moved by an offset (a descriptor starts at the parameter)", line,
                       t->base_alias, t->base);
    return false;
  }
  // tl.store broadcasts its value to the pointer's shape; a descriptor stores exactly its block.
  t->value = &call["args"][1];
  auto shape = ctx.facts.store_values.find(&call);
  Shape tile = {t->tile[0], t->tile[1]};
  if (shape == ctx.facts.store_values.end()) {
    *why = fmt::format("line {}: the shape of the stored value `{}` is not known", line, ctx.slice(*t->value));
    return false;
  }
  if (shape->second != tile) {
    *why = fmt::format("line {}: the stored value is [{}], not the tile [{}, {}]", line,
                       fmt::join(shape->second, ", "), tile[0], tile[1]);
    return false;
  }
  return true;
}

bool holdsDot(const PassContext& ctx, const Node& s) {
  bool has = false;
  walk(s, [&](const Node& n) {
    has = has || ctx.isTlCall(n, "dot");
    return !has;
  });
  return has;
}

DotLoop findDotLoop(const PassContext& ctx) {
  DotLoop out;
  for (const auto& s : ctx.body()) {
    if (isType(s, "For") && holdsDot(ctx, s)) out.top = out.loop = &s;
  }
  // A persistent kernel's tile loop holds the K loop.
  while (out.loop) {
    const Node* inner = nullptr;
    for (const auto& s : (*out.loop)["body"]) {
      if (isType(s, "For") && holdsDot(ctx, s)) inner = &s;
    }
    if (!inner) break;
    out.loop = inner;
  }
  return out;
}

bool matchLoads(const PassContext& ctx, const std::vector<const Node*>& dots, std::vector<TileAccess>* loads,
                std::string* why, bool moved_bases) {
  DotLoop dl = findDotLoop(ctx);
  if (!dl.loop) {
    *why = "no loop at the top of the kernel body holds the tl.dot";
    return false;
  }
  for (const Node* d : dots) {
    for (size_t i = 0; i < 2 && i < d->at("args").size(); ++i) {
      const Node& a = d->at("args")[i];
      if (!isType(a, "Name")) {
        *why = fmt::format("the dot operand `{}` is not a name bound to a tl.load", ctx.slice(a));
        return false;
      }
      const Node* def = nullptr;
      for (const auto& s : (*dl.loop)["body"]) {
        if (isType(s, "Assign") && s["targets"].size() == 1 && isType(s["targets"][0], "Name") &&
            s["targets"][0]["id"] == a["id"] && ctx.range(s).end <= ctx.range(*d).begin) {
          def = &s;
        }
      }
      if (!def || !ctx.isTlCall(def->at("value"), "load")) {
        *why = fmt::format("the dot operand '{}' is not loaded with tl.load in the K loop", a["id"].get<std::string>());
        return false;
      }
      TileAccess t;
      t.use = dl.loop;
      t.operand = static_cast<int>(i);
      if (!parseTileLoad(ctx, *def, &t, why)) return false;
      if (!moved_bases && !t.base_alias.empty()) {
        *why = fmt::format("'{}' is {} moved by an offset: a descriptor made in the kernel starts at the parameter",
                           t.base_alias, t.base);
        return false;
      }
      loads->push_back(t);
    }
  }
  return true;
}

}  // namespace tf

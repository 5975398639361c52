// The attention recognition (attention_form.h): the four accesses and the key loop from the
// Kernel IR, then the kernel body evaluated over the attention domain (attention_values.h).
#include "transform/passes/attention_form.h"

#include "transform/passes/attention_values.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

namespace tf {
using namespace attention;  // NOLINT: the domain this file reads the kernel with

std::string pythonInt(const KernelIR& kir, const sym::Expr& e) {
  return e ? sym::str(kir.expand(e)) : "";
}

namespace {

// Two integer expressions equal for every value of their variables: the same once simplified,
// or equal at 16 points of positive values drawn at random (sums whose floor divisions and
// remainders cancel do not simplify; they are equal everywhere when equal at these points).
bool equal(const sym::Expr& x, const sym::Expr& y) {
  if (!x || !y || sym::isOpaque(x) || sym::isOpaque(y)) return false;
  if (sym::same(x, y)) return true;
  std::set<std::string> names = sym::vars(x);
  sym::collectVars(y, names);
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (int point = 0; point < 16; ++point) {
    std::map<std::string, int64_t> values;
    for (const auto& n : names) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      values[n] = 1 + static_cast<int64_t>((state >> 33) % 997);
    }
    auto ex = sym::eval(x, sym::envOf(values)), ey = sym::eval(y, sym::envOf(values));
    if (!ex || !ey || *ex != *ey) return false;
  }
  return true;
}

// A second key loop goes on where the first stops, by the same steps, its K and V tiles
// addressed as the first loop's would be at its keys: K (and V) at the first loop's iteration
// x is f(0) + x d, at the second's y g(0) + y d, with step * (g(0) - f(0)) == (start2 - start1) * d.
bool secondLoop(const KernelIR& kir, const AttentionForm& f, std::string* why) {
  const IrLoop& a = *f.loop;
  const IrLoop& b = *f.loop2;
  if (!b.start || !a.stop || !sym::same(kir.expand(b.start), kir.expand(a.stop)) || !b.step ||
      !sym::same(kir.expand(b.step), kir.expand(a.step))) {
    *why = fmt::format("line {}: the second key loop does not start where the first stops, by the same steps",
                       b.loc.line);
    return false;
  }
  auto at = [&](int id, const IrLoop& L, int64_t x) {
    const std::string iter = fmt::format("iter({})", L.id);
    return sym::substitute(kir.expand(kir.accesses[static_cast<size_t>(id)].ptr.offset),
                           [&](const std::string& v) { return v == iter ? sym::num(x) : nullptr; });
  };
  for (auto [one, two] : {std::pair{f.k, f.k2}, std::pair{f.v, f.v2}}) {
    const IrAccess& x = kir.accesses[static_cast<size_t>(one)];
    const IrAccess& y = kir.accesses[static_cast<size_t>(two)];
    bool same = x.ptr.base == y.ptr.base && x.ptr.terms.size() == y.ptr.terms.size() && y.ptr.affine &&
                x.mask == y.mask && x.other == y.other && (x.block_ptr >= 0) == (y.block_ptr >= 0) &&
                x.descriptor == y.descriptor;
    for (size_t i = 0; same && i < x.ptr.terms.size(); ++i) {
      same = x.ptr.terms[i].axis == y.ptr.terms[i].axis && x.ptr.terms[i].wrap == y.ptr.terms[i].wrap &&
             sym::same(kir.expand(x.ptr.terms[i].stride), kir.expand(y.ptr.terms[i].stride)) &&
             sym::same(kir.expand(x.ptr.terms[i].extent), kir.expand(y.ptr.terms[i].extent));
    }
    sym::Expr d = sym::sub(at(one, a, 1), at(one, a, 0));
    same = same && equal(d, sym::sub(at(two, b, 1), at(two, b, 0))) &&
           equal(sym::mul(kir.expand(a.step), sym::sub(at(two, b, 0), at(one, a, 0))),
                 sym::mul(sym::sub(kir.expand(b.start), kir.expand(a.start)), d));
    if (!same) {
      *why = fmt::format("line {}: the second key loop's tile is not the first loop's at its keys", y.loc.line);
      return false;
    }
  }
  return true;
}

// The four accesses: Q and K from the first dot, V from the second, O the one store.
bool findAccesses(const KernelIR& kir, AttentionForm* f, std::string* why) {
  // Two dots in one loop; or two in each of two loops (one helper inlined twice: the keys before
  // the diagonal block, then the diagonal block)
  const bool two_loops = kir.dots.size() == 4 && kir.dots[2].loop >= 0 && kir.dots[2].loop == kir.dots[3].loop &&
                         kir.dots[2].loop != kir.dots[0].loop && kir.dots[2].via == kir.dots[0].via &&
                         kir.dots[3].via == kir.dots[0].via;
  if (kir.dots.size() != 2 && !two_loops) {
    *why = fmt::format("{} dots (attention has two: Q K^T and P V)", kir.dots.size());
    return false;
  }
  const IrDot& qk = kir.dots[0];
  const IrDot& pv = kir.dots[1];
  if (qk.loop < 0 || qk.loop != pv.loop || qk.via != pv.via) {
    *why = "the two dots are not in one loop";
    return false;
  }
  if (two_loops) {
    const IrDot& qk2 = kir.dots[2];
    const IrDot& pv2 = kir.dots[3];
    f->loop2 = &kir.loops[static_cast<size_t>(qk2.loop)];
    f->k2 = qk2.b_access;
    f->v2 = pv2.b_access;
    if (qk2.a_access != qk.a_access || pv2.a_access >= 0 || f->k2 < 0 || f->v2 < 0 || f->loop2->depth != 1 ||
        !(f->loop2->kind == "range" || f->loop2->kind == "tl.range")) {
      *why = "the second key loop's dots are not Q K^T and P V of K and V tiles it loads";
      return false;
    }
  }
  const IrLoop& loop = kir.loops[static_cast<size_t>(qk.loop)];
  if (loop.depth != 1 || !(loop.kind == "range" || loop.kind == "tl.range")) {
    *why = fmt::format("line {}: the key loop is not a range loop at the top of the body", loop.loc.line);
    return false;
  }
  f->loop = &loop;
  f->q = qk.a_access;
  if (f->q < 0) {  // Q computed from its load (scaled, rounded): the one load before the loop
    for (const auto& a : kir.accesses) {
      if (a.kind == AccessKind::kLoad && a.loop < 0) {
        if (f->q >= 0) {
          *why = "two loads before the key loop";
          return false;
        }
        f->q = a.id;
      }
    }
  }
  f->k = qk.b_access;
  f->v = pv.b_access;
  if (f->q < 0 || f->k < 0 || f->v < 0 || pv.a_access >= 0) {
    *why = "the dots' operands are not Q, K (loaded) and P (computed), V (loaded)";
    return false;
  }
  for (const auto& a : kir.accesses) {
    if (a.kind == AccessKind::kStore && a.ptr.terms.size() == 2 && f->o < 0) {
      f->o = a.id;
    } else if (a.kind == AccessKind::kStore && a.ptr.terms.size() == 1 && f->lse < 0 && a.loop < 0 && a.via.empty() &&
               a.guards.empty() && a.ptr.affine && !a.ptr.base.empty() && a.block_ptr < 0 && a.descriptor < 0 &&
               a.ptr.terms[0].wrap.empty()) {
      f->lse = a.id;  // a row vector: the log-sum-exp, if its value says so
    } else if (a.id != f->q && a.id != f->k && a.id != f->v && a.id != f->k2 && a.id != f->v2) {
      *why = fmt::format("line {}: an access besides Q, K, V and the output ({})", a.loc.line, a.text);
      return false;
    }
  }
  if (f->o < 0) {
    *why = "no store";
    return false;
  }
  const IrAccess& q = kir.accesses[static_cast<size_t>(f->q)];
  const IrAccess& o = kir.accesses[static_cast<size_t>(f->o)];
  if (q.loop >= 0 || o.loop >= 0 || kir.accesses[static_cast<size_t>(f->k)].loop != qk.loop ||
      kir.accesses[static_cast<size_t>(f->v)].loop != qk.loop ||
      (f->loop2 && (kir.accesses[static_cast<size_t>(f->k2)].loop != f->loop2->id ||
                    kir.accesses[static_cast<size_t>(f->v2)].loop != f->loop2->id))) {
    *why = "Q is not loaded and the output not stored outside the key loop, or K and V not loaded in it";
    return false;
  }
  std::vector<int> ids = {f->q, f->k, f->v, f->o};
  if (f->loop2) ids.insert(ids.end(), {f->k2, f->v2});
  for (int id : ids) {
    const IrAccess& a = kir.accesses[static_cast<size_t>(id)];
    // K and V are loaded where the dots are (the kernel, or a helper holding the key loop)
    const bool kv = id == f->k || id == f->v || id == f->k2 || id == f->v2;
    if (a.via != (kv ? qk.via : std::vector<std::string>{}) || !a.guards.empty()) {
      *why = fmt::format("line {}: an access inside a helper or under a condition", a.loc.line);
      return false;
    }
    if (a.descriptor >= 0 && !a.ptr.affine) {
      *why = fmt::format("line {}: a tensor descriptor whose block shape, strides or shape are not read", a.loc.line);
      return false;
    }
    if (!a.ptr.affine || a.ptr.base.empty() || a.ptr.terms.size() != 2) {
      *why = fmt::format("line {}: an address that is not a pointer parameter plus an offset and two index terms",
                         a.loc.line);
      return false;
    }
    if (a.block_ptr >= 0 && (!a.boundary_check.empty() || !a.padding_option.empty())) {
      *why = fmt::format("line {}: a block pointer with a boundary check that is not a mask of its tile (a load "
                         "without padding_option=\"zero\", or axes not read)",
                         a.loc.line);
      return false;
    }
    if (!a.other.empty() && a.other != "0.0" && a.other != "0" && a.other != "0." ) {
      *why = fmt::format("line {}: masked lanes load {}, not 0", a.loc.line, a.other);
      return false;
    }
  }
  // Q, V and the output are [rows, head] tiles: the head dimension is their axis 1, of one
  // extent; its stride must be 1 (a parameter's value is checked by the route on each call).
  sym::Expr head;
  auto headTerm = [&](const IrAccess& a, int axis) -> const IndexTerm* {
    for (const auto& t : a.ptr.terms) {
      if (t.axis == axis) return &t;
    }
    return nullptr;
  };
  for (int id : {f->q, f->v, f->o}) {
    const IrAccess& a = kir.accesses[static_cast<size_t>(id)];
    const IndexTerm* t = headTerm(a, 1);
    bool ok = t && (!head || sym::same(kir.expand(head), kir.expand(t->extent)));
    auto unit = t ? sym::constant(t->stride) : std::nullopt;
    if (!ok || (unit && *unit != 1) || (!unit && sym::isOpaque(t->stride))) {
      *why = fmt::format("line {}: the tile is not [rows, head] with the head dimension contiguous", a.loc.line);
      return false;
    }
    if (!head) head = t->extent;
    if (!unit) f->head_strides.push_back(t->stride);
  }
  // K: the axis of the head's extent says how the tile is loaded ([keys, head] or [head, keys]).
  const IrAccess& k = kir.accesses[static_cast<size_t>(f->k)];
  int kd = -1;
  for (const auto& t : k.ptr.terms) {
    if (sym::same(kir.expand(t.extent), kir.expand(head))) kd = kd < 0 ? t.axis : -2;
  }
  if (kd == -2) {  // [head, head]: the unit stride tells
    kd = -1;
    for (const auto& t : k.ptr.terms) {
      if (sym::constant(t.stride) == 1) kd = t.axis;
    }
  }
  if (kd >= 0) {
    const IndexTerm* t = headTerm(k, kd);
    auto unit = sym::constant(t->stride);
    if ((unit && *unit != 1) || (!unit && sym::isOpaque(t->stride))) kd = -1;
    else if (!unit) f->head_strides.push_back(t->stride);
  }
  f->k_rows = kd == 1;
  f->head_axis_k = kd;
  // The loop visits key tiles from 0 by the K tile's keys.
  sym::Expr keys;
  for (const auto& t : k.ptr.terms) {
    if (t.axis != kd) keys = t.extent;
  }
  if (kd < 0 || !keys) {
    *why = fmt::format("line {}: K's head dimension is not contiguous", k.loc.line);
    return false;
  }
  if (sym::constant(loop.start) != 0 || !loop.step || !sym::same(kir.expand(loop.step), kir.expand(keys))) {
    *why = fmt::format("line {}: the key loop does not step from 0 by the K tile's keys", loop.loc.line);
    return false;
  }
  if (f->loop2 && !secondLoop(kir, *f, why)) return false;
  // Masks: bounds of the row (Q, output) or key (K, V) axis only, each part understood.
  for (int id : ids) {
    const IrAccess& a = kir.accesses[static_cast<size_t>(id)];
    if (a.mask.empty()) continue;
    size_t comparisons = 0;
    for (size_t at = 0; at < a.mask.size(); ++at) {
      char c = a.mask[at];
      if (c == '<' || c == '>' || ((c == '=' || c == '!') && at + 1 < a.mask.size() && a.mask[at + 1] == '=')) {
        ++comparisons;
        if (at + 1 < a.mask.size() && a.mask[at + 1] == '=') ++at;
      }
    }
    int dim = id == f->k || id == f->k2 ? f->head_axis_k : 1;
    bool ok = comparisons == a.mask_bounds.size() && a.mask.find('|') == std::string::npos;
    for (const auto& b : a.mask_bounds) ok = ok && b.axis >= 0 && b.axis != dim && b.bound && b.index_offset;
    if (!ok) {
      *why = fmt::format("line {}: a mask other than bounds of the rows or keys ({})", a.loc.line, a.mask);
      return false;
    }
  }
  return true;
}


// One reading of a kernel body as attention: the statements before the loop, the loop's
// carried values and body, the stores after it, each step refusing with `why`. The key loop
// may sit in a @triton.jit helper the body calls (`acc, l_i, m_i = _inner(acc, l_i, m_i, q,
// ...)`): the helper's statements are read in a scope of their own, its parameters bound to the
// call's values and what it returns to the call's targets.
class Reading {
 public:
  Reading(const PassContext& ctx, const KernelIR& kir, AttentionForm& f, std::string* why)
      : ctx(ctx), kir(kir), f(f), ev(ctx, kir, f), why(why) {}

  bool run() {
    if (!block(ctx.body())) return false;
    if (!loop) return *why = "the key loop is not a statement of the kernel's body or of a helper it calls", false;
    if (f.loop2 && segment != 2) return *why = "the second key loop is not read", false;
    if (!stored) return *why = "the output is not stored by a tl.store statement after the loop", false;
    if (f.lse >= 0 && !lse_stored) return *why = "a second store", false;
    return rows();
  }

 private:
  const PassContext& ctx;
  const KernelIR& kir;
  AttentionForm& f;
  Evaluator ev;
  std::string* why;
  const Node* loop = nullptr;
  std::string m, l, acc;    // the carried running max, running sum and accumulator
  Val pv;                   // the accumulator's value at the end of the loop
  bool stored = false, lse_stored = false;
  int segment = 0;                        // key loops read (two: the second goes on with the first's softmax)
  Val pv1;                                // the accumulator at the end of the first of two
  int depth = 0;                          // helpers being read
  std::optional<std::vector<Val>> returned;  // what the helper being read returned

  static std::string target(const Node& st) {
    if (isType(st, "Assign") && st["targets"].size() == 1 && isType(st["targets"][0], "Name")) {
      return st["targets"][0]["id"];
    }
    if ((isType(st, "AugAssign") || isType(st, "AnnAssign")) && isType(st["target"], "Name")) return st["target"]["id"];
    return "";
  }

  static bool isDoc(const Node& st) {
    return isType(st, "Expr") && isType(st["value"], "Constant") && st["value"]["vt"] == "str";
  }

  Val value(const Node& st) {
    // `x op= y` is `x = x op y` over the domain (acc *= alpha[:, None]; acc += tl.dot(p, v); qk += ...)
    if (isType(st, "AugAssign")) {
      std::string name = target(st);
      const std::string& op = nodeType(st["op"]);
      if (auto it = ev.env.find(name); it != ev.env.end() && it->second.k == VK::kScalar &&
                                       (op == "Mult" || op == "Div" || op == "Add" || op == "Sub")) {
        Val b = ev.eval(st["value"]);  // `qk_scale *= 1.44269504`, `lo += BLOCK_M`: scalar arithmetic
        if (b.k != VK::kScalar) return unknown(fmt::format("line {}: '{}'", ev.line(st), ctx.slice(st).substr(0, 60)));
        Val v = it->second;
        if (op == "Mult") {
          v.factors.insert(v.factors.end(), b.factors.begin(), b.factors.end());
          v.isym = v.isym && b.isym ? sym::mul(v.isym, b.isym) : nullptr;
        } else if (op == "Div") {
          v.factors.push_back(reciprocal(b.factors));
          v.isym = nullptr;
        } else {
          v.isym = v.isym && b.isym ? (op == "Add" ? sym::add(v.isym, b.isym) : sym::sub(v.isym, b.isym)) : nullptr;
          v.factors = {v.isym ? "(" + pythonInt(kir, v.isym) + ")" : "<unknown>"};
        }
        return v;
      }
      Val v = ev.combine(nodeType(st["op"]), ev.env.count(name) ? ev.env[name] : Val{}, ev.eval(st["value"]),
                         st["value"], nullptr);
      if (v.k == VK::kUnknown && v.why.empty()) {
        v.why = fmt::format("line {}: '{}'", ev.line(st), ctx.slice(st).substr(0, 60));
      }
      return v;
    }
    if (st["value"].is_null()) return unknown("");
    return ev.eval(st["value"]);
  }

  bool block(const Node& stmts) {
    for (const auto& st : stmts) {
      if (returned) break;
      if (!statement(st)) return false;
    }
    return true;
  }

  // The @triton.jit helper of this module a call names, or null.
  const Kernel* helperOf(const Node& v) const {
    if (!isType(v, "Call") || !isType(v["func"], "Name")) return nullptr;
    const Kernel* h = ctx.ir->kernel(v["func"]["id"].get<std::string>());
    return h && h != ctx.kernel && h->def && !h->home ? h : nullptr;
  }

  // A value bound to a helper's parameter: a constexpr mode's integer (`4 - STAGE`) where the
  // form fixes it, the value otherwise.
  Val argument(const Node& a) {
    std::string w;
    if (auto c = ev.constInt(a, false, &w); c && !isType(a, "Name")) {
      Val v;
      v.k = VK::kScalar;
      v.isym = sym::num(*c);
      v.factors = {fmt::format("({})", *c)};
      return v;
    }
    return ev.eval(a);
  }

  // `targets = helper(args)`: the helper read in a scope of its own.
  bool inlineCall(const Node& call, const Kernel& h, std::vector<Val>* results) {
    if (depth >= 4) return *why = fmt::format("line {}: helpers nested deeper than 4", ev.line(call)), false;
    std::map<std::string, Val> scope;
    const Node& args = call["args"];
    for (size_t i = 0; i < h.params.size(); ++i) {
      const Param& p = h.params[i];
      const Node* a = i < args.size() ? &args[i] : keywordArg(call, p.name.c_str());
      if (!a) a = p.default_value;
      scope[p.name] = a ? argument(*a) : unknown(fmt::format("line {}: no value for '{}'", ev.line(call), p.name));
    }
    std::swap(scope, ev.env);
    ++depth;
    auto outer = std::move(returned);
    returned.reset();
    bool ok = block(h.def->at("body"));
    std::optional<std::vector<Val>> got = std::move(returned);
    returned = std::move(outer);
    --depth;
    std::swap(scope, ev.env);
    if (!ok) return false;
    if (!got) return *why = fmt::format("line {}: {} returns nothing", ev.line(call), h.name), false;
    *results = *got;
    return true;
  }

  bool assignTargets(const Node& t, std::vector<Val> vals, int line) {
    if (isType(t, "Name") && vals.size() == 1) {
      ev.env[t["id"].get<std::string>()] = vals[0];
      return true;
    }
    if ((isType(t, "Tuple") || isType(t, "List")) && t["elts"].size() == vals.size() &&
        std::all_of(t["elts"].begin(), t["elts"].end(), [](const Node& e) { return isType(e, "Name"); })) {
      for (size_t i = 0; i < vals.size(); ++i) ev.env[t["elts"][i]["id"].get<std::string>()] = vals[i];
      return true;
    }
    *why = fmt::format("line {}: an assignment the attention reading does not take", line);
    return false;
  }

  bool statement(const Node& st) {
    if (isDoc(st) || isType(st, "Pass")) return true;
    // `if FLAG:` / `if STAGE == 2:` on constexprs: the branch this form's values take
    if (isType(st, "If")) {
      std::optional<bool> on = ev.flagTest(st["test"], why);
      if (!on) return false;
      return block(*on ? st["body"] : st["orelse"]);
    }
    if (isType(st, "For")) {
      auto p = nodePos(st);
      const IrLoop* L = segment == 0 ? f.loop : segment == 1 ? f.loop2 : nullptr;
      if (!L || !p || p->line != L->loc.line) {
        return *why = fmt::format("line {}: a loop other than the key loop", ev.line(st)), false;
      }
      loop = &st;
      ++segment;
      ev.cur_loop = L->id;
      ev.after_loop = false;
      bool ok = carried() && softmax() && afterLoop();
      ev.cur_loop = -1;
      return ok;
    }
    if (isType(st, "Expr") && (ctx.isTlCall(st["value"], "store") || ev.descriptorAccess(st["value"], "store") >= 0)) {
      return store(st);
    }
    if (isType(st, "Expr") && isType(st["value"], "Call") && ctx.isTlCall(st["value"], "static_assert")) return true;
    if (isType(st, "Return")) {
      if (depth == 0) {
        if (st["value"].is_null()) return returned = std::vector<Val>{}, true;
        return *why = fmt::format("line {}: the kernel returns a value", ev.line(st)), false;
      }
      std::vector<Val> vals;
      const Node& v = st["value"];
      if (v.is_null()) return *why = fmt::format("line {}: a helper returns nothing", ev.line(st)), false;
      if (isType(v, "Tuple")) {
        for (const auto& x : v["elts"]) vals.push_back(ev.eval(x));
      } else {
        vals.push_back(ev.eval(v));
      }
      returned = vals;
      return true;
    }
    if (isType(st, "Assign") && st["targets"].size() == 1) {
      const Node& t = st["targets"][0];
      if (const Kernel* h = helperOf(st["value"])) {
        std::vector<Val> vals;
        return inlineCall(st["value"], *h, &vals) && assignTargets(t, vals, ev.line(st));
      }
      if (isType(t, "Tuple") && isType(st["value"], "Tuple") && t["elts"].size() == st["value"]["elts"].size()) {
        std::vector<Val> vals;  // `lo, hi = 0, start_m * BLOCK_M`: every value read before any is bound
        for (const auto& x : st["value"]["elts"]) vals.push_back(ev.eval(x));
        return assignTargets(t, vals, ev.line(st));
      }
    }
    std::string name = target(st);
    if (name.empty()) {
      *why = fmt::format("line {}: a statement the attention reading does not take ({})", ev.line(st),
                         nodeType(st));
      return false;
    }
    ev.env[name] = value(st);
    return true;
  }

  // The loop's carried values (by their values on entry), then its body.
  bool carried() {
    std::map<std::string, int> in_loop = storeCounts((*loop)["body"]);
    m.clear(), l.clear(), acc.clear();
    const bool go_on = segment == 2;  // the second loop takes the first's final values
    for (const auto& [name, n] : in_loop) {
      auto it = ev.env.find(name);
      if (it == ev.env.end()) continue;
      Val& v = it->second;
      if (go_on && (v.k == VK::kNegInf || v.k == VK::kInit)) {
        *why = fmt::format("the second key loop starts '{}' afresh", name);
        return false;
      }
      if (go_on && v.k == VK::kMFinal) v = valOf(VK::kNegInf), v.rank = 1;
      else if (go_on && v.k == VK::kLFinal) v = valOf(VK::kInit), v.rank = 1;
      else if (go_on && v.k == VK::kAccFinal) v = valOf(VK::kInit), v.rank = 2;
      if (v.k == VK::kNegInf && v.rank == 1) {
        if (!m.empty()) return *why = "two running maxima", false;
        m = name;
        v = valOf(VK::kMCarry);
      } else if (v.k == VK::kInit && v.rank == 1) {
        if (!l.empty()) return *why = "two running sums", false;
        l = name;
        v = valOf(VK::kLCarry);
      } else if (v.k == VK::kInit && v.rank == 2 && v.fill == 0) {
        if (!acc.empty()) return *why = "two accumulators", false;
        acc = name;
        v = valOf(VK::kAccCarry);
      } else if (v.k != VK::kScalar && v.k != VK::kIndex && v.k != VK::kPtrRows && v.k != VK::kPtrCols &&
                 v.k != VK::kUnknown) {
        *why = fmt::format("the loop updates '{}', which is neither the running max, the running sum nor the accumulator", name);
        return false;
      }
    }
    if (m.empty() || l.empty() || acc.empty()) {
      *why = "the loop does not carry a running max (from -inf), a running sum and an accumulator (from zeros)";
      return false;
    }
    if (ev.env.count((*loop)["target"].value("id", ""))) {
      *why = "the loop variable shadows a name of the kernel";
      return false;
    }
    {
      Val lv;
      lv.k = VK::kScalar;
      lv.isym = sym::var(f.loop->var);
      lv.factors = {"<loop variable>"};
      ev.env[f.loop->var] = lv;
    }
    if (!(*loop)["orelse"].empty()) return *why = "the key loop has an else branch", false;
    for (const auto& st : (*loop)["body"]) {
      if (!statement(st)) return false;
    }
    return true;
  }

  // The values at the end of the loop: one online softmax's.
  bool softmax() {
    auto expect = [&](const std::string& name, VK kind, const char* what) {
      const Val& v = ev.env[name];
      if (v.k == kind) return true;
      *why = v.k == VK::kUnknown && !v.why.empty()
                 ? fmt::format("the {} '{}' is not the online softmax's: {}", what, name, v.why)
                 : fmt::format("the {} '{}' is not the online softmax's at the end of the loop", what, name);
      return false;
    };
    if (!expect(m, VK::kMNew, "running max") || !expect(l, VK::kLNew, "running sum") ||
        !expect(acc, VK::kAccNew, "accumulator")) {
      return false;
    }
    pv = ev.env[acc];
    const Val lv = ev.env[l];
    const Val mv = ev.env[m];
    if (pv.base != lv.base || !sameFactors(pv.factors, lv.factors) || pv.conds != lv.conds ||
        !sameFactors(pv.mfactors, mv.mfactors) || pv.conds != mv.conds) {
      *why = "the accumulator, the running sum and the running max are not one softmax's";
      return false;
    }
    if (pv.norm && f.loop2) return *why = "two key loops of the normalized form (not taken yet)", false;
    f.normalized = pv.norm;
    if (f.loop2 && segment == 1) {  // the first of two loops: the second must go on with it
      pv1 = pv;
      return true;
    }
    if (segment == 2) {
      // One softmax over both loops' keys: the same scale, base and rounding; the first loop's
      // masks are the second's (a causal mask the first loop omits holds there when its keys all
      // precede the program's first row: the route checks that per program).
      bool subset = std::all_of(pv1.conds.begin(), pv1.conds.end(), [&](const Conj& c) {
        return std::find(pv.conds.begin(), pv.conds.end(), c) != pv.conds.end();
      });
      if (pv1.base != pv.base || !sameFactors(pv1.factors, pv.factors) || !sameFactors(pv1.mfactors, pv.mfactors) ||
          pv1.dtype != pv.dtype || !subset) {
        *why = "the two key loops are not one softmax's (scale, base, rounding or masks differ)";
        return false;
      }
    }
    f.base = pv.base;
    f.scale = sorted(pv.mfactors);
    std::vector<std::string> k = sorted(pv.factors);
    f.scale.insert(f.scale.end(), k.begin(), k.end());
    for (const auto& s : f.scale) {
      if (s.find('<') != std::string::npos) {
        *why = "the scores' scale is not a product of parameters and constants";
        return false;
      }
    }
    f.p_cast = pv.dtype;
    for (const auto& c : pv.conds) {
      if (c.kind == "fill") {
        f.fills.push_back({c.expr, c.at});
      } else if (c.kind == "causal") {
        f.causal = true;
        f.row_starts.push_back(c.e);
      } else if (c.kind == "key_bound") {
        if (f.where_key_bound) return *why = "two key bounds", false;
        f.where_key_bound = c.e;
      } else {
        if (f.where_row_bound) return *why = "two row bounds", false;
        f.where_row_bound = c.e;
      }
    }
    return true;
  }

  // After the loop: the carried values are final.
  bool afterLoop() {
    ev.after_loop = true;
    ev.env[m] = valOf(VK::kMFinal);
    ev.env[l] = valOf(VK::kLFinal);
    // the normalized form keeps the accumulator divided by the running sum: it is the output
    ev.env[acc] = valOf(pv.norm ? VK::kOut : VK::kAccFinal);
    ev.env.erase(f.loop->var);
    return true;
  }

  // A store, valued where it stands: the output acc / l, and optionally the rows' log-sum-exp
  // m + log(l) in the exponent's base.
  bool store(const Node& st) {
    const Node& call = st["value"];
    if (!ev.after_loop) return *why = fmt::format("line {}: a store before the key loop ends", ev.line(st)), false;
    if (call["args"].size() < 2) return *why = "a tl.store without a value", false;
    auto p = nodePos(call);
    int id = -1;
    for (const auto& a : kir.accesses) {
      if (p && a.loc.line == p->line && a.loc.col == p->col) id = id < 0 ? a.id : -2;
    }
    Val value = ev.eval(call["args"][1]);
    if (id == f.o && !stored) {
      ev.notePointerRows(ev.eval(call["args"][0]));
      if (value.k != VK::kOut) {
        *why = value.why.empty() ? "the stored value is not the accumulator divided by the running sum"
                                 : "the stored value is not the accumulator divided by the running sum: " + value.why;
        return false;
      }
      f.out_cast = value.cast ? value.dtype : "";
      stored = true;
      return true;
    }
    if (id == f.lse && f.lse >= 0 && !lse_stored) {
      noteVectorRows(call["args"][0]);  // its rows are the program's query rows
      if (value.k != VK::kLse || value.base != f.base || !pv.factors.empty()) {
        *why = fmt::format("line {}: a row vector stored that is not the log-sum-exp m + log(l) in the exponent's "
                           "base",
                           ev.line(st));
        return false;
      }
      lse_stored = true;
      return true;
    }
    return *why = fmt::format("line {}: a store besides the output and its log-sum-exp", ev.line(st)), false;
  }

  // A row vector's pointer (`LSE + pair * SEQ + offs_m`): the first index of its one addend
  // that is an arange over the rows, noted as where the program's query rows start.
  void noteVectorRows(const Node& ptr) {
    std::vector<const Node*> addends, todo = {&ptr};
    while (!todo.empty()) {
      const Node* x = todo.back();
      todo.pop_back();
      if (isType(*x, "BinOp") && nodeType((*x)["op"]) == "Add") {
        todo.push_back(&(*x)["left"]);
        todo.push_back(&(*x)["right"]);
      } else {
        addends.push_back(x);
      }
    }
    std::vector<sym::Expr> rows;
    for (const Node* x : addends) {
      Val v = ev.eval(*x);
      if (v.k == VK::kIndex && v.bcast < 0 && v.isym) rows.push_back(v.isym);
    }
    if (rows.size() == 1) ev.pointer_rows.push_back(rows.front());
  }

  // The first query row, each way the kernel says it; masks on the keys start at the loop variable.
  bool rows() {
    for (const auto& r : ev.pointer_rows) f.row_starts.push_back(r);
    // the loop variable, or the loop's start plus its iterations' steps (a block pointer advanced)
    const IrLoop& L = *f.loop;
    const sym::Expr stepped =
        L.start && L.step
            ? sym::add(kir.expand(L.start), sym::mul(sym::var(fmt::format("iter({})", L.id)), kir.expand(L.step)))
            : nullptr;
    for (int id : {f.k, f.v, f.k2, f.v2}) {
      if (id < 0) continue;
      for (const auto& b : kir.accesses[static_cast<size_t>(id)].mask_bounds) {
        if (!sym::same(kir.expand(b.index_offset), sym::var(f.loop->var)) &&
            !(stepped && sym::same(kir.expand(b.index_offset), stepped))) {
          *why = fmt::format("line {}: the keys a mask bounds do not start at the loop variable",
                             kir.accesses[static_cast<size_t>(id)].loc.line);
          return false;
        }
      }
    }
    // The first query row: from the masks of Q and the output, and the causal comparison;
    // without either, from their block pointers' row offsets (the route's plan refuses a
    // program whose offset also holds its (batch, head) base).
    for (int id : {f.q, f.o}) {
      for (const auto& b : kir.accesses[static_cast<size_t>(id)].mask_bounds) {
        if (b.axis == 0 && b.index_offset) f.row_starts.push_back(b.index_offset);
      }
    }
    for (int id : {f.q, f.o}) {
      const IrAccess& a = kir.accesses[static_cast<size_t>(id)];
      if (!f.row_starts.empty() || a.block_ptr < 0) continue;
      const IrBlockPtr& bp = kir.block_ptrs[static_cast<size_t>(a.block_ptr)];
      if (bp.advanced_from < 0 && !bp.offsets.empty() && bp.offsets[0]) f.row_starts.push_back(bp.offsets[0]);
    }
    if (f.row_starts.empty()) {
      *why = "neither a mask nor a causal comparison says which query rows a program takes";
      return false;
    }
    return true;
  }
};

}  // namespace

void adoptBoundaryChecks(KernelIR& kir) {
  for (auto& a : kir.accesses) {
    if (a.block_ptr < 0 || a.boundary_check.empty() || !a.mask.empty()) continue;
    if (a.kind == AccessKind::kLoad && a.padding_option.find("zero") == std::string::npos) continue;
    const IrBlockPtr& bp = kir.block_ptrs[static_cast<size_t>(a.block_ptr)];
    std::vector<MaskBound> bounds;
    std::vector<std::string> texts;
    bool ok = true;
    for (char c : a.boundary_check) {
      if (c < '0' || c > '9') {
        ok = ok && (c == '(' || c == ')' || c == '[' || c == ']' || c == ',' || c == ' ');
        continue;
      }
      const size_t ax = static_cast<size_t>(c - '0');
      if (ax >= bp.shape.size() || ax >= bp.offsets.size() || ax >= bp.block_shape.size()) {
        ok = false;
        break;
      }
      if (sym::constant(kir.expand(bp.offsets[ax])) == 0 &&
          sym::same(kir.expand(bp.shape[ax]), kir.expand(bp.block_shape[ax]))) {
        continue;  // the whole extent from 0: always inside
      }
      MaskBound b;
      b.axis = static_cast<int>(ax);
      b.index = fmt::format("block axis {}", ax);
      b.index_offset = bp.offsets[ax];
      b.bound = bp.shape[ax];
      b.text = fmt::format("{} + arange({}) < {}", sym::str(b.index_offset), sym::str(bp.block_shape[ax]),
                           sym::str(b.bound));
      texts.push_back(b.text);
      bounds.push_back(b);
    }
    if (!ok) continue;
    a.mask_bounds = bounds;
    a.mask = fmt::format("{}", fmt::join(texts, " & "));
    if (a.kind == AccessKind::kLoad && !bounds.empty()) a.other = "0";
    a.boundary_check.clear();
    a.padding_option.clear();
  }
}

bool readAttention(const PassContext& ctx, const KernelIR& kir, AttentionForm* form, std::string* why) {
  form->kir = &kir;
  if (!findAccesses(kir, form, why)) return false;
  return Reading(ctx, kir, *form, why).run();
}

}  // namespace tf

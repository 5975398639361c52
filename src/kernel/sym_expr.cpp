#include "kernel/sym_expr.h"

#include <fmt/format.h>

#include <algorithm>

namespace tf::sym {
namespace {

thread_local uint64_t limit_hits = 0;

uint64_t combine(uint64_t h, uint64_t v) {
  // 64-bit hash_combine (golden-ratio constant): deterministic across runs and platforms.
  return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

uint64_t hashText(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

std::string render(const Node& n);

Expr leaf(Op op, int64_t value, std::string name, bool over_limit = false) {
  auto n = std::make_shared<Node>();
  n->op = op;
  n->value = value;
  n->name = std::move(name);
  n->hash = combine(combine(static_cast<uint64_t>(op), static_cast<uint64_t>(value)), hashText(n->name));
  n->has_opaque = op == Op::kOpaque;
  n->has_limit = over_limit;
  n->text = op == Op::kNum ? std::to_string(value) : n->name;
  return n;
}

// An expression over the limits: an opaque leaf named after its structure, so that two
// different ones never print alike (add() would merge them as like terms, same() equate them).
Expr limitLeaf(uint64_t hash) {
  ++limit_hits;
  return leaf(Op::kOpaque, 0, fmt::format("<unknown: too large #{:08x}>", static_cast<uint32_t>(hash ^ (hash >> 32))), true);
}

// Two non-constant operands whose trees together are over the limit: the sum or product
// could only stay under it by cancelling, and combining like terms of trees that large is
// the costliest step of all (every term's text is a key), so it is not attempted.
bool tooLargeToCombine(const Expr& a, const Expr& b) {
  return a->op != Op::kNum && b->op != Op::kNum && uint64_t{a->size} + b->size > kMaxTerms + 1;
}

Expr make(Op op, std::vector<Expr> args) {
  uint64_t size = 1, hash = combine(0x51ed270b27d0f3a1ULL, static_cast<uint64_t>(op));
  uint32_t depth = 1;
  bool has_opaque = false, has_limit = false;
  for (const auto& a : args) {
    size += a->size;
    depth = std::max(depth, a->depth + 1);
    hash = combine(hash, a->hash);
    has_opaque = has_opaque || a->has_opaque;
    has_limit = has_limit || a->has_limit;
  }
  if (size > kMaxTerms || depth > kMaxDepth) return limitLeaf(hash);
  auto n = std::make_shared<Node>();
  n->op = op;
  n->args = std::move(args);
  n->size = static_cast<uint32_t>(size);
  n->depth = depth;
  n->hash = hash;
  n->has_opaque = has_opaque;
  n->has_limit = has_limit;
  n->text = render(*n);
  return n;
}

bool anyNull(std::initializer_list<const Expr*> xs) {
  for (const Expr* x : xs) if (!*x) return true;
  return false;
}

// Splits a term into its numeric coefficient and the rest (null rest: a pure number).
std::pair<int64_t, Expr> coefficient(const Expr& e) {
  if (e->op == Op::kNum) return {e->value, nullptr};
  if (e->op != Op::kMul) return {1, e};
  int64_t c = 1;
  std::vector<Expr> rest;
  for (const auto& f : e->args) {
    if (f->op == Op::kNum) c *= f->value;
    else rest.push_back(f);
  }
  if (rest.empty()) return {c, nullptr};
  if (rest.size() == 1) return {c, rest[0]};
  return {c, make(Op::kMul, rest)};
}

// The numeric coefficient alone (no allocation): orders a sum's terms for printing.
int64_t coefficientValue(const Expr& e) {
  if (e->op == Op::kNum) return e->value;
  if (e->op != Op::kMul) return 1;
  int64_t c = 1;
  for (const auto& f : e->args) if (f->op == Op::kNum) c *= f->value;
  return c;
}

bool mulOverflow(int64_t a, int64_t b, int64_t* out) { return __builtin_mul_overflow(a, b, out); }

int precedence(const Expr& e) {
  switch (e->op) {
    case Op::kSelect: return 0;
    case Op::kOr: return 1;
    case Op::kAnd: return 2;
    case Op::kNot: return 3;
    case Op::kLt: case Op::kLe: case Op::kGt: case Op::kGe: case Op::kEq: case Op::kNe: return 4;
    case Op::kAdd: return 5;
    case Op::kMul: case Op::kFloorDiv: case Op::kMod: return 6;
    case Op::kNum: return e->value < 0 ? 7 : 9;
    default: return 9;
  }
}

std::string wrap(const Expr& e, int min_prec) {
  return precedence(e) < min_prec ? "(" + e->text + ")" : e->text;
}

const char* cmpText(Op op) {
  switch (op) {
    case Op::kLt: return "<";
    case Op::kLe: return "<=";
    case Op::kGt: return ">";
    case Op::kGe: return ">=";
    case Op::kEq: return "==";
    default: return "!=";
  }
}

std::optional<int64_t> floorDivInt(int64_t a, int64_t b) {
  if (b == 0) return std::nullopt;
  if (a == INT64_MIN && b == -1) return std::nullopt;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t pow2Factor(int64_t v) {
  if (v == 0) return 0;
  int64_t d = 1;
  while (d < (int64_t{1} << 20) && v % (d * 2) == 0) d *= 2;
  return d;
}

}  // namespace

Expr num(int64_t v) { return leaf(Op::kNum, v, ""); }
Expr var(const std::string& name) { return leaf(Op::kVar, 0, name); }
Expr opaque(const std::string& text) { return leaf(Op::kOpaque, 0, text); }

Expr add(const Expr& a, const Expr& b) {
  if (anyNull({&a, &b})) return nullptr;
  if (tooLargeToCombine(a, b)) return limitLeaf(combine(combine(a->hash, b->hash), static_cast<uint64_t>(Op::kAdd)));
  std::vector<Expr> flat;
  for (const Expr* x : {&a, &b}) {
    if ((*x)->op == Op::kAdd) flat.insert(flat.end(), (*x)->args.begin(), (*x)->args.end());
    else flat.push_back(*x);
  }
  int64_t constant_sum = 0;
  // Like terms combine: key = the text of the non-numeric part.
  std::map<std::string, std::pair<int64_t, Expr>> terms;
  for (const auto& t : flat) {
    auto [c, rest] = coefficient(t);
    if (!rest) {
      if (__builtin_add_overflow(constant_sum, c, &constant_sum)) return opaque(str(a) + " + " + str(b));
      continue;
    }
    auto& slot = terms[str(rest)];
    if (!slot.second) slot = {c, rest};
    else slot.first += c;
  }
  std::vector<Expr> out;
  for (auto& [key, cr] : terms) {
    if (cr.first == 0) continue;
    out.push_back(cr.first == 1 ? cr.second : mul(num(cr.first), cr.second));
  }
  if (constant_sum != 0 || out.empty()) out.push_back(num(constant_sum));
  if (out.size() == 1) return out[0];
  return make(Op::kAdd, out);
}

Expr neg(const Expr& a) { return a ? mul(num(-1), a) : nullptr; }
Expr sub(const Expr& a, const Expr& b) { return add(a, neg(b)); }

Expr mul(const Expr& a, const Expr& b) {
  if (anyNull({&a, &b})) return nullptr;
  if (tooLargeToCombine(a, b)) return limitLeaf(combine(combine(a->hash, b->hash), static_cast<uint64_t>(Op::kMul)));
  std::vector<Expr> flat;
  for (const Expr* x : {&a, &b}) {
    if ((*x)->op == Op::kMul) flat.insert(flat.end(), (*x)->args.begin(), (*x)->args.end());
    else flat.push_back(*x);
  }
  int64_t c = 1;
  std::vector<Expr> rest;
  for (const auto& f : flat) {
    if (f->op == Op::kNum) {
      if (mulOverflow(c, f->value, &c)) return opaque(wrap(a, 6) + "*" + wrap(b, 7));
    } else {
      rest.push_back(f);
    }
  }
  if (c == 0) return num(0);
  if (rest.empty()) return num(c);
  // A product with a sum distributes only when the sum has a constant factor to share; the
  // text stays as written otherwise. Sort the symbolic factors for a canonical text.
  std::stable_sort(rest.begin(), rest.end(), [](const Expr& x, const Expr& y) { return str(x) < str(y); });
  if (c == 1 && rest.size() == 1) return rest[0];
  std::vector<Expr> out;
  if (c != 1) out.push_back(num(c));
  out.insert(out.end(), rest.begin(), rest.end());
  return make(Op::kMul, out);
}

Expr floorDiv(const Expr& a, const Expr& b) {
  if (anyNull({&a, &b})) return nullptr;
  auto ca = constant(a), cb = constant(b);
  if (ca && cb) {
    if (auto q = floorDivInt(*ca, *cb)) return num(*q);
  }
  if (cb && *cb == 1) return a;
  if (ca && *ca == 0) return num(0);
  return make(Op::kFloorDiv, {a, b});
}

Expr mod(const Expr& a, const Expr& b) {
  if (anyNull({&a, &b})) return nullptr;
  auto ca = constant(a), cb = constant(b);
  if (ca && cb && *cb != 0) {
    auto q = floorDivInt(*ca, *cb);
    if (q) return num(*ca - *q * *cb);
  }
  if (cb && *cb == 1) return num(0);
  if (ca && *ca == 0) return num(0);
  return make(Op::kMod, {a, b});
}

Expr cdiv(const Expr& a, const Expr& b) {
  if (anyNull({&a, &b})) return nullptr;
  auto ca = constant(a), cb = constant(b);
  if (ca && cb && *cb != 0) {
    if (auto q = floorDivInt(*ca + *cb - 1, *cb)) return num(*q);
  }
  if (cb && *cb == 1) return a;
  return make(Op::kCDiv, {a, b});
}

Expr min(const Expr& a, const Expr& b) {
  if (anyNull({&a, &b})) return nullptr;
  auto ca = constant(a), cb = constant(b);
  if (ca && cb) return num(std::min(*ca, *cb));
  if (same(a, b)) return a;
  return make(Op::kMin, {a, b});
}

Expr max(const Expr& a, const Expr& b) {
  if (anyNull({&a, &b})) return nullptr;
  auto ca = constant(a), cb = constant(b);
  if (ca && cb) return num(std::max(*ca, *cb));
  if (same(a, b)) return a;
  return make(Op::kMax, {a, b});
}

Expr nextPow2(const Expr& a) {
  if (!a) return nullptr;
  if (auto c = constant(a)) {
    int64_t p = 1;
    while (p < *c && p < (int64_t{1} << 62)) p *= 2;
    return num(p);
  }
  return make(Op::kPow2, {a});
}

Expr cmp(Op op, const Expr& a, const Expr& b) {
  if (anyNull({&a, &b})) return nullptr;
  auto ca = constant(a), cb = constant(b);
  if (ca && cb) {
    bool r = false;
    switch (op) {
      case Op::kLt: r = *ca < *cb; break;
      case Op::kLe: r = *ca <= *cb; break;
      case Op::kGt: r = *ca > *cb; break;
      case Op::kGe: r = *ca >= *cb; break;
      case Op::kEq: r = *ca == *cb; break;
      default: r = *ca != *cb; break;
    }
    return num(r ? 1 : 0);
  }
  return make(op, {a, b});
}

Expr logicalAnd(const Expr& a, const Expr& b) {
  if (anyNull({&a, &b})) return nullptr;
  auto ca = constant(a), cb = constant(b);
  if (ca) return *ca ? b : num(0);
  if (cb) return *cb ? a : num(0);
  return make(Op::kAnd, {a, b});
}

Expr logicalOr(const Expr& a, const Expr& b) {
  if (anyNull({&a, &b})) return nullptr;
  auto ca = constant(a), cb = constant(b);
  if (ca) return *ca ? num(1) : b;
  if (cb) return *cb ? num(1) : a;
  return make(Op::kOr, {a, b});
}

Expr logicalNot(const Expr& a) {
  if (!a) return nullptr;
  if (auto c = constant(a)) return num(*c ? 0 : 1);
  if (a->op == Op::kNot) return a->args[0];
  return make(Op::kNot, {a});
}

Expr select(const Expr& cond, const Expr& then, const Expr& otherwise) {
  if (anyNull({&cond, &then, &otherwise})) return nullptr;
  if (auto c = constant(cond)) return *c ? then : otherwise;
  if (same(then, otherwise)) return then;
  return make(Op::kSelect, {cond, then, otherwise});
}

Expr product(const std::vector<Expr>& xs) {
  Expr p = num(1);
  for (const auto& x : xs) p = mul(p, x);
  return p;
}

namespace {

std::string render(const Node& n) {
  switch (n.op) {
    case Op::kNum: return std::to_string(n.value);
    case Op::kVar: case Op::kOpaque: return n.name;
    case Op::kAdd: {
      std::string s;
      // Non-constant terms first, the constant last, as people write it.
      std::vector<Expr> order;
      for (const auto& t : n.args) if (t->op != Op::kNum && coefficientValue(t) > 0) order.push_back(t);
      for (const auto& t : n.args) if (t->op != Op::kNum && coefficientValue(t) < 0) order.push_back(t);
      for (const auto& t : n.args) if (t->op == Op::kNum) order.push_back(t);
      for (const auto& t : order) {
        int64_t c = coefficientValue(t);
        bool negative = c < 0;
        Expr shown = t;
        if (negative) {
          Expr rest = coefficient(t).second;
          shown = rest ? (c == -1 ? rest : mul(num(-c), rest)) : num(-c);
        }
        std::string part = wrap(shown, 6);
        if (s.empty()) s = negative ? "-" + part : part;
        else s += (negative ? " - " : " + ") + part;
      }
      return s;
    }
    case Op::kMul: {
      std::string s;
      size_t i = 0;
      bool negate = n.args[0]->op == Op::kNum && n.args[0]->value == -1;
      if (negate) i = 1;
      for (; i < n.args.size(); ++i) {
        if (!s.empty()) s += "*";
        s += wrap(n.args[i], 7);
      }
      return negate ? "-" + s : s;
    }
    case Op::kFloorDiv: return wrap(n.args[0], 6) + " // " + wrap(n.args[1], 7);
    case Op::kMod: return wrap(n.args[0], 6) + " % " + wrap(n.args[1], 7);
    case Op::kCDiv: return "cdiv(" + str(n.args[0]) + ", " + str(n.args[1]) + ")";
    case Op::kMin: return "min(" + str(n.args[0]) + ", " + str(n.args[1]) + ")";
    case Op::kMax: return "max(" + str(n.args[0]) + ", " + str(n.args[1]) + ")";
    case Op::kPow2: return "next_power_of_2(" + str(n.args[0]) + ")";
    case Op::kLt: case Op::kLe: case Op::kGt: case Op::kGe: case Op::kEq: case Op::kNe:
      return wrap(n.args[0], 5) + " " + cmpText(n.op) + " " + wrap(n.args[1], 5);
    case Op::kAnd: return wrap(n.args[0], 3) + " and " + wrap(n.args[1], 3);
    case Op::kOr: return wrap(n.args[0], 2) + " or " + wrap(n.args[1], 2);
    case Op::kNot: return "not " + wrap(n.args[0], 4);
    case Op::kSelect:
      return "(" + wrap(n.args[1], 1) + " if " + wrap(n.args[0], 1) + " else " + wrap(n.args[2], 1) + ")";
  }
  return "?";
}

}  // namespace

std::string str(const Expr& e) { return e ? e->text : ""; }

std::optional<int64_t> constant(const Expr& e) {
  if (e && e->op == Op::kNum) return e->value;
  return std::nullopt;
}

bool isOpaque(const Expr& e) { return !e || e->has_opaque; }
bool overLimit(const Expr& e) { return e && e->has_limit; }
uint64_t limitHits() { return limit_hits; }

bool same(const Expr& a, const Expr& b) {
  if (!a || !b) return !a && !b;
  return a == b || a->text == b->text;
}

std::optional<int64_t> eval(const Expr& e, const Env& env) {
  if (!e) return std::nullopt;
  switch (e->op) {
    case Op::kNum: return e->value;
    case Op::kVar: return env ? env(e->name) : std::nullopt;
    case Op::kOpaque: return std::nullopt;
    default: break;
  }
  std::vector<int64_t> v;
  if (e->op == Op::kSelect) {
    auto c = eval(e->args[0], env);
    if (!c) return std::nullopt;
    return eval(*c ? e->args[1] : e->args[2], env);
  }
  for (const auto& a : e->args) {
    auto x = eval(a, env);
    if (!x) return std::nullopt;
    v.push_back(*x);
  }
  switch (e->op) {
    case Op::kAdd: {
      int64_t s = 0;
      for (int64_t x : v) if (__builtin_add_overflow(s, x, &s)) return std::nullopt;
      return s;
    }
    case Op::kMul: {
      int64_t p = 1;
      for (int64_t x : v) if (mulOverflow(p, x, &p)) return std::nullopt;
      return p;
    }
    case Op::kFloorDiv: return floorDivInt(v[0], v[1]);
    case Op::kMod: {
      auto q = floorDivInt(v[0], v[1]);
      if (!q) return std::nullopt;
      return v[0] - *q * v[1];
    }
    case Op::kCDiv: {
      if (v[1] == 0) return std::nullopt;
      return floorDivInt(v[0] + v[1] - 1, v[1]);
    }
    case Op::kMin: return std::min(v[0], v[1]);
    case Op::kMax: return std::max(v[0], v[1]);
    case Op::kPow2: {
      int64_t p = 1;
      while (p < v[0] && p < (int64_t{1} << 62)) p *= 2;
      return p;
    }
    case Op::kLt: return v[0] < v[1];
    case Op::kLe: return v[0] <= v[1];
    case Op::kGt: return v[0] > v[1];
    case Op::kGe: return v[0] >= v[1];
    case Op::kEq: return v[0] == v[1];
    case Op::kNe: return v[0] != v[1];
    case Op::kAnd: return v[0] && v[1];
    case Op::kOr: return v[0] || v[1];
    case Op::kNot: return !v[0];
    default: return std::nullopt;
  }
}

Env envOf(const std::map<std::string, int64_t>& values) {
  return [&values](const std::string& n) -> std::optional<int64_t> {
    auto it = values.find(n);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

void collectVars(const Expr& e, std::set<std::string>& out) {
  if (!e) return;
  if (e->op == Op::kVar) out.insert(e->name);
  for (const auto& a : e->args) collectVars(a, out);
}

std::set<std::string> vars(const Expr& e) {
  std::set<std::string> out;
  collectVars(e, out);
  return out;
}

Expr substitute(const Expr& e, const std::function<Expr(const std::string&)>& fn) {
  if (!e) return nullptr;
  if (e->op == Op::kVar) {
    Expr r = fn(e->name);
    return r ? r : e;
  }
  if (e->args.empty()) return e;
  std::vector<Expr> a;
  for (const auto& x : e->args) a.push_back(substitute(x, fn));
  switch (e->op) {
    case Op::kAdd: {
      Expr s = num(0);
      for (const auto& x : a) s = add(s, x);
      return s;
    }
    case Op::kMul: return product(a);
    case Op::kFloorDiv: return floorDiv(a[0], a[1]);
    case Op::kMod: return mod(a[0], a[1]);
    case Op::kCDiv: return cdiv(a[0], a[1]);
    case Op::kMin: return min(a[0], a[1]);
    case Op::kMax: return max(a[0], a[1]);
    case Op::kPow2: return nextPow2(a[0]);
    case Op::kLt: case Op::kLe: case Op::kGt: case Op::kGe: case Op::kEq: case Op::kNe: return cmp(e->op, a[0], a[1]);
    case Op::kAnd: return logicalAnd(a[0], a[1]);
    case Op::kOr: return logicalOr(a[0], a[1]);
    case Op::kNot: return logicalNot(a[0]);
    case Op::kSelect: return select(a[0], a[1], a[2]);
    default: return e;
  }
}

std::vector<Expr> addends(const Expr& e) {
  if (!e) return {};
  if (e->op == Op::kAdd) return e->args;
  return {e};
}

std::vector<Expr> factors(const Expr& e) {
  if (!e) return {};
  if (e->op == Op::kMul) return e->args;
  return {e};
}

int64_t divisibility(const Expr& e, const std::function<int64_t(const std::string&)>& div) {
  constexpr int64_t kCap = int64_t{1} << 20;
  if (!e) return 1;
  switch (e->op) {
    case Op::kNum: return pow2Factor(e->value);
    case Op::kVar: return std::clamp<int64_t>(div ? div(e->name) : 1, 1, kCap);
    case Op::kAdd: {
      int64_t d = 0;
      for (const auto& a : e->args) {
        int64_t x = divisibility(a, div);
        if (x == 0) continue;
        d = d == 0 ? x : std::min(d, x);
      }
      return d;
    }
    case Op::kMul: {
      int64_t d = 1;
      for (const auto& a : e->args) {
        int64_t x = divisibility(a, div);
        if (x == 0) return 0;
        d = std::min(kCap, d * x);
      }
      return d;
    }
    case Op::kMod: {
      // a % b = a - q*b: divisible by whatever divides both.
      int64_t x = divisibility(e->args[0], div), y = divisibility(e->args[1], div);
      if (x == 0) return y == 0 ? 0 : y;
      if (y == 0) return x;
      return std::min(x, y);
    }
    case Op::kSelect: {
      int64_t x = divisibility(e->args[1], div), y = divisibility(e->args[2], div);
      if (x == 0) return y;
      if (y == 0) return x;
      return std::min(x, y);
    }
    default: return 1;
  }
}

}  // namespace tf::sym

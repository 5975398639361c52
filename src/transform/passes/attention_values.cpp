// The rules of the attention recognition's evaluator (attention_values.h).
#include "transform/passes/attention_values.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

namespace tf::attention {

Val valOf(VK k) {
  Val v;
  v.k = k;
  return v;
}

Val unknown(const std::string& why) {
  Val v;
  v.why = why;
  return v;
}

std::vector<std::string> sorted(std::vector<std::string> xs) {
  xs.erase(std::remove(xs.begin(), xs.end(), "1"), xs.end());
  std::sort(xs.begin(), xs.end());
  return xs;
}

bool sameFactors(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return sorted(a) == sorted(b);
}

std::vector<Conj> mergeConds(std::vector<Conj> a, const std::vector<Conj>& b) {
  a.insert(a.end(), b.begin(), b.end());
  std::sort(a.begin(), a.end());
  a.erase(std::unique(a.begin(), a.end()), a.end());
  return a;
}

std::string reciprocal(const std::vector<std::string>& factors) {
  return factors.empty() ? "1" : fmt::format("1.0 / ({})", fmt::join(factors, " * "));
}

bool isPosInfNode(const Node& n) {
  if (!isType(n, "Call") || dottedName(n["func"]) != "float" || n["args"].size() != 1) return dottedName(n) == "math.inf";
  auto s = strLiteral(n["args"][0]);
  return s && (*s == "inf" || *s == "+inf" || *s == "infinity");
}

bool isNegInfNode(const Node& n) {
  auto infCall = [](const Node& c, bool negative) {
    if (!isType(c, "Call") || dottedName(c["func"]) != "float" || c["args"].size() != 1) return false;
    auto s = strLiteral(c["args"][0]);
    if (!s) return false;
    std::string t = *s;
    std::transform(t.begin(), t.end(), t.begin(), ::tolower);
    return negative ? t == "-inf" || t == "-infinity" : t == "inf" || t == "infinity" || t == "+inf";
  };
  if (infCall(n, true)) return true;
  if (isType(n, "UnaryOp") && nodeType(n["op"]) == "USub") {
    const Node& x = n["operand"];
    if (infCall(x, false)) return true;
    std::string d = dottedName(x);
    if (d == "math.inf" || d == "float.inf") return true;
  }
  return false;
}

std::optional<double> negativeLiteral(const Node& n) {
  auto number = [](const Node& c) -> std::optional<double> {
    if (isType(c, "Constant") && (c["vt"] == "float" || c["vt"] == "int") && c["value"].is_number()) {
      return c["value"].get<double>();
    }
    return std::nullopt;
  };
  std::optional<double> v;
  if (isType(n, "UnaryOp") && nodeType(n["op"]) == "USub") {
    if (auto x = number(n["operand"])) v = -*x;
  } else if (auto x = number(n)) {
    v = *x;
  } else if (isType(n, "Call") && dottedName(n["func"]) == "float" && n["args"].size() == 1) {
    if (auto s = strLiteral(n["args"][0])) {
      char* end = nullptr;
      double d = std::strtod(s->c_str(), &end);
      if (end && *end == '\0' && !s->empty()) v = d;
    }
  }
  if (!v || !std::isfinite(*v) || *v >= 0) return std::nullopt;
  return v;
}

void Evaluator::notePointerRows(const Val& p) {
  if (p.k == VK::kPtrRows && p.isym) pointer_rows.push_back(p.isym);
}

Val Evaluator::eval(const Node& n) {
  Val v = evalInner(n);
  if (v.k != VK::kUnknown || !v.why.empty()) return v;
  // The first cause: a local the expression reads that is unknown already (a select the
  // domain does not take, two statements up), else this expression.
  walk(n, [&](const Node& x) {
    if (!v.why.empty()) return false;
    if (isType(x, "Name")) {
      auto it = env.find(x["id"].get<std::string>());
      if (it != env.end() && it->second.k == VK::kUnknown) v.why = it->second.why;
    }
    return true;
  });
  if (v.why.empty()) v.why = fmt::format("line {}: '{}'", line(n), short_(ctx_.slice(n)));
  return v;
}

std::optional<bool> Evaluator::flagTest(const Node& t, std::string* why) const {
  std::string w;
  if (auto v = constInt(t, true, &w)) return *v != 0;
  *why = w.rfind("flag:", 0) == 0 || w.rfind("mode:", 0) == 0
             ? w
             : fmt::format("line {}: a condition other than a constexpr flag ({})", line(t), short_(ctx_.slice(t)));
  return std::nullopt;
}

std::optional<int64_t> Evaluator::constInt(const Node& t, bool truth, std::string* why) const {
  if (isType(t, "Name")) {
    std::string id = t["id"];
    if (auto it = env.find(id); it != env.end()) {  // a helper's mode, bound to the caller's value
      if (it->second.k == VK::kScalar && it->second.isym) return sym::constant(it->second.isym);
      return std::nullopt;
    }
    const IrParam* p = kir_.param(id);
    if (!p || p->kind != ParamKind::kConstexpr) return std::nullopt;
    if (auto m = form_.modes.find(id); m != form_.modes.end()) return m->second;
    if (auto f = form_.flags.find(id); f != form_.flags.end()) {
      if (truth) return f->second ? 1 : 0;
      *why = "mode:" + id;  // read for its truth only, used here for its value
      return std::nullopt;
    }
    *why = (truth ? "flag:" : "mode:") + id;
    return std::nullopt;
  }
  if (isType(t, "Constant")) {
    if (t["vt"] == "bool") return t["value"].get<bool>() ? 1 : 0;
    if (auto i = intLiteral(t)) return *i;
    return std::nullopt;
  }
  if (isType(t, "UnaryOp")) {
    const std::string& op = nodeType(t["op"]);
    auto v = constInt(t["operand"], op == "Not", why);
    if (!v) return std::nullopt;
    if (op == "Not") return *v == 0 ? 1 : 0;
    if (op == "USub") return -*v;
    return std::nullopt;
  }
  if (isType(t, "BoolOp")) {  // `and` / `or` on truths
    const bool is_and = nodeType(t["op"]) == "And";
    for (const auto& x : t["values"]) {
      auto v = constInt(x, true, why);
      if (!v) return std::nullopt;
      if ((*v != 0) != is_and) return is_and ? 0 : 1;
    }
    return is_and ? 1 : 0;
  }
  if (isType(t, "BinOp")) {
    const std::string& op = nodeType(t["op"]);
    // `A | B` is true when either is (values or truths alike); any other operator needs values
    const bool either = truth && op == "BitOr";
    auto a = constInt(t["left"], either, why);
    if (!a) return std::nullopt;
    auto b = constInt(t["right"], either, why);
    if (!b) return std::nullopt;
    if (op == "BitOr") return either ? ((*a != 0) || (*b != 0) ? 1 : 0) : (*a | *b);
    if (op == "BitAnd") return *a & *b;
    if (op == "Add") return *a + *b;
    if (op == "Sub") return *a - *b;
    if (op == "Mult") return *a * *b;
    return std::nullopt;
  }
  if (isType(t, "Compare") && t["ops"].size() == 1 && t["comparators"].size() == 1) {
    auto a = constInt(t["left"], false, why);
    if (!a) return std::nullopt;
    auto b = constInt(t["comparators"][0], false, why);
    if (!b) return std::nullopt;
    const std::string& op = nodeType(t["ops"][0]);
    if (op == "Eq") return *a == *b;
    if (op == "NotEq") return *a != *b;
    if (op == "Lt") return *a < *b;
    if (op == "LtE") return *a <= *b;
    if (op == "Gt") return *a > *b;
    if (op == "GtE") return *a >= *b;
  }
  return std::nullopt;
}

int Evaluator::line(const Node& n) const {
  auto p = nodePos(n);
  return p ? p->line : 0;
}

std::string Evaluator::short_(std::string s) {
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

std::string Evaluator::tlFn(const Node& call) const {
  std::string f = ctx_.tlFunction(call);
  if (f.rfind("math.", 0) == 0) f = f.substr(5);
  return f;
}

const Node* Evaluator::arg(const Node& call, size_t i, const char* kw) const {
  if (call["args"].size() > i) return &call["args"][i];
  return keywordArg(call, kw);
}

int Evaluator::accessAt(const Node& call) const {
  auto p = nodePos(call);
  if (!p) return -1;
  // the one access there; of a helper inlined twice, the one in the loop being read
  int id = -1, in_loop = -1;
  for (const auto& a : kir_.accesses) {
    if (a.loc.line != p->line || a.loc.col != p->col) continue;
    id = id == -1 ? a.id : -2;
    if (cur_loop >= 0 && a.loop == cur_loop) in_loop = in_loop == -1 ? a.id : -2;
  }
  if (id == -2 && in_loop >= 0) return in_loop;
  return id < 0 ? -1 : id;
}

int Evaluator::descriptorAccess(const Node& call, const char* method) const {
  if (!isType(call, "Call") || !isType(call["func"], "Attribute") || call["func"]["attr"] != method) return -1;
  int a = accessAt(call);
  return a >= 0 && kir_.accesses[static_cast<size_t>(a)].descriptor >= 0 ? a : -1;
}

sym::Expr Evaluator::symOf(const Node& n) const {
  if (isType(n, "Name")) {
    auto it = env.find(n["id"]);
    if (it != env.end() && it->second.k == VK::kScalar && it->second.isym) return it->second.isym;
    return sym::var(n["id"].get<std::string>());
  }
  if (auto i = intLiteral(n)) return sym::num(*i);
  if (isType(n, "BinOp")) {
    sym::Expr a = symOf(n["left"]), b = symOf(n["right"]);
    const std::string& op = nodeType(n["op"]);
    if (op == "Add") return sym::add(a, b);
    if (op == "Sub") return sym::sub(a, b);
    if (op == "Mult") return sym::mul(a, b);
    if (op == "FloorDiv") return sym::floorDiv(a, b);
    if (op == "Mod") return sym::mod(a, b);
    return nullptr;
  }
  if (isType(n, "Call")) {
    std::string f = tlFn(n);
    if (f == "program_id") {
      const Node* a = arg(n, 0, "axis");
      auto ax = a ? intLiteral(*a) : std::optional<int64_t>(0);
      return ax ? sym::var(pidVar(static_cast<int>(*ax))) : nullptr;
    }
    std::string d = dottedName(n["func"]);
    if ((f == "minimum" || f == "maximum" || d == "min" || d == "max") && n["args"].size() == 2) {
      sym::Expr a = symOf(n["args"][0]), b = symOf(n["args"][1]);
      return (f == "minimum" || d == "min") ? sym::min(a, b) : sym::max(a, b);
    }
  }
  return nullptr;
}

bool Evaluator::scalarNode(const Node& n) const {
  bool ok = true;
  walk(n, [&](const Node& x) {
    if (isType(x, "Name")) {
      std::string id = x["id"];
      auto it = env.find(id);
      if (it != env.end()) {
        if (it->second.k != VK::kScalar) ok = false;
      } else if (!ctx_.kernel->param(id) && !ctx_.ir->module_assignments.count(id) && id != ctx_.tl() &&
                 id != "math") {
        ok = false;
      }
    } else if (isType(x, "Call")) {
      std::string f = tlFn(x);
      if (f != "program_id" && f != "num_programs" && f != "minimum" && f != "maximum" && f != "cdiv") ok = false;
    } else if (isType(x, "Subscript") || isType(x, "Compare") || isType(x, "List") || isType(x, "Tuple")) {
      ok = false;
    }
    return ok;
  });
  return ok;
}

Val Evaluator::scalarValue(const Node& n) {
  if (isType(n, "Name")) {
    auto it = env.find(n["id"]);
    if (it != env.end()) return it->second;
  }
  if (isType(n, "BinOp")) {
    const std::string& op = nodeType(n["op"]);
    if (op == "Mult" || op == "Div") {
      Val a = scalarValue(n["left"]), b = scalarValue(n["right"]);
      Val v;
      v.k = VK::kScalar;
      v.isym = symOf(n);
      v.factors = a.factors;
      if (op == "Mult") {
        v.factors.insert(v.factors.end(), b.factors.begin(), b.factors.end());
      } else {
        v.isym = nullptr;
        v.factors.push_back(reciprocal(b.factors));
      }
      return v;
    }
  }
  Val v;
  v.k = VK::kScalar;
  v.isym = symOf(n);
  bool local = false;
  walk(n, [&](const Node& x) {
    if (isType(x, "Name") && env.count(x["id"])) local = true;
    return true;
  });
  if (auto c = intLiteral(n); c && *c == 1) return v;  // factor 1
  if (!local) {
    v.factors = {"(" + ctx_.slice(n) + ")"};
  } else if (v.isym) {
    v.factors = {"(" + pythonInt(kir_, v.isym) + ")"};
  } else {
    v.factors = {"<unknown>"};
  }
  return v;
}

Val Evaluator::evalInner(const Node& n) {
  if (isNegInfNode(n)) return valOf(VK::kNegInf);
  if (isType(n, "Name")) {
    auto it = env.find(n["id"]);
    if (it != env.end()) return it->second;
    if (scalarNode(n)) return scalarValue(n);
    return unknown(fmt::format("line {}: '{}' is not a value of the kernel's attention", line(n),
                               n["id"].get<std::string>()));
  }
  if (isType(n, "Constant")) return scalarValue(n);
  if (isType(n, "Subscript")) {
    int ax = broadcastAxis(n);
    Val x = eval(n["value"]);
    if (ax < 0) return unknown("");
    if (x.k == VK::kIndex && x.bcast < 0) {
      x.bcast = ax;
      return x;
    }
    // a row vector ([BLOCK_M]) broadcast along the head dimension: m, l, alpha
    if (ax == 0 && (x.k == VK::kAlpha || x.k == VK::kMNew || x.k == VK::kLFinal || x.k == VK::kRowMax ||
                    x.k == VK::kPScale || x.k == VK::kAccScaleN) &&
        x.bcast < 0) {
      x.bcast = 0;
      return x;
    }
    return unknown("");
  }
  if (isType(n, "Call")) return call(n);
  if (isType(n, "Attribute")) {  // a dtype: tl.float16, tl.float8e5, ...
    std::string t = tlNameIn(ctx_.kernel && ctx_.kernel->home ? *ctx_.kernel->home : *ctx_.ir, n);
    if (t.rfind("float", 0) == 0 || t.rfind("bfloat", 0) == 0 || t.rfind("int", 0) == 0) {
      Val v;
      v.k = VK::kDtype;
      v.dtype = t;
      return v;
    }
  }
  if (isType(n, "IfExp")) {
    std::string why;
    std::optional<bool> on = flagTest(n["test"], &why);
    if (!on) return unknown(why);
    return eval(*on ? n["body"] : n["orelse"]);
  }
  if (isType(n, "BinOp")) return binop(n);
  if (isType(n, "Compare")) return compare(n);
  if (isType(n, "Attribute") && n["attr"] == "T") {
    Val x = eval(n["value"]);
    if (x.k == VK::kK) {
      x.transposed = !x.transposed;
      return x;
    }
    return unknown("");
  }
  if (scalarNode(n)) return scalarValue(n);
  return unknown("");
}

// What `x.to(d)` rounds to: "float16", "bfloat16", "float32"; "input" for a tile's own dtype
// (`v.dtype`) or a Q/K/V pointer's element type (`K.dtype.element_ty`, `K.type.element_ty`);
// "output" for the output pointer's; "" for anything else.
std::string Evaluator::castTarget(const Node& d) const {
  std::string q = tlNameIn(ctx_.kernel && ctx_.kernel->home ? *ctx_.kernel->home : *ctx_.ir, d);
  if (q == "float16" || q == "bfloat16" || q == "float32") return q;
  if (isType(d, "Name")) {  // a name bound to a dtype (`dtype = tl.float8e5 if FP8 else tl.float16`)
    auto it = env.find(d["id"]);
    if (it != env.end() && it->second.k == VK::kDtype) {
      const std::string& t = it->second.dtype;
      return t == "float16" || t == "bfloat16" || t == "float32" ? t : "";
    }
  }
  if (isType(d, "Attribute") && d["attr"] == "dtype" && isType(d["value"], "Name")) {
    auto it = env.find(d["value"]["id"]);
    if (it != env.end() && (it->second.k == VK::kQ || it->second.k == VK::kK || it->second.k == VK::kV)) return "input";
  }
  if (isType(d, "Attribute") && d["attr"] == "element_ty" && isType(d["value"], "Attribute") &&
      (d["value"]["attr"] == "type" || d["value"]["attr"] == "dtype") && isType(d["value"]["value"], "Name")) {
    std::string p = d["value"]["value"]["id"];
    if (p == paramOf(form_.o)) return "output";
    if (p == paramOf(form_.q) || p == paramOf(form_.k) || p == paramOf(form_.v)) return "input";
  }
  return "";
}

Val Evaluator::call(const Node& n) {
  std::string f = tlFn(n);
  // x.to(dtype)
  if (isType(n["func"], "Attribute") && n["func"]["attr"] == "to" && f.empty()) {
    Val x = eval(n["func"]["value"]);
    const Node* d = arg(n, 0, "dtype");
    if (!d) return unknown("");
    std::string dt = castTarget(*d);
    if (dt.empty()) return unknown(fmt::format("line {}: a cast to '{}'", line(n), ctx_.slice(*d)));
    if (dt == "float32") {
      if (x.k == VK::kScore || x.k == VK::kProb || x.k == VK::kOut || x.k == VK::kAccFinal) return x;
      return unknown("");
    }
    if (x.k == VK::kProb || x.k == VK::kOut || x.k == VK::kQ) {
      if (x.cast) return unknown(fmt::format("line {}: a second cast", line(n)));
      x.cast = true;
      x.dtype = dt;
      return x;
    }
    return unknown("");
  }
  if (f == "load" || (f.empty() && descriptorAccess(n, "load") >= 0)) {
    int a = accessAt(n);
    if (a == form_.q && !n["args"].empty() && f == "load") notePointerRows(eval(n["args"][0]));
    Val v;
    if (a == form_.q) v.k = VK::kQ;
    else if (a == form_.k || (a >= 0 && a == form_.k2)) v.k = VK::kK;
    else if (a == form_.v || (a >= 0 && a == form_.v2)) v.k = VK::kV;
    else return unknown(fmt::format("line {}: a load other than Q, K and V", line(n)));
    return v;
  }
  if (f == "arange") {
    Val v;
    v.k = VK::kIndex;
    const Node* s = arg(n, 0, "start");
    auto s0 = s ? intLiteral(*s) : std::nullopt;
    if (!s0 || *s0 != 0) return unknown("");
    v.isym = sym::num(0);
    return v;
  }
  if (f == "program_id") {
    Val v;
    v.k = VK::kScalar;
    v.isym = symOf(n);
    v.factors = {"<program id>"};
    return v;
  }
  if (f == "zeros" || f == "full") {
    const Node* shape = arg(n, 0, "shape");
    if (!shape || !(isType(*shape, "List") || isType(*shape, "Tuple"))) return unknown("");
    Val v;
    v.rank = static_cast<int>((*shape)["elts"].size());
    if (f == "full") {
      const Node* val = arg(n, 1, "value");
      if (!val) return unknown("");
      if (isNegInfNode(*val)) {
        if (v.rank != 1) return unknown("");
        v.k = VK::kNegInf;
        v.rank = 1;
        return v;
      }
      if (isType(*val, "Constant") && ((*val)["vt"] == "float" || (*val)["vt"] == "int")) {
        v.fill = (*val)["value"].get<double>();
      } else {
        return unknown("");
      }
    }
    v.k = VK::kInit;
    return v;
  }
  if ((f == "multiple_of" || f == "max_contiguous") && !n["args"].empty()) return eval(n["args"][0]);  // hints
  if (f == "trans" || f == "permute") {
    Val x = eval(n["args"][0]);
    if (x.k != VK::kK) return unknown("");
    x.transposed = !x.transposed;
    return x;
  }
  if (f == "dot") return dot(n);
  if (f == "max" || f == "sum") {
    const Node* ax = arg(n, 1, "axis");
    auto a = ax ? intLiteral(*ax) : std::nullopt;
    if (!a || (*a != 1 && *a != -1) || keywordArg(n, "keep_dims")) return unknown("");
    Val x = eval(n["args"][0]);
    if (f == "max" && x.k == VK::kScore) {
      x.k = VK::kRowMax;
      x.mfactors = x.factors;
      x.factors.clear();
      return x;
    }
    if (f == "sum" && x.k == VK::kProb && !x.cast && !x.norm) {
      x.k = VK::kRowSum;
      return x;
    }
    if (f == "sum" && x.k == VK::kLProb) {
      x.k = VK::kLRowSum;
      return x;
    }
    return unknown("");
  }
  if (f == "maximum") {
    if (n["args"].size() != 2) return unknown("");
    Val a = eval(n["args"][0]), b = eval(n["args"][1]);
    if (a.k == VK::kRowMax) std::swap(a, b);
    if (a.k == VK::kMCarry && b.k == VK::kRowMax && b.bcast < 0) {
      b.k = VK::kMNew;
      return b;
    }
    return unknown("");
  }
  if ((f == "log" || f == "log2") && !n["args"].empty()) {
    Val x = eval(n["args"][0]);
    if (x.k == VK::kLFinal && x.bcast < 0) {
      Val v = valOf(VK::kLogL);
      v.base = f == "log2" ? 2 : 0;
      return v;
    }
    return unknown("");
  }
  if (f == "exp" || f == "exp2") {
    Val x = eval(n["args"][0]);
    if ((x.k == VK::kDiff || x.k == VK::kMDiff) && x.bcast < 0) {
      x.k = x.k == VK::kDiff ? VK::kProb : VK::kAlpha;
      x.base = f == "exp2" ? 2 : 0;
      return x;
    }
    if ((x.k == VK::kLDiff || x.k == VK::kMLDiff) && x.bcast < 0) {
      x.k = x.k == VK::kLDiff ? VK::kLProb : VK::kBeta;
      x.base = f == "exp2" ? 2 : 0;
      return x;
    }
    return unknown("");
  }
  if (f == "where") {
    if (n["args"].size() != 3) return unknown("");
    Val c = eval(n["args"][0]), x = eval(n["args"][1]), y = eval(n["args"][2]);
    // a mask or scores the domain does not take: that is the cause to name
    for (const Val* u : {&c, &x}) {
      if (u->k == VK::kUnknown && !u->why.empty()) return *u;
    }
    // A finite fill (-1e6) stands for -inf: the route checks per call that, in the exponent,
    // it lies at least 1e4 below zero (AttentionForm::fills).
    const std::optional<double> fill = y.k == VK::kNegInf ? std::nullopt : negativeLiteral(n["args"][2]);
    auto fillConj = [&](std::vector<std::string> at, bool on_tile) {
      return Conj{"fill", fmt::format("{:.17g}", *fill), nullptr, std::move(at), on_tile};
    };
    if (c.k == VK::kMask && x.k == VK::kScore && (y.k == VK::kNegInf || fill)) {
      x.conds = mergeConds(x.conds, c.conds);
      if (fill) x.conds = mergeConds(x.conds, {fillConj(x.factors, false)});
      return x;
    }
    // a tile of zeros masked to -inf, to which the scores are added next (-inf + s = -inf),
    // or to a finite fill (tl.where(mask, 0, -1.0e6): the additive mask of Triton's tutorial)
    const Node& xn = n["args"][1];
    const bool zero = (x.k == VK::kInit && x.rank == 2 && x.fill == 0) ||
                      (isType(xn, "Constant") && xn["value"].is_number() && xn["value"].get<double>() == 0.0);
    if (c.k == VK::kMask && (zero || x.k == VK::kMaskTile) && (y.k == VK::kNegInf || fill)) {
      Val t = x.k == VK::kMaskTile ? x : valOf(VK::kMaskTile);
      t.conds = mergeConds(t.conds, c.conds);
      if (fill) t.conds = mergeConds(t.conds, {fillConj({}, true)});
      return t;
    }
    return unknown(fmt::format("line {}: a select other than tl.where(mask, scores, -inf or a large negative number)", line(n)));
  }
  if (scalarNode(n)) return scalarValue(n);
  return unknown("");
}

std::string Evaluator::paramOf(int access) const {
  if (access < 0) return "";
  return kir_.accesses[static_cast<size_t>(access)].ptr.base;
}

Val Evaluator::dot(const Node& n) {
  if (n["args"].size() < 2) return unknown("");
  const Node* acc = arg(n, 2, "acc");
  if (const Node* od = keywordArg(n, "out_dtype")) {
    if (tlNameIn(*ctx_.ir, *od) != "float32") return unknown(fmt::format("line {}: a dot with out_dtype", line(n)));
  }
  Val a = eval(n["args"][0]), b = eval(n["args"][1]);
  if (a.k == VK::kQ && b.k == VK::kK && !acc) {
    if (b.transposed != form_.k_rows) return unknown(fmt::format("line {}: K is not transposed for Q K^T", line(n)));
    Val s;
    s.k = VK::kScore;
    s.factors = a.factors;
    return s;
  }
  if (a.k == VK::kProb && a.cast && b.k == VK::kV) {
    if (!acc) {
      Val pv = a;
      pv.k = VK::kPV;
      return pv;
    }
    Val c = eval(*acc);
    if (c.k == VK::kAccScaled && c.base == a.base && sameFactors(c.factors, a.factors) && c.norm == a.norm &&
        sameFactors(c.mfactors, a.mfactors) && c.conds == a.conds) {
      Val out = a;
      out.k = VK::kAccNew;
      return out;
    }
  }
  return unknown(fmt::format("line {}: a dot other than Q K^T and P V", line(n)));
}

Val Evaluator::compare(const Node& n) {
  if (n["ops"].size() != 1) return unknown("");
  std::string op = nodeType(n["ops"][0]);
  Val a = eval(n["left"]), b = eval(n["comparators"][0]);
  auto flip = [](const std::string& o) {
    if (o == "Lt") return std::string("Gt");
    if (o == "Gt") return std::string("Lt");
    if (o == "LtE") return std::string("GtE");
    if (o == "GtE") return std::string("LtE");
    return o;
  };
  if (a.k != VK::kIndex) {
    std::swap(a, b);
    op = flip(op);
  }
  if (a.k != VK::kIndex) return unknown("");
  Val m;
  m.k = VK::kMask;
  // rows[:, None] >= keys[None, :]
  if (b.k == VK::kIndex) {
    if (a.bcast == 1) {
      std::swap(a, b);
      op = flip(op);
    }
    if (a.bcast == 0 && b.bcast == 1 && op == "GtE" && b.is_loop_var && !a.is_loop_var && a.isym) {
      m.conds = {{"causal", pythonInt(kir_, a.isym), a.isym}};
      return m;
    }
    return unknown(fmt::format("line {}: a comparison of query and key indices other than rows >= keys",
                               line(n)));
  }
  if (b.k == VK::kScalar && b.isym && op == "Lt") {
    if (a.bcast == 1 && a.is_loop_var) {
      m.conds = {{"key_bound", pythonInt(kir_, b.isym), b.isym}};
      return m;
    }
    if (a.bcast == 0 && !a.is_loop_var) {
      m.conds = {{"row_bound", pythonInt(kir_, b.isym), b.isym}};
      return m;
    }
  }
  return unknown(fmt::format("line {}: a mask other than keys < bound, rows < bound, rows >= keys", line(n)));
}

Val Evaluator::maskedScores(Val a, Val b) {
  if (b.k != VK::kScore) std::swap(a, b);
  bool zeros = a.k == VK::kInit && a.rank == 2 && a.fill == 0;
  if (b.k != VK::kScore || !(zeros || a.k == VK::kMaskTile)) return unknown("");
  for (auto& c : a.conds) {
    if (c.kind == "fill" && c.on_tile) c = Conj{"fill", c.expr, nullptr, b.factors, false};  // now in the scores' units
  }
  b.conds = mergeConds(b.conds, a.conds);
  return b;
}

Val Evaluator::binop(const Node& n) {
  return combine(nodeType(n["op"]), eval(n["left"]), eval(n["right"]), n["right"], &n);
}

Val Evaluator::combine(const std::string& op, Val a, Val b, const Node& right, const Node* whole) {
  const Node& n = whole ? *whole : right;  // where to point at (its line)
  // Pointer arithmetic: which index vector walks the tile's rows ([:, None]) and which its
  // columns ([None, :]); the rows' first index is where a program's query rows start.
  auto isCols = [](const Val& v) { return v.k == VK::kPtrCols || (v.k == VK::kIndex && v.bcast == 1); };
  auto isRows = [](const Val& v) { return v.k == VK::kPtrRows || (v.k == VK::kIndex && v.bcast == 0); };
  if (op == "Mult" && (a.k == VK::kScalar) != (b.k == VK::kScalar)) {
    const Val& x = a.k == VK::kScalar ? b : a;
    if (x.k == VK::kIndex && x.bcast >= 0) {
      Val v = x;
      v.k = x.bcast == 0 ? VK::kPtrRows : VK::kPtrCols;
      return v;
    }
  }
  if (op == "Add" && (isRows(a) || isRows(b) || isCols(a) || isCols(b))) {
    if (isRows(b) && !isRows(a)) std::swap(a, b);
    if (isCols(a) && !isCols(b)) std::swap(a, b);
    bool ok = (isRows(a) && (b.k == VK::kScalar || isCols(b))) || (isCols(a) && b.k == VK::kScalar);
    if (ok) {
      a.k = isRows(a) ? VK::kPtrRows : VK::kPtrCols;
      return a;
    }
  }
  // tl.zeros([BLOCK_M], ...) - float("inf") (the running max), + 1.0 (a running sum)
  if (a.k == VK::kInit && a.rank == 1 && (op == "Add" || op == "Sub")) {
    const Node& r = right;
    if (op == "Sub" && isPosInfNode(r)) {
      Val v;
      v.k = VK::kNegInf;
      v.rank = 1;
      return v;
    }
    if (isType(r, "Constant") && (r["vt"] == "float" || r["vt"] == "int")) {
      double x = r["value"].get<double>();
      a.fill += op == "Add" ? x : -x;
      return a;
    }
  }
  if (op == "BitAnd" && a.k == VK::kMask && b.k == VK::kMask) {
    a.conds = mergeConds(a.conds, b.conds);
    return a;
  }
  if (a.k == VK::kScalar && b.k == VK::kScalar) {
    if (whole && scalarNode(*whole)) return scalarValue(*whole);
    return unknown("");
  }
  // index vectors: u + arange
  if (op == "Add" && (a.k == VK::kIndex || b.k == VK::kIndex)) {
    if (a.k != VK::kIndex) std::swap(a, b);
    if (b.k == VK::kScalar && b.isym) {
      a.isym = sym::add(a.isym, b.isym);
      a.is_loop_var = form_.loop && sym::same(kir_.expand(a.isym), sym::var(form_.loop->var));
      return a;
    }
    return unknown("");
  }
  if (op == "Mult" || op == "Div") {
    if (b.k == VK::kScalar && op == "Div") {
      b.factors = {reciprocal(b.factors)};
    }
    if (a.k == VK::kScalar && op == "Mult") std::swap(a, b);
    if (b.k == VK::kScalar) {
      switch (a.k) {
        case VK::kQ:
          if (after_loop || a.cast) return unknown("");
          a.factors.insert(a.factors.end(), b.factors.begin(), b.factors.end());
          return a;
        case VK::kScore:
        case VK::kDiff:
        case VK::kMDiff:
          a.factors.insert(a.factors.end(), b.factors.begin(), b.factors.end());
          if (a.k == VK::kDiff || a.k == VK::kMDiff) {
            a.mfactors.insert(a.mfactors.end(), b.factors.begin(), b.factors.end());
          }
          return a;
        case VK::kRowMax:
          a.mfactors.insert(a.mfactors.end(), b.factors.begin(), b.factors.end());
          return a;
        default:
          return unknown("");
      }
    }
    // The normalized form's products and quotients, each between values of one softmax (the
    // same base, scale and masks).
    auto one = [](const Val& x, const Val& y) {
      return x.base == y.base && sameFactors(x.factors, y.factors) && sameFactors(x.mfactors, y.mfactors) &&
             x.conds == y.conds;
    };
    if (op == "Mult") {
      const VK ka = a.k, kb = b.k;
      auto is = [&](VK x, VK y) { return (ka == x && kb == y) || (ka == y && kb == x); };
      if (kb == VK::kBeta || kb == VK::kLRatio || (kb == VK::kAlpha && ka == VK::kLRatio) || kb == VK::kLProb) {
        std::swap(a, b);
      }
      // beta * rowsum(numerators) = rowsum(p)
      if (is(VK::kBeta, VK::kLRowSum) && a.bcast < 0 && b.bcast < 0 && one(a, b)) {
        b.k = VK::kRowSum;
        return b;
      }
      // l / l_new * alpha: the normalized accumulator's rescale
      if (is(VK::kLRatio, VK::kAlpha) && a.bcast < 0 && b.bcast < 0 && one(a, b)) {
        a.k = VK::kAccScaleN;
        return a;
      }
      // numerators * (beta / l_new)[:, None] = p / l_new
      if (a.k == VK::kLProb && b.k == VK::kPScale && b.bcast == 0 && one(a, b)) {
        a.k = VK::kProb;
        a.norm = true;
        return a;
      }
      // acc * (l / l_new * alpha)[:, None]
      if (is(VK::kAccCarry, VK::kAccScaleN)) {
        Val& r = a.k == VK::kAccScaleN ? a : b;
        if (r.bcast == 0) {
          r.k = VK::kAccScaled;
          r.bcast = -1;
          r.norm = true;
          return r;
        }
      }
    }
    if (op == "Div" && b.k == VK::kLNew && b.bcast < 0 && a.bcast < 0) {
      if (a.k == VK::kLCarry) {  // l / l_new (l on entry carries no softmax of its own)
        b.k = VK::kLRatio;
        return b;
      }
      if (a.k == VK::kBeta && one(a, b)) {  // beta / l_new
        a.k = VK::kPScale;
        return a;
      }
      if (a.k == VK::kLScaled && one(a, b)) {  // l * alpha / l_new
        a.k = VK::kAccScaleN;
        return a;
      }
    }
    // l * alpha, acc * alpha[:, None]
    if (op == "Mult") {
      if (b.k == VK::kLCarry || b.k == VK::kAccCarry) std::swap(a, b);
      if (a.k == VK::kLCarry && b.k == VK::kAlpha && b.bcast < 0) {
        b.k = VK::kLScaled;
        return b;
      }
      if (a.k == VK::kAccCarry && b.k == VK::kAlpha && b.bcast == 0) {
        b.k = VK::kAccScaled;
        b.bcast = -1;
        return b;
      }
    }
    // acc / l[:, None]
    if (op == "Div" && a.k == VK::kAccFinal && b.k == VK::kLFinal && b.bcast == 0) {
      Val o;
      o.k = VK::kOut;
      return o;
    }
    return unknown("");
  }
  if (op == "Sub") {
    // scores - m_new[:, None]
    if (a.k == VK::kScore && b.k == VK::kMNew && b.bcast == 0) {
      if (!sameFactors(a.factors, b.mfactors) || a.conds != b.conds) {
        return unknown(fmt::format("line {}: scores and their running max are scaled or masked differently",
                                   line(n)));
      }
      Val d;
      d.k = VK::kDiff;
      d.mfactors = a.factors;  // the scores' scale c
      d.conds = a.conds;
      return d;
    }
    // scores - rowmax(scores)[:, None]: the block's own numerators' exponent (normalized form)
    if (a.k == VK::kScore && b.k == VK::kRowMax && b.bcast == 0) {
      if (!sameFactors(a.factors, b.mfactors) || a.conds != b.conds) {
        return unknown(fmt::format("line {}: scores and their row max are scaled or masked differently", line(n)));
      }
      Val d;
      d.k = VK::kLDiff;
      d.mfactors = a.factors;
      d.conds = a.conds;
      return d;
    }
    // rowmax - m_new (beta's exponent)
    if (a.k == VK::kRowMax && b.k == VK::kMNew && a.bcast < 0 && b.bcast < 0 && sameFactors(a.mfactors, b.mfactors) &&
        a.conds == b.conds) {
      Val d;
      d.k = VK::kMLDiff;
      d.mfactors = b.mfactors;
      d.conds = b.conds;
      return d;
    }
    // m - m_new
    if (a.k == VK::kMCarry && b.k == VK::kMNew && b.bcast < 0) {
      Val d;
      d.k = VK::kMDiff;
      d.mfactors = b.mfactors;
      d.conds = b.conds;
      return d;
    }
    return unknown("");
  }
  if (op == "Add" && (a.k == VK::kLogL || b.k == VK::kLogL)) {
    if (a.k == VK::kLogL) std::swap(a, b);
    if (a.k == VK::kMFinal && a.bcast < 0) {
      Val v = valOf(VK::kLse);
      v.base = b.base;
      return v;
    }
    return unknown("");
  }
  if (op == "Add") {
    Val t = maskedScores(a, b);
    if (t.k == VK::kScore) return t;
    if (b.k == VK::kLScaled || b.k == VK::kAccScaled) std::swap(a, b);
    // l * alpha + rowsum(p)
    if (a.k == VK::kLScaled && b.k == VK::kRowSum && a.base == b.base && sameFactors(a.factors, b.factors) &&
        sameFactors(a.mfactors, b.mfactors) && a.conds == b.conds) {
      a.k = VK::kLNew;
      return a;
    }
    if (a.k == VK::kAccScaled && b.k == VK::kPV && a.base == b.base && sameFactors(a.factors, b.factors) &&
        sameFactors(a.mfactors, b.mfactors) && a.conds == b.conds && a.norm == b.norm) {
      a.k = VK::kAccNew;
      a.dtype = b.dtype;
      return a;
    }
    return unknown("");
  }
  return unknown("");
}

}  // namespace tf::attention

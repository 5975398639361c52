#include "transform/row_block.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace tf {
namespace {

// The shape a value has once the rows are a tile. kScalar and kVector do not depend on the
// row and keep their shape; kOther is anything else no row changes (a 2-D tile, a value of
// a function the analysis does not know); the two per-row kinds gain a leading ROWS axis.
enum class RowKind { kScalar, kVector, kOther, kRowScalar, kRowVector };

bool perRow(RowKind k) { return k == RowKind::kRowScalar || k == RowKind::kRowVector; }

struct Refused {
  std::string why;
};

const std::set<std::string>& elementwise() {
  static const std::set<std::string> fns = {
      "abs",  "exp",     "exp2",    "log",   "log2",  "sqrt",  "sqrt_rn", "rsqrt", "sin",   "cos",  "sigmoid",
      "erf",  "floor",   "ceil",    "fma",   "maximum", "minimum", "where", "clamp", "div_rn", "fdiv", "umulhi",
      "cdiv", "cast",    "isnan",   "isinf", "signbit"};
  return fns;
}

bool isReduction(const std::string& fn) {
  return fn == "sum" || fn == "max" || fn == "min" || fn == "argmax" || fn == "argmin" || fn == "xor_sum" ||
         fn == "reduce";
}
bool isScan(const std::string& fn) { return fn == "cumsum" || fn == "cumprod" || fn == "associative_scan"; }

class Planner {
 public:
  Planner(const PassContext& ctx, std::string row, std::string rows)
      : ctx_(ctx), row_(std::move(row)), rows_(std::move(rows)) {
    kinds_[row_] = RowKind::kRowScalar;
  }

  void body(const Node& stmts, const Node* trailing_return) {
    for (const auto& s : stmts) {
      if (&s == trailing_return) continue;
      if (isType(s, "Assign") && s["targets"].size() == 1 && isType(s["targets"][0], "Name") &&
          s["targets"][0]["id"] == row_) {
        continue;  // the row variable itself: the pass rewrites it
      }
      stmt(s);
    }
  }

  RowBlockPlan plan() const {
    RowBlockPlan p;
    auto sorted = [&](const std::set<const Node*>& s) {
      std::vector<const Node*> v(s.begin(), s.end());
      std::sort(v.begin(), v.end(), [&](const Node* a, const Node* b) { return ctx_.range(*a).begin < ctx_.range(*b).begin; });
      return v;
    };
    p.reductions = sorted(reductions_);
    p.scans = sorted(scans_);
    p.row_access = sorted(access_);
    p.barriers = sorted(barriers_);
    for (const auto& [n, text] : inits_) p.inits.push_back({n, text});
    std::sort(p.inits.begin(), p.inits.end(),
              [&](const auto& a, const auto& b) { return ctx_.range(*a.first).begin < ctx_.range(*b.first).begin; });
    return p;
  }

 private:
  [[noreturn]] void refuse(const Node& at, const std::string& what) const {
    auto pos = nodePos(at);
    throw Refused{fmt::format("line {}: {}", pos ? pos->line : 0, what)};
  }

  RowKind join(RowKind a, RowKind b, const Node& at) const {
    using K = RowKind;
    if (a == K::kScalar) return b;
    if (b == K::kScalar) return a;
    if (a == K::kOther || b == K::kOther) {
      if (perRow(a) || perRow(b)) {
        refuse(at, fmt::format("`{}` combines a per-row value with a value of unknown shape", ctx_.slice(at)));
      }
      return K::kOther;
    }
    if (a == b) return a;
    if (a == K::kVector && b == K::kVector) return K::kVector;
    return K::kRowVector;  // a row vector with anything, or a vector with a row scalar
  }

  std::string text(const Node& n) const { return ctx_.slice(n); }

  // --- expressions -----------------------------------------------------------------------
  RowKind kind(const Node& e) {
    using K = RowKind;
    if (!e.is_object()) return K::kScalar;
    const std::string& t = nodeType(e);
    if (t == "Constant") return K::kScalar;
    if (t == "Name") {
      auto it = kinds_.find(e["id"].get<std::string>());
      return it == kinds_.end() ? K::kScalar : it->second;
    }
    if (t == "Attribute") {
      K v = kind(e["value"]);
      if (perRow(v) && (e["attr"] == "T")) refuse(e, "transposes a per-row value");
      return K::kScalar;  // x.dtype, ptr.dtype.element_ty, tl.float32
    }
    if (t == "BinOp") return join(kind(e["left"]), kind(e["right"]), e);
    if (t == "UnaryOp") {
      K v = kind(e["operand"]);
      if (perRow(v) && isType(e["op"], "Not")) refuse(e, "`not` of a per-row value");
      return v;
    }
    if (t == "Compare") {
      K v = kind(e["left"]);
      for (const auto& c : e["comparators"]) v = join(v, kind(c), e);
      for (const auto& op : e["ops"]) {
        const std::string& o = nodeType(op);
        if (perRow(v) && (o == "In" || o == "NotIn" || o == "Is" || o == "IsNot")) {
          refuse(e, fmt::format("`{}` compares a per-row value with `{}`", text(e), o));
        }
      }
      return v;
    }
    if (t == "BoolOp") {
      K v = K::kScalar;
      for (const auto& x : e["values"]) v = join(v, kind(x), e);
      if (perRow(v)) refuse(e, fmt::format("`{}`: `and` / `or` of per-row values", text(e)));
      return v;
    }
    if (t == "IfExp") {
      if (perRow(kind(e["test"]))) refuse(e, fmt::format("`{}` chooses by a per-row condition", text(e)));
      return join(kind(e["body"]), kind(e["orelse"]), e);
    }
    if (t == "Subscript") {
      K v = kind(e["value"]);
      if (perRow(v) || perRow(kind(e["slice"]))) refuse(e, fmt::format("`{}` indexes a per-row value", text(e)));
      return v == K::kScalar ? K::kScalar : K::kOther;
    }
    if (t == "Tuple" || t == "List") {
      for (const auto& x : e["elts"]) {
        if (perRow(kind(x))) refuse(e, fmt::format("`{}` puts a per-row value in a {}", text(e), t == "List" ? "list" : "tuple"));
      }
      return K::kScalar;
    }
    if (t == "Call") return call(e);
    bool row = false;
    forEachName(e, [&](const Node& n) { row = row || perRow(kind(n)); });
    if (row) refuse(e, fmt::format("a {} over per-row values is not handled", t));
    return K::kOther;
  }

  // The axis a reduction or a scan names is the row's (0, or none for a 1-D value).
  void checkAxis(const Node& call, size_t axis_position) {
    const Node* axis = keywordArg(call, "axis");
    if (!axis && call["args"].size() > axis_position) axis = &call["args"][axis_position];
    bool ok = !axis || intLiteral(*axis) == 0 || (isType(*axis, "Constant") && (*axis)["value"].is_null());
    if (!ok) refuse(call, fmt::format("`{}` does not reduce over the row (axis 0)", text(call)));
    for (const auto& kw : call["keywords"]) {
      std::string k = kw["arg"].is_string() ? kw["arg"].get<std::string>() : "**";
      if (k == "keep_dims" || k == "return_indices" || k == "**") {
        if (k == "keep_dims" && isType(kw["value"], "Constant") && kw["value"]["value"] == false) continue;
        refuse(call, fmt::format("`{}`: the keyword `{}` is not handled", text(call), k));
      }
    }
  }

  RowKind argsJoin(const Node& call) {
    RowKind v = RowKind::kScalar;
    for (const auto& a : call["args"]) v = join(v, kind(a), call);
    for (const auto& kw : call["keywords"]) v = join(v, kind(kw["value"]), call);
    return v;
  }

  RowKind call(const Node& e) {
    using K = RowKind;
    const Node& func = e["func"];
    std::string fn = ctx_.tlFunction(e);
    if (fn.empty()) {
      std::string dotted = dottedName(func);
      if (dotted.find("libdevice.") != std::string::npos) return argsJoin(e);
      if (isType(func, "Attribute")) {
        K obj = kind(func["value"]);
        if (perRow(obj)) {
          std::string m = func["attr"].get<std::string>();
          if (m != "to") refuse(e, fmt::format("the method .{}() of a per-row value is not handled", m));
          for (const auto& a : e["args"]) {
            if (perRow(kind(a))) refuse(e, fmt::format("`{}` converts to a per-row type", text(e)));
          }
          return obj;
        }
      }
      K v = argsJoinNoRow(e, fmt::format("`{}` is called with a per-row value: it is not known to work per element",
                                         dotted.empty() ? text(func) : dotted));
      return v == K::kScalar ? K::kScalar : K::kOther;
    }
    if (fn.rfind("math.", 0) == 0 || fn.find("libdevice.") != std::string::npos || elementwise().count(fn)) {
      return argsJoin(e);
    }
    if (fn == "arange") {
      argsJoinNoRow(e, "tl.arange of a per-row value");
      return K::kVector;
    }
    if (fn == "program_id" || fn == "num_programs") return K::kScalar;
    if (fn == "zeros" || fn == "full" || fn == "empty") {
      const Node* shape = keywordArg(e, "shape");
      if (!shape && !e["args"].empty()) shape = &e["args"][0];
      argsJoinNoRow(e, fmt::format("`{}` fills with a per-row value", text(e)));
      if (!shape || !(isType(*shape, "List") || isType(*shape, "Tuple"))) return K::kOther;
      size_t n = (*shape)["elts"].size();
      return n == 0 ? K::kScalar : n == 1 ? K::kVector : K::kOther;
    }
    if (fn == "zeros_like" || fn == "full_like" || fn == "empty_like") {
      return e["args"].empty() ? K::kOther : kind(e["args"][0]);
    }
    if (isReduction(fn) || isScan(fn)) {
      if (e["args"].empty()) return K::kOther;
      K x = kind(e["args"][0]);
      for (size_t i = 1; i < e["args"].size(); ++i) {
        if (perRow(kind(e["args"][i]))) refuse(e, fmt::format("`{}`: a per-row argument", text(e)));
      }
      if (x == K::kRowScalar) refuse(e, fmt::format("`{}` reduces a per-row scalar", text(e)));
      if (x != K::kRowVector) return isReduction(fn) && x == K::kVector ? K::kScalar : x;
      checkAxis(e, 1);
      if (isReduction(fn)) {
        reductions_.insert(&e);
        return K::kRowScalar;
      }
      scans_.insert(&e);
      return K::kRowVector;
    }
    if (fn == "load") return load(e);
    if (fn == "store") return store(e);
    if (fn == "debug_barrier" || fn == "static_print" || fn == "static_assert" || fn == "device_print" ||
        fn == "device_assert" || fn == "assume") {
      return K::kScalar;
    }
    if (fn == "multiple_of" || fn == "max_contiguous" || fn == "max_constancy") {
      if (e["args"].empty()) return K::kOther;
      K x = kind(e["args"][0]);
      if (perRow(x) && e["args"].size() > 1 && (isType(e["args"][1], "List") || isType(e["args"][1], "Tuple"))) {
        refuse(e, fmt::format("`{}` names one value per dimension of a per-row value", text(e)));
      }
      return x;
    }
    K v = argsJoinNoRow(e, fmt::format("tl.{} of a per-row value is not handled", fn));
    return v == K::kScalar ? K::kScalar : K::kOther;
  }

  RowKind argsJoinNoRow(const Node& call, const std::string& why) {
    RowKind v = RowKind::kScalar;
    auto add = [&](const Node& a) {
      RowKind k = kind(a);
      if (perRow(k)) refuse(call, why);
      v = v == RowKind::kScalar ? k : (k == RowKind::kScalar ? v : RowKind::kOther);
    };
    for (const auto& a : call["args"]) add(a);
    for (const auto& kw : call["keywords"]) add(kw["value"]);
    return v;
  }

  RowKind load(const Node& e) {
    if (e["args"].empty()) refuse(e, "a tl.load without a pointer");
    RowKind ptr = kind(e["args"][0]);
    RowKind v = argsJoin(e);
    if (perRow(ptr)) {
      if (e["args"].size() > 1) refuse(e, "the load passes its mask positionally");
      access_.insert(&e);
    }
    std::set<std::string> roots = rootsOf(e["args"][0]);
    bool after_store = stored_unknown_ || std::any_of(roots.begin(), roots.end(), [&](const std::string& r) {
                         return stored_.count(r) > 0;
                       });
    if (after_store && current_) barriers_.insert(current_);
    return v;
  }

  RowKind store(const Node& e) {
    if (e["args"].size() < 2) refuse(e, "a tl.store without a pointer and a value");
    RowKind ptr = kind(e["args"][0]);
    RowKind v = argsJoin(e);
    if (perRow(v) && !perRow(ptr)) refuse(e, "a per-row value is stored through a pointer no row changes");
    if (perRow(ptr)) {
      if (e["args"].size() > 2) refuse(e, "the store passes its mask positionally");
      access_.insert(&e);
    }
    std::set<std::string> roots = rootsOf(e["args"][0]);
    if (roots.empty()) stored_unknown_ = true;
    stored_.insert(roots.begin(), roots.end());
    return RowKind::kScalar;
  }

  // The kernel parameters a pointer expression is based on: the operands of its additions
  // (a product is an offset, not a base), followed through local names.
  std::set<std::string> rootsOf(const Node& e) const {
    std::set<std::string> out;
    if (!e.is_object()) return out;
    const std::string& t = nodeType(e);
    if (t == "Name") {
      std::string id = e["id"].get<std::string>();
      if (auto it = roots_.find(id); it != roots_.end()) return it->second;
      const Param* p = ctx_.kernel->param(id);
      if (p && !p->is_constexpr) out.insert(id);
    } else if (t == "BinOp" && (isType(e["op"], "Add") || isType(e["op"], "Sub"))) {
      out = rootsOf(e["left"]);
      auto r = rootsOf(e["right"]);
      out.insert(r.begin(), r.end());
    } else if (t == "Subscript") {
      out = rootsOf(e["value"]);
    } else if (t == "IfExp") {
      out = rootsOf(e["body"]);
      auto r = rootsOf(e["orelse"]);
      out.insert(r.begin(), r.end());
    } else if (t == "Call") {
      std::string fn = ctx_.tlFunction(e);
      if (isType(e["func"], "Attribute") && fn.empty()) return rootsOf(e["func"]["value"]);  // ptr.to(...)
      if (fn == "where" && e["args"].size() == 3) {
        out = rootsOf(e["args"][1]);
        auto r = rootsOf(e["args"][2]);
        out.insert(r.begin(), r.end());
      } else if (!e["args"].empty()) {
        out = rootsOf(e["args"][0]);  // multiple_of, make_block_ptr(base, ...), advance(p, ...)
      } else if (const Node* base = keywordArg(e, "base")) {
        out = rootsOf(*base);
      }
    }
    return out;
  }

  // --- statements ------------------------------------------------------------------------
  void bind(const std::string& name, RowKind k, const Node* def, std::set<std::string> roots) {
    kinds_[name] = k;
    if (def) defs_[name] = def;
    else defs_.erase(name);
    roots_[name] = std::move(roots);
  }

  bool isStatic(const Node& e) const {
    const std::string& t = nodeType(e);
    if (t == "Constant") return true;
    if (t == "Name") {
      const Param* p = ctx_.kernel->param(e["id"].get<std::string>());
      return p && p->is_constexpr;
    }
    if (t == "UnaryOp") return isStatic(e["operand"]);
    if (t == "BinOp") return isStatic(e["left"]) && isStatic(e["right"]);
    if (t == "BoolOp") {
      return std::all_of(e["values"].begin(), e["values"].end(), [&](const Node& x) { return isStatic(x); });
    }
    if (t == "Compare") {
      if (!isStatic(e["left"])) return false;
      return std::all_of(e["comparators"].begin(), e["comparators"].end(), [&](const Node& x) { return isStatic(x); });
    }
    return false;
  }

  void stmts(const Node& list) {
    for (const auto& s : list) stmt(s);
  }

  void stmt(const Node& s) {
    const std::string& t = nodeType(s);
    const Node* saved = current_;
    current_ = &s;
    if (t == "Assign" || t == "AnnAssign") {
      if (t == "AnnAssign" && !s["value"].is_object()) {
        current_ = saved;
        return;
      }
      RowKind v = kind(s["value"]);
      const Node& target = t == "Assign" ? s["targets"][0] : s["target"];
      if (t == "Assign" && s["targets"].size() != 1) refuse(s, "chained assignment");
      if (isType(target, "Name")) {
        bind(target["id"].get<std::string>(), v, &s, rootsOf(s["value"]));
      } else if (isType(target, "Tuple") || isType(target, "List")) {
        if (perRow(v)) refuse(s, "unpacks a per-row value");
        for (const auto& x : target["elts"]) {
          if (!isType(x, "Name")) refuse(s, "unpacks into something else than names");
          bind(x["id"].get<std::string>(), v == RowKind::kScalar ? RowKind::kScalar : RowKind::kOther, nullptr, {});
        }
      } else {
        refuse(s, fmt::format("assigns to `{}`", text(target)));
      }
    } else if (t == "AugAssign") {
      const Node& target = s["target"];
      if (!isType(target, "Name")) refuse(s, fmt::format("assigns to `{}`", text(target)));
      std::string name = target["id"].get<std::string>();
      RowKind before = kinds_.count(name) ? kinds_[name] : RowKind::kScalar;
      RowKind v = join(before, kind(s["value"]), s);
      kinds_[name] = v;
      auto r = rootsOf(s["value"]);
      roots_[name].insert(r.begin(), r.end());
    } else if (t == "Expr") {
      if (!isType(s["value"], "Constant")) kind(s["value"]);
    } else if (t == "Pass") {
    } else if (t == "If") {
      ifStmt(s);
    } else if (t == "For" || t == "While") {
      loop(s);
    } else if (t == "Assert") {
      if (perRow(kind(s["test"]))) refuse(s, "asserts a per-row condition");
    } else if (t == "Return") {
      refuse(s, "a `return` inside the body would end every row of the program");
    } else {
      refuse(s, fmt::format("a {} statement is not handled", t));
    }
    current_ = saved;
  }

  void ifStmt(const Node& s) {
    if (perRow(kind(s["test"]))) refuse(s, "an `if` on a per-row value: the rows of one program would take different branches");
    bool fixed = isStatic(s["test"]);
    auto before = kinds_;
    stmts(s["body"]);
    auto in_body = kinds_;
    kinds_ = before;
    stmts(s["orelse"]);
    auto in_else = kinds_;
    std::set<std::string> names;
    for (const auto& [n, k] : in_body) names.insert(n);
    for (const auto& [n, k] : in_else) names.insert(n);
    for (const auto& n : names) {
      auto b = in_body.find(n), o = in_else.find(n);
      if (b == in_body.end() || o == in_else.end() || b->second == o->second) {
        kinds_[n] = b != in_body.end() ? b->second : o->second;
        continue;
      }
      if (!fixed && (perRow(b->second) != perRow(o->second))) {
        refuse(s, fmt::format("'{}' is per-row after one branch of the `if` only", n));
      }
      kinds_[n] = join(b->second, o->second, s);
    }
    // A name bound inside a branch has no one initial value for a later loop.
    walk(s, [&](const Node& x) {
      if (isType(x, "Name") && x["ctx"] == "Store") defs_.erase(x["id"].get<std::string>());
      return true;
    });
  }

  void loop(const Node& s) {
    bool is_for = isType(s, "For");
    if (is_for) {
      if (perRow(kind(s["iter"]))) refuse(s, "the loop's bounds depend on the row");
      forEachName(s["target"], [&](const Node& n) { bind(n["id"].get<std::string>(), RowKind::kScalar, nullptr, {}); });
    } else if (perRow(kind(s["test"]))) {
      refuse(s, "the loop's condition depends on the row");
    }
    if (!s["orelse"].empty()) refuse(s, "a loop with an `else`");
    auto before = kinds_;
    auto defs_before = defs_;
    for (int i = 0; i < 4; ++i) {
      auto entry = kinds_;
      stmts(s["body"]);
      if (!is_for) kind(s["test"]);
      bool changed = false;
      for (auto& [n, k] : kinds_) {
        auto e = entry.find(n);
        if (e == entry.end()) continue;
        RowKind joined = join(e->second, k, s);
        if (joined != e->second) changed = true;
        k = joined;
      }
      if (!changed) break;
    }
    // Names carried into the loop that became per-row in it: their initial value must be.
    for (const auto& [n, was] : before) {
      RowKind now = kinds_[n];
      if (now == was) continue;
      auto d = defs_before.find(n);
      const Node* def = d == defs_before.end() ? nullptr : d->second;
      if (!def || !widenInit(*def, was, now)) {
        refuse(s, fmt::format("'{}' is carried by the loop and becomes per-row in it; its initial value{} is not "
                              "rewritten",
                              n, def ? fmt::format(" `{}` (line {})", text((*def)["value"]), nodePos(*def)->line) : ""));
      }
    }
  }

  // A Python number (0.0, -float("inf"), 1e-6), and its Triton type.
  std::optional<std::string> pythonNumberType(const Node& e) const {
    const std::string& t = nodeType(e);
    if (t == "Constant") {
      const Node& v = e["value"];
      if (v.is_boolean()) return "int1";
      if (v.is_number_integer()) return "int32";
      if (v.is_number_float()) return "float32";
      return std::nullopt;
    }
    if (t == "UnaryOp" && (isType(e["op"], "USub") || isType(e["op"], "UAdd"))) return pythonNumberType(e["operand"]);
    if (t == "Call" && isType(e["func"], "Name") && e["func"]["id"] == "float") return "float32";
    if (t == "BinOp") {
      auto a = pythonNumberType(e["left"]), b = pythonNumberType(e["right"]);
      if (!a || !b) return std::nullopt;
      return *a == "float32" || *b == "float32" ? "float32" : *a;
    }
    return std::nullopt;
  }

  bool widenInit(const Node& def, RowKind was, RowKind now) {
    const Node& value = def["value"];
    if (was == RowKind::kScalar && now == RowKind::kRowScalar) {
      auto type = pythonNumberType(value);
      if (!type) return false;
      inits_[&value] = fmt::format("{}.full([{}, 1], {}, {}.{})", ctx_.tl(), rows_, text(value), ctx_.tl(), *type);
      return true;
    }
    if (was == RowKind::kVector && now == RowKind::kRowVector && isType(value, "Call")) {
      std::string fn = ctx_.tlFunction(value);
      if (fn != "zeros" && fn != "full") return false;
      const Node* shape = keywordArg(value, "shape");
      if (!shape && !value["args"].empty()) shape = &value["args"][0];
      if (!shape || !(isType(*shape, "List") || isType(*shape, "Tuple")) || (*shape)["elts"].size() != 1) return false;
      std::string extent = text((*shape)["elts"][0]);
      inits_[shape] = isType(*shape, "List") ? fmt::format("[{}, {}]", rows_, extent) : fmt::format("({}, {})", rows_, extent);
      return true;
    }
    return false;
  }

  const PassContext& ctx_;
  std::string row_, rows_;
  std::map<std::string, RowKind> kinds_;
  std::map<std::string, const Node*> defs_;               // the assignment that last bound each name
  std::map<std::string, std::set<std::string>> roots_;    // the pointer parameters a name is based on
  std::set<std::string> stored_;                          // pointer parameters stored through so far
  bool stored_unknown_ = false;                           // a store through a pointer of unknown base
  const Node* current_ = nullptr;                         // the statement being read
  std::set<const Node*> reductions_, scans_, access_, barriers_;
  std::map<const Node*, std::string> inits_;
};

}  // namespace

std::optional<RowBlockPlan> planRowBlock(const PassContext& ctx, const std::string& row, const std::string& rows,
                                         std::string* why) {
  if (!ctx.facts.dots.empty()) {
    *why = "the kernel has a tl.dot: not a row-wise kernel";
    return std::nullopt;
  }
  Planner p(ctx, row, rows);
  try {
    p.body(ctx.body(), ctx.trailingBareReturn());
  } catch (const Refused& r) {
    *why = r.why;
    return std::nullopt;
  }
  return p.plan();
}

}  // namespace tf

// Builds the Kernel IR by abstract interpretation of a kernel's body.
//
// Map: Value (what the interpreter knows about one Python value) -> Builder::stmt / expr /
// call (one method per construct) -> record* (append facts) -> finish() (parameter kinds,
// program-id axes). Loops run their body twice: a first pass whose facts are thrown away
// finds loop-carried increments (a_ptrs += BLOCK_K * stride_ak; tl.advance), the second
// records with those increments expressed per iteration.
//
// Bounded work (issue 11): symbolic expressions are capped by sym::kMaxTerms / kMaxDepth
// (noteLimits says at which statement, in the IR's notes), and a kernel interprets at most
// kMaxInlinedSteps statements inside inlined helpers, its module at most its InlineBudget:
// past either, calls to @triton.jit helpers are no longer inlined (helpers that call helpers
// several times multiply the work at every level).
#include "kernel/kernel_ir.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

namespace tf {

const char* toString(ParamKind k) {
  switch (k) {
    case ParamKind::kPointer: return "pointer";
    case ParamKind::kScalar: return "scalar";
    case ParamKind::kConstexpr: return "constexpr";
    case ParamKind::kDescriptor: return "descriptor";
    case ParamKind::kUnused: return "unused";
    case ParamKind::kUnknown: return "unknown";
  }
  return "unknown";
}

const char* toString(AccessKind k) {
  switch (k) {
    case AccessKind::kLoad: return "load";
    case AccessKind::kStore: return "store";
    case AccessKind::kAtomic: return "atomic";
  }
  return "load";
}

std::string pidVar(int axis) { return fmt::format("program_id({})", axis); }
std::string numProgramsVar(int axis) { return fmt::format("num_programs({})", axis); }

int dtypeBytes(const std::string& d) {
  if (d == "fp64" || d == "i64" || d == "u64") return 8;
  if (d == "fp32" || d == "i32" || d == "u32" || d == "tf32") return 4;
  if (d == "fp16" || d == "bf16" || d == "i16" || d == "u16") return 2;
  if (d == "i8" || d == "u8" || d.rfind("fp8", 0) == 0 || d == "i1") return 1;
  return 0;
}

bool isFloatDtype(const std::string& d) { return d.rfind("fp", 0) == 0 || d == "bf16" || d == "tf32"; }

const IrParam* KernelIR::param(std::string_view n) const {
  for (const auto& p : params) if (p.name == n) return &p;
  return nullptr;
}

void KernelIR::setLocal(const std::string& name, const sym::Expr& def) {
  locals[name] = def;
  expanded_locals_.clear();
}

// A local that refers to itself through others (not built by the IR builder, which names no
// reassigned variable) keeps its name where the cycle closes; such partial results are not
// remembered.
sym::Expr KernelIR::expandLocal(const std::string& name, std::set<std::string>& active, bool& cyclic) const {
  auto memo = expanded_locals_.find(name);
  if (memo != expanded_locals_.end()) return memo->second;
  auto it = locals.find(name);
  if (it == locals.end()) return nullptr;
  if (!active.insert(name).second) {
    cyclic = true;
    return nullptr;
  }
  bool inner_cyclic = false;
  sym::Expr r = sym::substitute(it->second, [&](const std::string& n) { return expandLocal(n, active, inner_cyclic); });
  active.erase(name);
  if (inner_cyclic) cyclic = true;
  else expanded_locals_[name] = r;
  return r;
}

sym::Expr KernelIR::expand(const sym::Expr& e) const {
  std::set<std::string> active;
  bool cyclic = false;
  return sym::substitute(e, [&](const std::string& n) { return expandLocal(n, active, cyclic); });
}

namespace {

// Statements interpreted inside inlined helpers for one kernel (at every call, loop bodies
// twice) before calls stop being inlined: the corpus' kernels interpret under 100 in all.
constexpr int64_t kMaxInlinedSteps = 10000;

std::string dtypeFromTritonName(const std::string& attr) {
  static const std::map<std::string, std::string> names = {
      {"float16", "fp16"}, {"bfloat16", "bf16"}, {"float32", "fp32"}, {"float64", "fp64"},
      {"int8", "i8"}, {"int16", "i16"}, {"int32", "i32"}, {"int64", "i64"}, {"int1", "i1"},
      {"uint8", "u8"}, {"uint16", "u16"}, {"uint32", "u32"}, {"uint64", "u64"},
      {"float8e4nv", "fp8e4nv"}, {"float8e5", "fp8e5"}, {"float8e4b15", "fp8e4b15"},
      {"float8e4b8", "fp8e4b8"}, {"float8e5b16", "fp8e5b16"},
      {"fp16", "fp16"}, {"bf16", "bf16"}, {"fp32", "fp32"}, {"fp64", "fp64"}};
  auto it = names.find(attr);
  return it == names.end() ? "" : it->second;
}

int floatRank(const std::string& d) {
  if (d == "fp64") return 5;
  if (d == "fp32") return 4;
  if (d == "fp16" || d == "bf16") return 3;
  if (d.rfind("fp8", 0) == 0) return 2;
  return 0;
}

int intRank(const std::string& d) {
  if (d == "i64" || d == "u64") return 4;
  if (d == "i32" || d == "u32") return 3;
  if (d == "i16" || d == "u16") return 2;
  if (d == "i8" || d == "u8") return 1;
  return 0;
}

// Python literals promote like scalars: they never widen a tensor of their own kind.
const char* kPyInt = "int-literal";
const char* kPyFloat = "float-literal";

std::string promote(const std::string& a, bool a_scalar, const std::string& b, bool b_scalar) {
  if (a.empty() || b.empty()) return "";
  auto lit = [](const std::string& d) { return d == kPyInt || d == kPyFloat; };
  if (lit(a) && lit(b)) return a == kPyFloat || b == kPyFloat ? kPyFloat : kPyInt;
  if (lit(a) || lit(b)) {
    const std::string& t = lit(a) ? b : a;
    const std::string& l = lit(a) ? a : b;
    if (l == kPyFloat && !isFloatDtype(t)) return "fp32";
    return t;
  }
  if (a == b) return a;
  bool fa = isFloatDtype(a), fb = isFloatDtype(b);
  // A scalar of the same kind takes the tensor's type.
  if (a_scalar != b_scalar && fa == fb) return a_scalar ? b : a;
  if (fa && fb) {
    if ((a == "fp16" && b == "bf16") || (a == "bf16" && b == "fp16")) return "fp32";
    return floatRank(a) >= floatRank(b) ? a : b;
  }
  if (fa) return a;
  if (fb) return b;
  if (a == "i1") return b;
  if (b == "i1") return a;
  return intRank(a) >= intRank(b) ? a : b;
}

struct Term {
  int axis = 0;
  sym::Expr stride;
  sym::Expr extent;
  std::string index;
  std::string wrap;
  sym::Expr wrap_by;
  int arange = -1;
};

struct Aff {
  sym::Expr offset = sym::num(0);
  std::vector<Term> terms;
  std::vector<std::string> irregular;
  bool scalar() const { return terms.empty() && irregular.empty(); }
};

struct Value {
  bool shape_known = false;
  std::vector<sym::Expr> dims;     // when shape_known; {} is a scalar
  std::string dtype;               // element type; "" unknown
  bool is_pointer = false;
  std::string pointee;
  bool data = false;               // depends on loaded data or is an accumulator
  std::optional<Aff> aff;
  int block_ptr = -1, desc = -1;
  std::string dtype_obj;           // this value is a dtype
  bool is_tuple = false;
  std::vector<Value> items;
  bool is_none = false;
  std::optional<std::string> str_value;
  int access = -1;                 // the load it comes from (through casts / transposes)
  bool transposed = false;
  bool dot_result = false;         // straight out of tl.dot (an add into it is part of the MMA)
  bool from_dot = false;           // computed from a dot's result (an accumulator)
  std::vector<MaskBound> bounds;   // for masks: index < bound parts
  bool is_mask = false;

  bool isScalar() const { return shape_known && dims.empty(); }
  sym::Expr sym() const { return aff && aff->scalar() ? aff->offset : nullptr; }
  size_t rank() const { return dims.size(); }
};

Value scalarValue(const sym::Expr& e) {
  Value v;
  v.shape_known = true;
  v.aff = Aff{e, {}, {}};
  return v;
}

Value unknown() { return Value{}; }

class Builder {
 public:
  Builder(const ModuleIR& ir, const Kernel& k, const ParamTypes& types)
      : ir_(ir), k_(k), types_(types), src_(ir.source->source) {}

  KernelIR build() {
    out_.name = k_.name;
    if (auto p = nodePos(*k_.def)) out_.loc = {p->line, p->col};
    countAssignments(k_.def->at("body"));
    findIntEvidence(*k_.def);
    for (const auto& p : k_.params) {
      Value v;
      auto t = types_.types.find(p.name);
      if (p.is_constexpr) {
        auto val = types_.values.find(p.name);
        v = scalarValue(val != types_.values.end() ? sym::num(val->second) : sym::var(p.name));
      } else {
        v = scalarValue(sym::var(p.name));
        if (t != types_.types.end()) {
          if (!t->second.empty() && t->second[0] == '*') {
            v.is_pointer = true;
            v.pointee = t->second.substr(1);
          } else {
            v.dtype = t->second;
          }
        }
      }
      env_[p.name] = v;
    }
    block(k_.def->at("body"));
    finish();
    summarizeLimits();
    return std::move(out_);
  }

 private:
  // ---- bookkeeping -----------------------------------------------------------------------
  IrLoc loc(const Node& n) const {
    auto p = nodePos(n);
    return p ? IrLoc{p->line, p->col} : IrLoc{};
  }

  std::string text(const Node& n, size_t max = 120) const {
    std::string s = src_.slice(n);
    for (auto& c : s) if (c == '\n') c = ' ';
    // Collapse runs of spaces left by line continuations.
    std::string t;
    for (char c : s) {
      if (c == ' ' && !t.empty() && t.back() == ' ') continue;
      t += c;
    }
    if (t.size() > max) t = t.substr(0, max - 3) + "...";
    return t;
  }

  // A call site once, however many times it is inlined (a helper called from a helper
  // called twice): the list stays as long as the source, not as the work.
  void recordCall(const IrCall& c) {
    for (const auto& o : out_.calls) {
      if (o.loc.line == c.loc.line && o.loc.col == c.loc.col && o.callee == c.callee && o.inlined == c.inlined &&
          o.note == c.note) return;
    }
    out_.calls.push_back(c);
  }

  void opaque(const Node& n, const std::string& reason) {
    for (const auto& o : out_.opaque) {
      if (o.loc.line == loc(n).line && o.loc.col == loc(n).col && o.reason == reason) return;
    }
    out_.opaque.push_back({loc(n), text(n, 80), reason});
  }

  int currentLoop() const { return loop_stack_.empty() ? -1 : loop_stack_.back(); }

  std::string q(const Node& n) const { return ir_.qualifiedName(n); }

  // "triton.language.arange" -> "arange"; also triton.language.math / extra.*.libdevice.
  std::string tlName(const Node& func) const {
    std::string qn = q(func);
    for (const char* pre : {"triton.language.math.", "triton.language.extra.cuda.libdevice.",
                            "triton.language.extra.libdevice.", "triton.language.extra.cuda.",
                            "triton.language.core.", "triton.language.standard.", "triton.language."}) {
      std::string p = pre;
      if (qn.rfind(p, 0) == 0) return qn.substr(p.size());
    }
    return "";
  }

  void countAssignments(const Node& body) {
    walk(body, [&](const Node& n) {
      const std::string& t = nodeType(n);
      if (t == "FunctionDef" || t == "Lambda") return false;
      auto mark = [&](const Node& target, auto&& self) -> void {
        if (isType(target, "Name")) ++assign_count_[target["id"].get<std::string>()];
        else if (isType(target, "Tuple") || isType(target, "List")) {
          for (const auto& e : target["elts"]) self(e, self);
        } else if (isType(target, "Starred")) {
          self(target["value"], self);
        }
      };
      if (t == "Assign") for (const auto& tg : n["targets"]) mark(tg, mark);
      if (t == "AnnAssign" || t == "AugAssign") {
        mark(n["target"], mark);
        if (t == "AugAssign") mark(n["target"], mark);  // an update is a second assignment
      }
      if (t == "For") {
        mark(n["target"], mark);
        mark(n["target"], mark);
      }
      return true;
    });
  }

  // Parameters with evidence of being integers (compared, multiplied, loop bounds, ...).
  void findIntEvidence(const Node& def) {
    std::set<std::string> params;
    for (const auto& p : k_.params) params.insert(p.name);
    auto mark = [&](const Node& n, const std::string& why) {
      if (isType(n, "Name")) {
        std::string id = n["id"].get<std::string>();
        if (params.count(id) && !int_evidence_.count(id)) int_evidence_[id] = fmt::format("{} at line {}", why, loc(n).line);
      }
    };
    walk(def["body"], [&](const Node& n) {
      const std::string& t = nodeType(n);
      if (t == "BinOp") {
        const std::string& op = nodeType(n["op"]);
        if (op == "Mult" || op == "FloorDiv" || op == "Mod" || op == "Div" || op == "Pow" || op == "Sub") {
          mark(n["right"], "used in arithmetic");
          if (op != "Sub") mark(n["left"], "used in arithmetic");
        }
      } else if (t == "Compare") {
        mark(n["left"], "compared");
        for (const auto& c : n["comparators"]) mark(c, "compared");
      } else if (t == "Call") {
        std::string f = tlName(n["func"]);
        std::string d = dottedName(n["func"]);
        if (d == "range" || f == "range" || f == "static_range" || f == "cdiv" || d == "min" || d == "max" ||
            f == "minimum" || f == "maximum") {
          for (const auto& a : n["args"]) mark(a, "a loop bound or index computation");
        }
      }
      return true;
    });
  }

  // ---- values ----------------------------------------------------------------------------
  Value lookup(const std::string& name, const Node& n) {
    auto it = env_.find(name);
    if (it != env_.end()) return it->second;
    auto m = ir_.module_assignments.find(name);
    if (m != ir_.module_assignments.end()) {
      const Node& v = *m->second;
      if (auto i = intLiteral(v)) return scalarValue(sym::num(*i));
      if (isType(v, "Call") && q(v["func"]) == "triton.language.constexpr" && !v["args"].empty()) {
        if (auto i = intLiteral(v["args"][0])) return scalarValue(sym::num(*i));
      }
    }
    Value u;
    (void)n;
    return u;
  }

  static std::vector<sym::Expr> broadcastDims(const std::vector<sym::Expr>& a, const std::vector<sym::Expr>& b) {
    size_t n = std::max(a.size(), b.size());
    std::vector<sym::Expr> out(n);
    for (size_t i = 0; i < n; ++i) {
      const sym::Expr* da = i + a.size() >= n ? &a[i + a.size() - n] : nullptr;
      const sym::Expr* db = i + b.size() >= n ? &b[i + b.size() - n] : nullptr;
      if (!da) out[i] = *db;
      else if (!db) out[i] = *da;
      else if (sym::constant(*da) == 1) out[i] = *db;
      else out[i] = *da;
    }
    return out;
  }

  // Shifts a value's index terms to a result of rank `rank` (right-aligned broadcast).
  static Aff shifted(const Aff& a, size_t from_rank, size_t rank) {
    Aff out = a;
    for (auto& t : out.terms) t.axis += static_cast<int>(rank - from_rank);
    return out;
  }

  static Aff affOf(const Value& v) {
    if (v.aff) return *v.aff;
    Aff a;
    a.irregular.push_back(v.data ? "data-dependent index (gather / scatter)" : "an index expression not understood");
    return a;
  }

  static Aff scaleAff(const Aff& a, const sym::Expr& s) {
    Aff out = a;
    out.offset = sym::mul(out.offset, s);
    for (auto& t : out.terms) t.stride = sym::mul(t.stride, s);
    return out;
  }

  static Aff addAff(const Aff& a, const Aff& b) {
    Aff out = a;
    out.offset = sym::add(a.offset, b.offset);
    for (const auto& t : b.terms) {
      bool merged = false;
      for (auto& o : out.terms) {
        if (o.arange == t.arange && o.axis == t.axis && o.wrap == t.wrap) {
          o.stride = sym::add(o.stride, t.stride);
          merged = true;
          break;
        }
      }
      if (!merged) out.terms.push_back(t);
    }
    out.terms.erase(std::remove_if(out.terms.begin(), out.terms.end(),
                                   [](const Term& t) { return sym::constant(t.stride) == 0; }),
                    out.terms.end());
    for (const auto& i : b.irregular) out.irregular.push_back(i);
    return out;
  }

  void recordMath(const Node& n, const std::string& op, int flops, const Value& result) {
    if (!result.data) return;
    if (!result.dtype.empty() && !isFloatDtype(result.dtype) && result.dtype != kPyFloat) return;
    IrMath m;
    m.loc = loc(n);
    m.loop = currentLoop();
    m.via = via_;
    m.guards = guards_;
    m.op = op;
    m.flops = flops;
    m.shape = result.dims;
    m.shape_known = result.shape_known;
    m.dtype = result.dtype;
    out_.math.push_back(m);
  }

  Value binary(const Node& n, const std::string& op, const Value& a, const Value& b, bool count_math = true) {
    Value r;
    r.shape_known = a.shape_known && b.shape_known;
    if (!r.shape_known && (a.shape_known || b.shape_known)) {
      const Value& known = a.shape_known ? a : b;
      if (!known.dims.empty()) {
        r.shape_known = true;  // a tensor with an unknown scalar: the tensor's shape
        r.dims = known.dims;
      }
    }
    if (a.shape_known && b.shape_known) r.dims = broadcastDims(a.dims, b.dims);
    r.data = a.data || b.data;
    r.from_dot = a.from_dot || b.from_dot;
    r.is_pointer = a.is_pointer || b.is_pointer;
    r.pointee = a.is_pointer ? a.pointee : b.pointee;
    bool is_cmp = op == "lt" || op == "le" || op == "gt" || op == "ge" || op == "eq" || op == "ne";
    if (is_cmp) r.dtype = "i1";
    else if (!r.is_pointer) r.dtype = promote(a.dtype, a.isScalar(), b.dtype, b.isScalar());
    size_t R = r.dims.size();
    // Affine forms: + - of anything affine; * by a scalar; % wraps; // of scalars.
    bool a_aff = a.aff.has_value(), b_aff = b.aff.has_value();
    bool a_scalar_sym = a.sym() != nullptr, b_scalar_sym = b.sym() != nullptr;
    if (op == "add" || op == "sub") {
      if (a_aff || b_aff) {
        if (!(a.data && b.data) && (a_aff || a.data) && (b_aff || b.data)) {
          Aff x = shifted(affOf(a), a.rank(), R);
          Aff y = shifted(affOf(b), b.rank(), R);
          if (op == "sub") y = scaleAff(y, sym::num(-1));
          r.aff = addAff(x, y);
        }
      }
    } else if (op == "mul") {
      if (a_aff && b_scalar_sym) r.aff = shifted(scaleAff(*a.aff, b.sym()), a.rank(), R);
      else if (b_aff && a_scalar_sym) r.aff = shifted(scaleAff(*b.aff, a.sym()), b.rank(), R);
      else if (a_aff && b_aff) {
        Aff x;
        x.irregular.push_back("product of two tile indices: " + text(n, 60));
        r.aff = x;
      }
    } else if (op == "floordiv" || op == "mod") {
      if (a_scalar_sym && b_scalar_sym) {
        r.aff = Aff{op == "mod" ? sym::mod(a.sym(), b.sym()) : sym::floorDiv(a.sym(), b.sym()), {}, {}};
      } else if (a_aff && b_scalar_sym && op == "mod") {
        Aff x = shifted(*a.aff, a.rank(), R);
        for (auto& t : x.terms) {
          t.wrap = "% " + sym::str(b.sym());
          t.wrap_by = b.sym();
        }
        x.offset = sym::mod(x.offset, b.sym());
        r.aff = x;
      } else if (a_aff && !a.aff->scalar()) {
        Aff x;
        x.irregular.push_back(std::string(op == "mod" ? "modulo" : "floor division") + " of a tile index: " + text(n, 60));
        r.aff = x;
      }
    } else if (is_cmp) {
      r.is_mask = true;
      if (a_scalar_sym && b_scalar_sym) {
        sym::Op o = op == "lt" ? sym::Op::kLt : op == "le" ? sym::Op::kLe : op == "gt" ? sym::Op::kGt
                  : op == "ge" ? sym::Op::kGe : op == "eq" ? sym::Op::kEq : sym::Op::kNe;
        r.aff = Aff{sym::cmp(o, a.sym(), b.sym()), {}, {}};
      }
    } else if (op == "and" || op == "or") {
      if (a_scalar_sym && b_scalar_sym) {
        r.aff = Aff{op == "and" ? sym::logicalAnd(a.sym(), b.sym()) : sym::logicalOr(a.sym(), b.sym()), {}, {}};
      }
      if (op == "and") {
        r.is_mask = a.is_mask || b.is_mask;
        r.bounds = a.bounds;
        for (const auto& bb : b.bounds) r.bounds.push_back(bb);
      }
    }
    // Mask bounds: index < bound, with the index along one tile axis.
    if (is_cmp && a_aff && !a.aff->terms.empty() && b_scalar_sym) {
      Aff x = shifted(*a.aff, a.rank(), R);
      MaskBound mb;
      if (x.terms.size() == 1) mb.axis = x.terms[0].axis;
      mb.bound = (op == "lt") ? b.sym() : (op == "le") ? sym::add(b.sym(), sym::num(1)) : nullptr;
      mb.index = text(n["left"], 60);
      mb.index_offset = x.offset;
      mb.text = text(n, 80);
      if (mb.bound) r.bounds.push_back(mb);
    } else if (is_cmp && b_aff && !b.aff->terms.empty() && a_scalar_sym && (op == "gt" || op == "ge")) {
      Aff x = shifted(*b.aff, b.rank(), R);
      MaskBound mb;
      if (x.terms.size() == 1) mb.axis = x.terms[0].axis;
      mb.bound = op == "gt" ? a.sym() : sym::add(a.sym(), sym::num(1));
      mb.index = text(n["comparators"][0], 60);
      mb.index_offset = x.offset;
      mb.text = text(n, 80);
      r.bounds.push_back(mb);
    }
    if (count_math && !r.is_pointer && !is_cmp && op != "and" && op != "or" && op != "xor" && op != "shl" && op != "shr") {
      recordMath(n, op, 1, r);
    }
    return r;
  }

  // ---- statements ------------------------------------------------------------------------
  void block(const Node& body) {
    for (const auto& s : body) {
      if (returned_) break;
      stmt(s);
    }
  }

  void bindName(const std::string& name, Value v, const Node& value_node) {
    // Scalar integer locals assigned once in the kernel (not in a callee) keep their name, so
    // that offsets read "pid_m*BLOCK_M*stride_am"; their definitions go in out_.locals. A
    // parameter assigned in the body (`GROUP_M = min(num_pid_m - first_pid_m, GROUP_M)`) is
    // not such a local: its name already stands for the argument in earlier definitions, and
    // naming the new value after it made the definition refer to itself (expand then grew it
    // at every round: minutes on a grouped-order matmul, and pid_m lost its grid axis).
    sym::Expr s = v.sym();
    if (via_.empty() && s && s->op == sym::Op::kVar && s->name.rfind("program_id(", 0) == 0) {
      pid_names_[name] = std::stoi(s->name.substr(11));
    }
    if (via_.empty() && s && assign_count_[name] == 1 && !k_.param(name) && !v.is_pointer && s->op != sym::Op::kNum &&
        s->op != sym::Op::kVar && !sym::isOpaque(s) && !v.data && v.dtype_obj.empty()) {
      bool int_only = true;
      for (const auto& n : sym::vars(s)) {
        const Param* p = k_.param(n);
        if (p && !p->is_constexpr && !int_evidence_.count(n)) int_only = false;
        auto t = types_.types.find(n);
        if (p && t != types_.types.end() && !t->second.empty() && t->second[0] == '*') int_only = false;
      }
      if (int_only) {
        out_.setLocal(name, s);
        v.aff->offset = sym::var(name);
      }
    }
    (void)value_node;
    env_[name] = std::move(v);
  }

  void assign(const Node& target, const Value& v, const Node& value_node) {
    if (isType(target, "Name")) {
      bindName(target["id"].get<std::string>(), v, value_node);
      return;
    }
    if (isType(target, "Tuple") || isType(target, "List")) {
      const Node& elts = target["elts"];
      for (size_t i = 0; i < elts.size(); ++i) {
        if (v.is_tuple && i < v.items.size()) {
          bool parallel = (isType(value_node, "Tuple") || isType(value_node, "List")) && value_node["elts"].size() == elts.size();
          assign(elts[i], v.items[i], parallel ? value_node["elts"][i] : value_node);
        } else {
          assign(elts[i], unknown(), value_node);
        }
      }
      return;
    }
    if (isType(target, "Subscript") || isType(target, "Attribute")) {
      opaque(target, "assignment to an element or attribute is not modelled");
    }
  }

  void stmt(const Node& s) {
    if (!via_.empty()) {
      ++inlined_steps_;
      if (ir_.inline_budget) --ir_.inline_budget->statements_left;
    }
    statement(s);
    noteLimits(s);
  }

  // Expressions cut by the symbolic limits are reported at the innermost statement that built
  // them (a compound statement reports what its header or its merge built): the first few
  // statements each in a note, the rest counted by summarizeLimits.
  static constexpr size_t kLimitNotes = 8;
  void noteLimits(const Node& s) {
    uint64_t hits = sym::limitHits();
    if (hits == limit_hits_seen_) return;
    limit_hits_seen_ = hits;
    int line = loc(s).line;
    if (!limit_lines_.insert(line).second || limit_lines_.size() > kLimitNotes) return;
    out_.notes.push_back(fmt::format("line {}: `{}` builds an expression over the symbolic limits ({} terms or depth {}): "
                                     "not judged, its value is unknown and so is what it feeds",
                                     line, text(s, 60), sym::kMaxTerms, sym::kMaxDepth));
  }

  void summarizeLimits() {
    if (limit_lines_.size() > kLimitNotes) {
      out_.notes.push_back(fmt::format("{} more statements build expressions over the symbolic limits (up to line {}): not judged",
                                       limit_lines_.size() - kLimitNotes, *limit_lines_.rbegin()));
    }
    if (sym::limitHits() != limit_hits_seen_) {
      out_.notes.push_back(fmt::format("expanding locals into parameters builds expressions over the symbolic limits ({} terms "
                                       "or depth {}): those values are unknown",
                                       sym::kMaxTerms, sym::kMaxDepth));
    }
  }

  void statement(const Node& s) {
    const std::string& t = nodeType(s);
    if (t == "Assign") {
      Value v = expr(s["value"]);
      for (const auto& target : s["targets"]) assign(target, v, s["value"]);
    } else if (t == "AnnAssign") {
      if (s["value"].is_object()) assign(s["target"], expr(s["value"]), s["value"]);
    } else if (t == "AugAssign") {
      augAssign(s);
    } else if (t == "For") {
      forLoop(s);
    } else if (t == "While") {
      whileLoop(s);
    } else if (t == "If") {
      ifStmt(s);
    } else if (t == "Expr") {
      expr(s["value"]);
    } else if (t == "Return") {
      Value v = s["value"].is_object() ? expr(s["value"]) : Value{};
      if (!via_.empty()) {
        if (!return_value_) return_value_ = v;
        else return_value_ = merge(*return_value_, v, nullptr);
        if (guards_.size() == guard_base_) returned_ = true;
      }
    } else if (t == "Pass" || t == "Assert" || t == "Break" || t == "Continue") {
      if (t == "Break" || t == "Continue") opaque(s, "break / continue: the trip count is an upper bound");
    } else if (t == "With") {
      opaque(s, "with-statement (body analysed as straight-line code)");
      block(s["body"]);
    } else {
      opaque(s, fmt::format("{} statement is not modelled", t));
    }
  }

  void augAssign(const Node& s) {
    const Node& target = s["target"];
    Value rhs = expr(s["value"]);
    if (!isType(target, "Name")) {
      opaque(s, "augmented assignment to an element is not modelled");
      return;
    }
    std::string name = target["id"].get<std::string>();
    Value cur = lookup(name, target);
    std::string op = opName(s["op"]);
    if (op.empty()) {
      opaque(s, "operator not modelled");
      env_[name] = unknown();
      return;
    }
    // A loop-carried increment: name += delta with delta invariant (pointer bumps).
    if (!loop_stack_.empty() && op == "add" && cur.aff && rhs.sym() && !rhs.data) {
      auto& inc = increments_[loop_stack_.back()];
      if (loop_outer_names_.back().count(name)) inc[name] = rhs.sym();
    }
    // acc += tl.dot(a, b): the add is the MMA's accumulation, not extra arithmetic.
    Value r = binary(s, op, cur, rhs, !(op == "add" && rhs.dot_result));
    if (op == "add" && cur.data) {
      // acc += tl.dot(...): the accumulator keeps its type.
      if (!cur.dtype.empty()) r.dtype = cur.dtype;
    }
    env_[name] = r;
  }

  static std::string opName(const Node& op) {
    const std::string& t = nodeType(op);
    if (t == "Add") return "add";
    if (t == "Sub") return "sub";
    if (t == "Mult") return "mul";
    if (t == "Div") return "div";
    if (t == "FloorDiv") return "floordiv";
    if (t == "Mod") return "mod";
    if (t == "Pow") return "pow";
    if (t == "BitAnd") return "and";
    if (t == "BitOr") return "or";
    if (t == "BitXor") return "xor";
    if (t == "LShift") return "shl";
    if (t == "RShift") return "shr";
    if (t == "MatMult") return "matmul";
    return "";
  }

  // Values equal enough to keep one after an if / else.
  Value merge(const Value& a, const Value& b, const sym::Expr* cond) {
    Value r;
    r.shape_known = a.shape_known && b.shape_known && a.dims.size() == b.dims.size();
    if (r.shape_known) {
      for (size_t i = 0; i < a.dims.size(); ++i) {
        if (!sym::same(a.dims[i], b.dims[i])) {
          r.shape_known = false;
          break;
        }
      }
      if (r.shape_known) r.dims = a.dims;
    }
    r.dtype = a.dtype == b.dtype ? a.dtype : "";
    r.is_pointer = a.is_pointer && b.is_pointer;
    r.pointee = a.pointee == b.pointee ? a.pointee : "";
    r.data = a.data || b.data;
    r.from_dot = a.from_dot || b.from_dot;
    if (a.sym() && b.sym()) {
      if (sym::same(a.sym(), b.sym())) r.aff = a.aff;
      else if (cond && *cond) r.aff = Aff{sym::select(*cond, a.sym(), b.sym()), {}, {}};
    } else if (a.aff && b.aff && sameAff(*a.aff, *b.aff)) {
      r.aff = a.aff;
    }
    if (a.block_ptr == b.block_ptr) r.block_ptr = a.block_ptr;
    if (a.desc == b.desc) r.desc = a.desc;
    if (a.dtype_obj == b.dtype_obj) r.dtype_obj = a.dtype_obj;
    if (a.is_tuple && b.is_tuple && a.items.size() == b.items.size()) {
      r.is_tuple = true;
      for (size_t i = 0; i < a.items.size(); ++i) r.items.push_back(merge(a.items[i], b.items[i], cond));
    }
    if (a.access == b.access) r.access = a.access;
    return r;
  }

  static bool sameAff(const Aff& a, const Aff& b) {
    if (!sym::same(a.offset, b.offset) || a.terms.size() != b.terms.size() || a.irregular != b.irregular) return false;
    for (size_t i = 0; i < a.terms.size(); ++i) {
      if (a.terms[i].axis != b.terms[i].axis || !sym::same(a.terms[i].stride, b.terms[i].stride) ||
          a.terms[i].arange != b.terms[i].arange) return false;
    }
    return true;
  }

  void ifStmt(const Node& s) {
    Value test = expr(s["test"]);
    sym::Expr cond = test.sym();
    if (types_.prune_constant_branches) {
      if (auto c = sym::constant(cond)) {
        block(*c ? s["body"] : s["orelse"]);
        return;
      }
    }
    std::string ttext = text(s["test"], 80);
    auto saved = env_;
    guards_.push_back({cond, ttext, false});
    bool returned_before = returned_;
    block(s["body"]);
    bool body_returned = returned_;
    returned_ = returned_before;
    guards_.pop_back();
    auto env_body = env_;
    env_ = saved;
    guards_.push_back({cond, ttext, true});
    block(s["orelse"]);
    guards_.pop_back();
    bool else_returned = returned_;
    returned_ = returned_before || (body_returned && else_returned);
    auto env_else = env_;
    env_.clear();
    std::set<std::string> names;
    for (const auto& [k, v] : env_body) names.insert(k);
    for (const auto& [k, v] : env_else) names.insert(k);
    for (const auto& n : names) {
      auto a = env_body.find(n), b = env_else.find(n);
      if (a == env_body.end()) env_[n] = b->second;
      else if (b == env_else.end()) env_[n] = a->second;
      else if (body_returned) env_[n] = b->second;
      else if (else_returned) env_[n] = a->second;
      else env_[n] = merge(a->second, b->second, &cond);
    }
  }

  void whileLoop(const Node& s) {
    IrLoop L;
    L.id = static_cast<int>(out_.loops.size());
    L.parent = currentLoop();
    L.depth = static_cast<int>(loop_stack_.size()) + 1;
    L.loc = loc(s);
    L.kind = "while";
    L.trips_note = "a while loop: the trip count is not known before it runs";
    L.guards = guards_;
    L.via = via_;
    out_.loops.push_back(L);
    expr(s["test"]);
    loop_stack_.push_back(L.id);
    loop_outer_names_.push_back({});
    block(s["body"]);
    loop_outer_names_.pop_back();
    loop_stack_.pop_back();
  }

  void forLoop(const Node& s) {
    IrLoop L;
    L.id = static_cast<int>(out_.loops.size());
    L.parent = currentLoop();
    L.depth = static_cast<int>(loop_stack_.size()) + 1;
    L.loc = loc(s);
    L.guards = guards_;
    L.via = via_;
    const Node& it = s["iter"];
    bool understood = false;
    if (isType(it, "Call")) {
      std::string d = dottedName(it["func"]);
      std::string f = tlName(it["func"]);
      if (d == "range" && !ir_.aliases.count("range")) L.kind = "range";
      else if (f == "range") L.kind = "tl.range";
      else if (f == "static_range") L.kind = "tl.static_range";
      if (!L.kind.empty()) {
        std::vector<Value> args;
        for (const auto& a : it["args"]) args.push_back(expr(a));
        auto kwv = [&](const char* name) -> std::optional<Value> {
          if (const Node* n = keywordArg(it, name)) return expr(*n);
          return std::nullopt;
        };
        std::optional<Value> a0, a1, a2;
        if (args.size() == 1) {
          a0 = scalarValue(sym::num(0));
          a1 = args[0];
        } else if (args.size() >= 2) {
          a0 = args[0];
          a1 = args[1];
          if (args.size() >= 3) a2 = args[2];
        }
        if (auto v = kwv("arg1")) a0 = v;
        if (auto v = kwv("arg2")) a1 = v;
        if (auto v = kwv("step")) a2 = v;
        if (!a2) a2 = scalarValue(sym::num(1));
        if (a0 && a1) {
          L.start = a0->sym();
          L.stop = a1->sym();
          L.step = a2->sym();
          understood = true;
          if (L.start && L.stop && L.step) {
            auto step = sym::constant(L.step);
            if (step && *step < 0) L.trips = sym::cdiv(sym::sub(L.start, L.stop), sym::num(-*step));
            else L.trips = sym::cdiv(sym::sub(L.stop, L.start), L.step);
            std::set<std::string> vs = sym::vars(out_.expand(L.trips));
            for (const auto& v : vs) {
              if (v.rfind("program_id(", 0) == 0) L.trips_note = "varies with the program id";
              for (int outer : loop_stack_) {
                if (out_.loops[outer].var == v) L.trips_note = fmt::format("depends on the variable of loop {}", outer);
              }
            }
          } else {
            L.trips_note = "a bound is not an integer expression of the parameters";
          }
        }
        for (const char* opt : {"num_stages", "loop_unroll_factor"}) {
          if (const Node* n = keywordArg(it, opt)) {
            if (auto v = intLiteral(*n)) (std::string(opt) == "num_stages" ? L.num_stages : L.loop_unroll_factor) = *v;
            else if (auto sv = expr(*n).sym(); sv && sym::constant(sv)) {
              (std::string(opt) == "num_stages" ? L.num_stages : L.loop_unroll_factor) = *sym::constant(sv);
            }
          }
        }
        if (L.kind == "tl.range" && args.size() > 3) {
          // tl.range(start, end, step, num_stages, ...) positionally
          if (auto v = args[3].sym(); v && sym::constant(v)) L.num_stages = *sym::constant(v);
        }
        for (const char* flag : {"warp_specialize", "flatten", "disallow_acc_multi_buffer"}) {
          if (const Node* n = keywordArg(it, flag)) {
            bool on = isType(*n, "Constant") && (*n)["value"].is_boolean() && (*n)["value"].get<bool>();
            if (std::string(flag) == "warp_specialize") L.warp_specialize = on;
            else if (std::string(flag) == "flatten") L.flatten = on;
            else L.disallow_acc_multi_buffer = on;
          }
        }
      }
    }
    if (!understood) {
      L.kind = L.kind.empty() ? "other" : L.kind;
      L.trips_note = "the iterable is not range / tl.range / tl.static_range";
      opaque(it, "loop over something other than range / tl.range / tl.static_range");
      expr(it);
    }
    std::string var;
    if (isType(s["target"], "Name")) var = s["target"]["id"].get<std::string>();
    else opaque(s["target"], "loop target is not a single name");
    L.var = var;
    out_.loops.push_back(L);

    // First pass: find loop-carried increments; its facts are dropped.
    auto saved_env = env_;
    std::set<std::string> outer;
    for (const auto& [k, v] : env_) outer.insert(k);
    auto sizes = snapshotSizes();
    loop_stack_.push_back(L.id);
    loop_outer_names_.push_back(outer);
    increments_[L.id].clear();
    advances_[L.id].clear();
    bindLoopVar(var, L);
    bool returned_before = returned_;
    if (loop_stack_.size() <= 4) {
      auto opaque_before = out_.opaque.size();
      block(s["body"]);
      out_.opaque.resize(opaque_before);
    }
    returned_ = returned_before;
    auto incs = increments_[L.id];
    auto advs = advances_[L.id];
    truncate(sizes);
    env_ = saved_env;
    // Loop-carried values: x0 + iter * delta.
    sym::Expr iter = sym::var(fmt::format("iter({})", L.id));
    for (const auto& [name, delta] : incs) {
      auto it2 = env_.find(name);
      if (it2 == env_.end() || !it2->second.aff) continue;
      it2->second.aff->offset = sym::add(it2->second.aff->offset, sym::mul(iter, delta));
    }
    for (const auto& [name, deltas] : advs) {
      auto it2 = env_.find(name);
      if (it2 == env_.end() || it2->second.block_ptr < 0) continue;
      IrBlockPtr bp = out_.block_ptrs[it2->second.block_ptr];
      bp.id = static_cast<int>(out_.block_ptrs.size());
      bp.advanced_from = it2->second.block_ptr;
      bp.advance.clear();
      for (size_t i = 0; i < bp.offsets.size() && i < deltas.size(); ++i) {
        bp.offsets[i] = sym::add(bp.offsets[i], sym::mul(iter, deltas[i]));
        bp.advance.push_back(deltas[i]);
      }
      bp.loc = out_.loops[L.id].loc;
      out_.block_ptrs.push_back(bp);
      it2->second.block_ptr = bp.id;
    }
    // Second pass: record.
    bindLoopVar(var, L);
    block(s["body"]);
    block(s["orelse"]);
    returned_ = returned_before;
    loop_outer_names_.pop_back();
    loop_stack_.pop_back();
  }

  void bindLoopVar(const std::string& var, const IrLoop& L) {
    if (var.empty()) return;
    Value v = scalarValue(sym::var(var));
    v.dtype = "i32";
    env_[var] = v;
    loop_var_info_[var] = L.id;
  }

  struct Sizes {
    size_t loops, accesses, block_ptrs, descriptors, dots, reductions, casts, math, calls, opaque;
  };
  Sizes snapshotSizes() const {
    return {out_.loops.size(), out_.accesses.size(), out_.block_ptrs.size(), out_.descriptors.size(),
            out_.dots.size(), out_.reductions.size(), out_.casts.size(), out_.math.size(),
            out_.calls.size(), out_.opaque.size()};
  }
  void truncate(const Sizes& s) {
    out_.loops.resize(s.loops);
    out_.accesses.resize(s.accesses);
    out_.block_ptrs.resize(s.block_ptrs);
    out_.descriptors.resize(s.descriptors);
    out_.dots.resize(s.dots);
    out_.reductions.resize(s.reductions);
    out_.casts.resize(s.casts);
    out_.math.resize(s.math);
    out_.calls.resize(s.calls);
    out_.opaque.resize(s.opaque);
  }

  // ---- expressions -----------------------------------------------------------------------
  Value expr(const Node& e) {
    const std::string& t = nodeType(e);
    if (t == "Constant") return constant(e);
    if (t == "Name") return lookup(e["id"].get<std::string>(), e);
    if (t == "BinOp") {
      Value a = expr(e["left"]);
      Value b = expr(e["right"]);
      std::string op = opName(e["op"]);
      if (op.empty() || op == "matmul") {
        opaque(e, "operator not modelled");
        return unknown();
      }
      if ((op == "and" || op == "or" || op == "xor") && a.sym() && b.sym()) {
        // bitwise on integers: exact when both are known (`STAGE & 2` with STAGE = 1 is 0, not
        // true); `&` of a number other than 0 or 1 is no logical and
        auto ca = sym::constant(a.sym()), cb = sym::constant(b.sym());
        if (ca && cb) return scalarValue(sym::num(op == "and" ? (*ca & *cb) : op == "or" ? (*ca | *cb) : (*ca ^ *cb)));
        auto notBool = [](const std::optional<int64_t>& c) { return c && *c != 0 && *c != 1; };
        if (op != "or" && (notBool(ca) || notBool(cb))) {
          Value r = binary(e, op, a, b);
          r.aff.reset();
          return r;
        }
      }
      return binary(e, op, a, b);
    }
    if (t == "UnaryOp") {
      Value a = expr(e["operand"]);
      const std::string& op = nodeType(e["op"]);
      if (op == "USub") {
        if (a.aff) a.aff = scaleAff(*a.aff, sym::num(-1));
        return a;
      }
      if (op == "Not") {
        if (a.sym()) a.aff = Aff{sym::logicalNot(a.sym()), {}, {}};
        else a.aff.reset();
        a.dtype = "i1";
        return a;
      }
      if (op == "UAdd") return a;
      a.aff.reset();  // ~x
      return a;
    }
    if (t == "BoolOp") {
      bool is_and = isType(e["op"], "And");
      Value acc;
      bool first = true;
      for (const auto& v : e["values"]) {
        Value x = expr(v);
        if (first) acc = x;
        else acc = binary(e, is_and ? "and" : "or", acc, x);
        first = false;
      }
      return acc;
    }
    if (t == "Compare") {
      Value a = expr(e["left"]);
      if (e["ops"].size() != 1) {
        for (const auto& c : e["comparators"]) expr(c);
        Value r;
        r.is_mask = true;
        return r;
      }
      Value b = expr(e["comparators"][0]);
      const std::string& op = nodeType(e["ops"][0]);
      std::string o = op == "Lt" ? "lt" : op == "LtE" ? "le" : op == "Gt" ? "gt" : op == "GtE" ? "ge" : op == "Eq" ? "eq"
                    : op == "NotEq" ? "ne" : "";
      if (o.empty()) {
        // `is`, `in`: only meaningful on constexprs (`if X is None`)
        Value r;
        r.shape_known = true;
        return r;
      }
      return binary(e, o, a, b);
    }
    if (t == "IfExp") {
      Value c = expr(e["test"]);
      Value a = expr(e["body"]);
      Value b = expr(e["orelse"]);
      sym::Expr cond = c.sym();
      return merge(a, b, &cond);
    }
    if (t == "Subscript") return subscript(e);
    if (t == "Attribute") return attribute(e);
    if (t == "Call") return call(e);
    if (t == "Tuple" || t == "List") {
      Value v;
      v.is_tuple = true;
      for (const auto& x : e["elts"]) v.items.push_back(expr(x));
      return v;
    }
    if (t == "JoinedStr") return Value{};
    opaque(e, fmt::format("{} expression is not modelled", t));
    return unknown();
  }

  Value constant(const Node& e) {
    std::string vt = e.value("vt", "");
    if (vt == "int") return scalarValue(sym::num(e["value"].get<int64_t>()));
    if (vt == "bool") return scalarValue(sym::num(e["value"].get<bool>() ? 1 : 0));
    Value v;
    v.shape_known = true;
    if (vt == "float" || vt == "float_special") v.dtype = kPyFloat;
    else if (vt == "None") v.is_none = true;
    else if (vt == "str") v.str_value = e["value"].get<std::string>();
    return v;
  }

  Value attribute(const Node& e) {
    std::string attr = e["attr"].get<std::string>();
    std::string qn = q(e);
    if (qn.rfind("triton.language.", 0) == 0) {
      std::string d = dtypeFromTritonName(attr);
      Value v;
      if (!d.empty()) v.dtype_obj = d;
      return v;
    }
    Value base = expr(e["value"]);
    if (attr == "T") return transpose(base, {1, 0});
    if (attr == "dtype") {
      Value v;
      if (base.is_pointer) v.dtype_obj = "ptr:" + base.pointee;
      else v.dtype_obj = base.dtype.empty() ? "?" : base.dtype;
      return v;
    }
    if (attr == "element_ty") {
      Value v;
      if (base.dtype_obj.rfind("ptr:", 0) == 0) v.dtype_obj = base.dtype_obj.substr(4);
      if (v.dtype_obj.empty()) v.dtype_obj = "?";
      return v;
    }
    if (attr == "type") {
      Value v;
      if (base.is_pointer) v.dtype_obj = "ptr:" + base.pointee;
      return v;
    }
    if (attr == "shape") {
      Value v;
      if (base.shape_known) {
        v.is_tuple = true;
        for (const auto& d : base.dims) v.items.push_back(scalarValue(d));
      }
      return v;
    }
    return Value{};
  }

  Value transpose(Value v, const std::vector<int>& perm) {
    if (!v.shape_known || v.dims.size() != perm.size()) {
      v.shape_known = false;
      v.aff.reset();
      v.transposed = !v.transposed;
      return v;
    }
    std::vector<sym::Expr> d(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) d[i] = v.dims[perm[i]];
    v.dims = d;
    if (v.aff) {
      for (auto& t : v.aff->terms) {
        for (size_t i = 0; i < perm.size(); ++i) {
          if (perm[i] == t.axis) {
            t.axis = static_cast<int>(i);
            break;
          }
        }
      }
    }
    v.transposed = !v.transposed;
    return v;
  }

  Value subscript(const Node& e) {
    Value base = expr(e["value"]);
    const Node& idx = e["slice"];
    std::vector<const Node*> items;
    if (isType(idx, "Tuple")) for (const auto& x : idx["elts"]) items.push_back(&x);
    else items.push_back(&idx);
    if (base.is_tuple) {
      if (items.size() == 1) {
        Value iv = expr(*items[0]);
        if (auto c = sym::constant(iv.sym())) {
          int64_t i = *c < 0 ? static_cast<int64_t>(base.items.size()) + *c : *c;
          if (i >= 0 && static_cast<size_t>(i) < base.items.size()) return base.items[i];
        }
      }
      return unknown();
    }
    if (!base.shape_known) {
      for (const Node* it : items) if (!isType(*it, "Slice")) expr(*it);
      base.aff.reset();
      return base;
    }
    Value out = base;
    out.dims.clear();
    std::map<int, int> axis_map;  // old axis -> new axis
    size_t d = 0;
    for (const Node* it : items) {
      if (isType(*it, "Slice")) {
        if (d < base.dims.size()) {
          axis_map[static_cast<int>(d)] = static_cast<int>(out.dims.size());
          out.dims.push_back(base.dims[d]);
        }
        ++d;
      } else if (isType(*it, "Constant") && (*it)["vt"] == "None") {
        out.dims.push_back(sym::num(1));
      } else if (isType(*it, "Constant") && (*it)["vt"] == "Ellipsis") {
        opaque(e, "ellipsis index");
        return unknown();
      } else {
        expr(*it);
        ++d;  // an integer index drops the dimension
        if (out.aff) out.aff->irregular.push_back("an element selected by an index: " + text(e, 60));
      }
    }
    while (d < base.dims.size()) {
      axis_map[static_cast<int>(d)] = static_cast<int>(out.dims.size());
      out.dims.push_back(base.dims[d++]);
    }
    if (out.aff) {
      for (auto& t : out.aff->terms) t.axis = axis_map.count(t.axis) ? axis_map[t.axis] : -1;
    }
    for (auto& b : out.bounds) b.axis = axis_map.count(b.axis) ? axis_map[b.axis] : -1;
    return out;
  }

  const Node* argOrKw(const Node& call, size_t i, const char* name) const {
    if (i < call["args"].size() && !isType(call["args"][i], "Starred")) return &call["args"][i];
    return keywordArg(call, name);
  }

  std::optional<std::vector<sym::Expr>> dimsOf(const Node& tuple_node, bool mark_tile) {
    Value v = expr(tuple_node);
    std::vector<sym::Expr> out;
    if (v.is_tuple) {
      for (const auto& item : v.items) {
        sym::Expr s = item.sym();
        if (!s) return std::nullopt;
        out.push_back(s);
      }
    } else if (v.sym()) {
      out.push_back(v.sym());
    } else {
      return std::nullopt;
    }
    if (mark_tile) for (const auto& d : out) markTile(d);
    return out;
  }

  void markTile(const sym::Expr& d) {
    for (const auto& n : sym::vars(d)) {
      const Param* p = k_.param(n);
      if (p && p->is_constexpr) out_.tile_params.insert(n);
    }
  }

  std::string kwString(const Node& call, const char* name) {
    const Node* n = keywordArg(call, name);
    if (!n) return "";
    if (auto s = strLiteral(*n)) return *s;
    return text(*n, 40);
  }

  std::string dtypeArg(const Node* n) {
    if (!n) return "";
    if (auto s = strLiteral(*n)) {
      std::string d = dtypeFromTritonName(*s);
      return d.empty() ? *s : d;
    }
    Value v = expr(*n);
    if (v.dtype_obj == "?" || v.dtype_obj.rfind("ptr:", 0) == 0) return "";
    return v.dtype_obj;
  }

  Value call(const Node& e) {
    const Node& func = e["func"];
    std::string f = tlName(func);
    std::string dotted = dottedName(func);
    if (!f.empty()) return tlCall(e, f);
    if (const Kernel* callee = ir_.kernel(dotted)) return inlineCall(e, *callee);
    std::string qn = q(func);
    if (qn.rfind("triton.", 0) == 0) return builtinCall(e, qn);
    if (isType(func, "Attribute")) {
      // module.function(...) through an import is a call; anything else is a method.
      std::string first = dotted.substr(0, dotted.find('.'));
      if (!dotted.empty() && ir_.aliases.count(first) && !env_.count(first)) return builtinCall(e, qn);
      return methodCall(e);
    }
    return builtinCall(e, dotted);
  }

  std::vector<Value> evalArgs(const Node& e) {
    std::vector<Value> args;
    for (const auto& a : e["args"]) args.push_back(expr(a));
    return args;
  }

  Value builtinCall(const Node& e, const std::string& name) {
    auto args = evalArgs(e);
    for (const auto& kw : e["keywords"]) expr(kw["value"]);
    if ((name == "min" || name == "max") && args.size() == 2 && args[0].sym() && args[1].sym()) {
      return scalarValue(name == "min" ? sym::min(args[0].sym(), args[1].sym()) : sym::max(args[0].sym(), args[1].sym()));
    }
    if ((name == "int" || name == "abs") && args.size() == 1) return args[0];
    if (name == "float") {
      Value v;
      v.shape_known = true;
      v.dtype = kPyFloat;
      return v;
    }
    if (name == "triton.cdiv") {
      if (args.size() == 2 && args[0].sym() && args[1].sym()) return scalarValue(sym::cdiv(args[0].sym(), args[1].sym()));
    }
    if (name == "triton.next_power_of_2" && args.size() == 1 && args[0].sym()) {
      return scalarValue(sym::nextPow2(args[0].sym()));
    }
    if (name == "print" || name == "len" || name == "isinstance") return Value{};
    IrCall c;
    c.loc = loc(e);
    c.callee = name.empty() ? text(e["func"], 40) : name;
    c.inlined = false;
    c.note = "not a @triton.jit function of this module: its effect is unknown";
    recordCall(c);
    opaque(e, "call to " + c.callee + ", which is not a @triton.jit function of this module");
    return unknown();
  }

  Value inlineCall(const Node& e, const Kernel& callee) {
    auto args = evalArgs(e);
    std::map<std::string, Value> kw;
    for (const auto& k : e["keywords"]) {
      if (k["arg"].is_string()) kw[k["arg"].get<std::string>()] = expr(k["value"]);
    }
    IrCall c;
    c.loc = loc(e);
    c.callee = callee.name;
    if (via_.size() >= 8 || std::find(via_.begin(), via_.end(), callee.name) != via_.end() || callee.name == k_.name) {
      c.note = "recursion or nesting deeper than 8: not inlined";
      recordCall(c);
      opaque(e, c.note);
      return unknown();
    }
    bool module_spent = ir_.inline_budget && ir_.inline_budget->statements_left <= 0;
    if (inlined_steps_ >= kMaxInlinedSteps || module_spent) {
      std::string limit = module_spent ? fmt::format("the analyses of this file reached their limit of {} statements "
                                                     "interpreted in inlined helpers", InlineBudget::kStatements)
                                       : fmt::format("the analysis of this kernel reached its limit of {} statements "
                                                     "interpreted in inlined helpers", kMaxInlinedSteps);
      c.note = "not inlined: " + limit;
      recordCall(c);
      opaque(e, c.note);
      if (!inline_limit_noted_) {
        out_.notes.push_back(fmt::format("line {}: {}: this call and later ones are not inlined, their effects are unknown",
                                         loc(e).line, limit));
        inline_limit_noted_ = true;
      }
      return unknown();
    }
    std::map<std::string, Value> env;
    for (size_t i = 0; i < callee.params.size(); ++i) {
      const Param& p = callee.params[i];
      if (i < args.size()) env[p.name] = args[i];
      else if (kw.count(p.name)) env[p.name] = kw[p.name];
      else if (p.default_value) env[p.name] = expr(*p.default_value);
      else env[p.name] = unknown();
    }
    c.inlined = true;
    recordCall(c);
    std::swap(env, env_);
    via_.push_back(callee.name);
    auto saved_return = return_value_;
    bool saved_returned = returned_;
    size_t saved_guard_base = guard_base_;
    guard_base_ = guards_.size();
    return_value_.reset();
    returned_ = false;
    block(callee.def->at("body"));
    Value result = return_value_ ? *return_value_ : Value{};
    return_value_ = saved_return;
    returned_ = saved_returned;
    guard_base_ = saved_guard_base;
    via_.pop_back();
    std::swap(env, env_);
    return result;
  }

  Value methodCall(const Node& e) {
    const Node& func = e["func"];
    std::string m = func["attr"].get<std::string>();
    Value base = expr(func["value"]);
    if (m == "to") {
      auto args = evalArgs(e);
      std::string to = dtypeArg(argOrKw(e, 0, "dtype"));
      bool bitcast = false;
      if (const Node* b = keywordArg(e, "bitcast")) bitcast = isType(*b, "Constant") && (*b)["value"] == true;
      return cast(e, base, to, bitcast);
    }
    static const std::set<std::string> reductions = {"sum", "max", "min", "argmax", "argmin", "reduce", "xor_sum"};
    if (reductions.count(m)) return reduction(e, m, base, 0);
    if (m == "cumsum" || m == "cumprod") return scan(e, m, base, 0);
    if (m == "load" || m == "store") return descriptorAccess(e, m, base, func["value"]);
    if (m == "reshape" || m == "view") {
      auto args = evalArgs(e);
      Value r = base;
      r.aff.reset();
      if (e["args"].size() == 1) {
        auto d = dimsOf(e["args"][0], true);
        r.shape_known = d.has_value();
        if (d) r.dims = *d;
      } else {
        std::vector<sym::Expr> dims;
        bool ok = true;
        for (const auto& a : args) {
          if (!a.sym()) ok = false;
          else dims.push_back(a.sym());
        }
        r.shape_known = ok;
        r.dims = dims;
        if (ok) for (const auto& d : dims) markTile(d);
      }
      return r;
    }
    if (m == "trans" || m == "permute") {
      auto args = evalArgs(e);
      if (base.shape_known && base.dims.size() == 2) return transpose(base, {1, 0});
      base.shape_known = false;
      base.aff.reset();
      return base;
    }
    if (m == "expand_dims") return expandDims(e, base, 0);
    if (m == "broadcast_to") {
      auto d = dimsOf(e["args"].empty() ? e : e["args"][0], true);
      Value r = base;
      r.aff.reset();
      r.shape_known = d.has_value();
      if (d) r.dims = *d;
      return r;
    }
    if (m == "__getitem__" || m == "item") return base;
    // A dtype's predicates (x.dtype.is_floating(), .is_int_signed(), .is_fp16()): decided when
    // the kernel is compiled; their value is not known here, and they touch no memory.
    if (m.rfind("is_", 0) == 0 && e["args"].empty() && isType(func["value"], "Attribute") &&
        (func["value"].value("attr", "") == "dtype" || func["value"].value("attr", "") == "element_ty")) {
      return Value{};
    }
    for (const auto& a : e["args"]) expr(a);
    opaque(e, "method ." + m + "() is not modelled");
    return unknown();
  }

  bool isParamName(const Node& n) const { return isType(n, "Name") && k_.param(n["id"].get<std::string>()); }

  Value cast(const Node& e, Value v, const std::string& to, bool bitcast) {
    if (v.data) {
      IrCast c;
      c.loc = loc(e);
      c.loop = currentLoop();
      c.from = v.dtype == kPyFloat || v.dtype == kPyInt ? "" : v.dtype;
      c.to = to;
      c.bitcast = bitcast;
      c.shape = v.dims;
      c.shape_known = v.shape_known;
      out_.casts.push_back(c);
    }
    if (!to.empty()) v.dtype = to;
    else v.dtype = "";
    if (!v.data && v.aff && !to.empty() && isFloatDtype(to)) v.aff.reset();
    return v;
  }

  Value reduction(const Node& e, const std::string& op, Value input, size_t axis_pos) {
    const Node* axis = keywordArg(e, "axis");
    if (!axis && e["args"].size() > axis_pos) axis = &e["args"][axis_pos];
    bool keep = false;
    if (const Node* kd = keywordArg(e, "keep_dims")) keep = isType(*kd, "Constant") && (*kd)["value"] == true;
    IrReduction r;
    r.id = static_cast<int>(out_.reductions.size());
    r.loc = loc(e);
    r.loop = currentLoop();
    r.via = via_;
    r.op = op;
    r.in_shape = input.dims;
    r.shape_known = input.shape_known;
    r.dtype = input.dtype;
    r.keep_dims = keep;
    Value out = input;
    out.aff.reset();
    out.data = true;
    out.access = -1;
    if (op == "argmax" || op == "argmin") out.dtype = "i32";
    if (!axis || (isType(*axis, "Constant") && (*axis)["vt"] == "None")) {
      r.axis = std::nullopt;
      out.dims.clear();
      if (keep) out.dims.assign(input.dims.size(), sym::num(1));
    } else {
      auto ax = sym::constant(expr(*axis).sym());
      if (!ax || !input.shape_known) {
        r.axis_known = false;
        out.shape_known = false;
      } else {
        int64_t i = *ax < 0 ? static_cast<int64_t>(input.dims.size()) + *ax : *ax;
        r.axis = static_cast<int>(i);
        if (i < 0 || static_cast<size_t>(i) >= input.dims.size()) {
          out.shape_known = false;
        } else if (keep) {
          out.dims[i] = sym::num(1);
        } else {
          out.dims.erase(out.dims.begin() + i);
        }
      }
    }
    out_.reductions.push_back(r);
    return out;
  }

  Value scan(const Node& e, const std::string& op, Value input, size_t axis_pos) {
    const Node* axis = keywordArg(e, "axis");
    if (!axis && e["args"].size() > axis_pos) axis = &e["args"][axis_pos];
    IrReduction r;
    r.id = static_cast<int>(out_.reductions.size());
    r.loc = loc(e);
    r.loop = currentLoop();
    r.via = via_;
    r.op = op;
    r.scan = true;
    r.in_shape = input.dims;
    r.shape_known = input.shape_known;
    r.dtype = input.dtype;
    if (axis) {
      auto ax = sym::constant(expr(*axis).sym());
      if (ax) r.axis = static_cast<int>(*ax < 0 ? static_cast<int64_t>(input.dims.size()) + *ax : *ax);
      else r.axis_known = false;
    } else {
      r.axis = 0;
    }
    out_.reductions.push_back(r);
    input.aff.reset();
    input.data = true;
    input.access = -1;
    return input;
  }

  Value expandDims(const Node& e, Value v, size_t first) {
    const Node* axn = argOrKw(e, first + 1, "axis");
    if (first == 0) axn = argOrKw(e, 0, "axis");
    auto ax = axn ? sym::constant(expr(*axn).sym()) : std::nullopt;
    if (!ax || !v.shape_known) {
      v.shape_known = false;
      v.aff.reset();
      return v;
    }
    int64_t i = *ax < 0 ? static_cast<int64_t>(v.dims.size()) + 1 + *ax : *ax;
    i = std::clamp<int64_t>(i, 0, static_cast<int64_t>(v.dims.size()));
    v.dims.insert(v.dims.begin() + i, sym::num(1));
    if (v.aff) for (auto& t : v.aff->terms) if (t.axis >= i) ++t.axis;
    return v;
  }

  // ---- triton.language calls -------------------------------------------------------------
  Value tlCall(const Node& e, const std::string& f) {
    if (f == "arange") return arange(e);
    if (f == "program_id" || f == "num_programs") {
      const Node* a = argOrKw(e, 0, "axis");
      auto ax = a ? intLiteral(*a) : std::optional<int64_t>(0);
      // A constant through a name (an inlined helper's `axis` parameter, a constexpr).
      if (!ax && a) {
        if (auto sv = expr(*a).sym()) ax = sym::constant(sv);
      }
      if (!ax) {
        opaque(e, f + " with a non-literal axis");
        return scalarValue(sym::opaque(text(e)));
      }
      Value v = scalarValue(sym::var(f == "program_id" ? pidVar(static_cast<int>(*ax)) : numProgramsVar(static_cast<int>(*ax))));
      v.dtype = "i32";
      return v;
    }
    if (f == "cdiv") {
      auto args = evalArgs(e);
      if (args.size() == 2 && args[0].sym() && args[1].sym()) return scalarValue(sym::cdiv(args[0].sym(), args[1].sym()));
      return unknown();
    }
    if (f == "constexpr") {
      auto args = evalArgs(e);
      return args.empty() ? unknown() : args[0];
    }
    if (f == "zeros" || f == "full" || f == "empty" || f == "ones") {
      const Node* shape = argOrKw(e, 0, "shape");
      Value v;
      v.data = true;
      if (shape) {
        auto d = dimsOf(*shape, true);
        v.shape_known = d.has_value();
        if (d) v.dims = *d;
      }
      const Node* dt = f == "full" ? argOrKw(e, 2, "dtype") : argOrKw(e, 1, "dtype");
      if (f == "full") {
        if (const Node* val = argOrKw(e, 1, "value")) expr(*val);
      }
      v.dtype = dtypeArg(dt);
      return v;
    }
    if (f == "zeros_like" || f == "full_like" || f == "ones_like" || f == "empty_like") {
      auto args = evalArgs(e);
      Value v = args.empty() ? Value{} : args[0];
      v.aff.reset();
      v.data = true;
      v.access = -1;
      if (const Node* dt = keywordArg(e, "dtype")) v.dtype = dtypeArg(dt);
      return v;
    }
    if (f == "load") return load(e);
    if (f == "store") return store(e);
    if (f.rfind("atomic_", 0) == 0) return atomic(e, f.substr(7));
    if (f == "make_block_ptr") return makeBlockPtr(e);
    if (f == "advance") return advance(e);
    if (f == "make_tensor_descriptor" || f == "_experimental_make_tensor_descriptor") return makeDescriptor(e);
    if (f == "load_tensor_descriptor" || f == "_experimental_descriptor_load") {
      auto args = evalArgs(e);
      Value d = args.empty() ? Value{} : args[0];
      return descriptorAccessFunctional(e, "load", d);
    }
    if (f == "store_tensor_descriptor" || f == "_experimental_descriptor_store") {
      auto args = evalArgs(e);
      Value d = args.empty() ? Value{} : args[0];
      return descriptorAccessFunctional(e, "store", d);
    }
    if (f == "dot" || f == "dot_scaled") return dot(e, f == "dot_scaled");
    static const std::set<std::string> reductions = {"sum", "max", "min", "argmax", "argmin", "reduce", "xor_sum"};
    if (reductions.count(f)) {
      auto args = evalArgs(e);
      return reduction(e, f, args.empty() ? Value{} : args[0], 1);
    }
    if (f == "cumsum" || f == "cumprod" || f == "associative_scan") {
      auto args = evalArgs(e);
      return scan(e, f, args.empty() ? Value{} : args[0], 1);
    }
    if (f == "cast") {
      auto args = evalArgs(e);
      std::string to = dtypeArg(argOrKw(e, 1, "dtype"));
      bool bitcast = false;
      if (const Node* b = keywordArg(e, "bitcast")) bitcast = isType(*b, "Constant") && (*b)["value"] == true;
      return cast(e, args.empty() ? Value{} : args[0], to, bitcast);
    }
    if (f == "trans" || f == "permute") {
      auto args = evalArgs(e);
      Value v = args.empty() ? Value{} : args[0];
      if (v.shape_known && v.dims.size() == 2) return transpose(v, {1, 0});
      if (v.shape_known && v.dims.size() == 3 && args.size() == 2 && args[1].is_tuple) {
        std::vector<int> perm;
        for (const auto& it : args[1].items) {
          auto c = sym::constant(it.sym());
          if (c) perm.push_back(static_cast<int>(*c));
        }
        if (perm.size() == 3) return transpose(v, perm);
      }
      v.shape_known = false;
      v.aff.reset();
      return v;
    }
    if (f == "reshape" || f == "view" || f == "broadcast_to") {
      auto args = evalArgs(e);
      Value v = args.empty() ? Value{} : args[0];
      v.aff.reset();
      const Node* shape = argOrKw(e, 1, "shape");
      if (shape) {
        auto d = dimsOf(*shape, true);
        v.shape_known = d.has_value();
        if (d) v.dims = *d;
      } else {
        v.shape_known = false;
      }
      return v;
    }
    if (f == "expand_dims") {
      Value v = e["args"].empty() ? Value{} : expr(e["args"][0]);
      const Node* axn = argOrKw(e, 1, "axis");
      auto ax = axn ? sym::constant(expr(*axn).sym()) : std::nullopt;
      if (!ax || !v.shape_known) {
        v.shape_known = false;
        v.aff.reset();
        return v;
      }
      int64_t i = *ax < 0 ? static_cast<int64_t>(v.dims.size()) + 1 + *ax : *ax;
      i = std::clamp<int64_t>(i, 0, static_cast<int64_t>(v.dims.size()));
      v.dims.insert(v.dims.begin() + i, sym::num(1));
      if (v.aff) for (auto& t : v.aff->terms) if (t.axis >= i) ++t.axis;
      return v;
    }
    if (f == "multiple_of" || f == "max_contiguous" || f == "max_constancy") {
      auto args = evalArgs(e);
      return args.empty() ? Value{} : args[0];
    }
    if (f == "where") {
      auto args = evalArgs(e);
      if (args.size() < 3) return unknown();
      Value r = binary(e, "where", args[1], args[2], false);
      r.aff.reset();
      if (args[0].shape_known && r.shape_known) r.dims = broadcastDims(args[0].dims, r.dims);
      if (args[1].sym() && args[2].sym() && args[0].sym()) r.aff = Aff{sym::select(args[0].sym(), args[1].sym(), args[2].sym()), {}, {}};
      return r;
    }
    if (f == "static_assert" || f == "device_assert" || f == "static_print" || f == "assume") {
      return Value{};
    }
    if (f == "device_print") {
      out_.notes.push_back(fmt::format("line {}: tl.device_print prints from every thread; it slows the kernel", loc(e).line));
      return Value{};
    }
    if (f == "debug_barrier") {
      out_.notes.push_back(fmt::format("line {}: tl.debug_barrier synchronizes the block", loc(e).line));
      return Value{};
    }
    if (f == "inline_asm_elementwise") {
      for (const auto& a : e["args"]) expr(a);
      opaque(e, "inline assembly: its cost is unknown");
      return unknown();
    }
    if (f == "join" || f == "interleave") {
      auto args = evalArgs(e);
      Value v = args.empty() ? Value{} : args[0];
      v.aff.reset();
      if (v.shape_known) v.dims.push_back(sym::num(2));
      if (f == "interleave" && v.shape_known && v.dims.size() >= 2) {
        v.dims.pop_back();
        v.dims.back() = sym::mul(v.dims.back(), sym::num(2));
      }
      return v;
    }
    if (f == "split") {
      auto args = evalArgs(e);
      Value v = args.empty() ? Value{} : args[0];
      v.aff.reset();
      if (v.shape_known && !v.dims.empty()) v.dims.pop_back();
      Value t;
      t.is_tuple = true;
      t.items = {v, v};
      return t;
    }
    if (f == "ravel" || f == "flip" || f == "sort" || f == "histogram" || f == "gather") {
      auto args = evalArgs(e);
      Value v = args.empty() ? Value{} : args[0];
      v.aff.reset();
      if (f == "ravel" && v.shape_known) v.dims = {sym::product(v.dims)};
      if (f == "histogram" || f == "gather") v.shape_known = false;
      return v;
    }
    // Elementwise math: the broadcast of the tensor arguments.
    static const std::map<std::string, int> math = {
        {"exp", 1}, {"exp2", 1}, {"log", 1}, {"log2", 1}, {"log1p", 1}, {"expm1", 1}, {"sqrt", 1}, {"sqrt_rn", 1},
        {"rsqrt", 1}, {"sin", 1}, {"cos", 1}, {"tan", 1}, {"tanh", 1}, {"abs", 1}, {"sigmoid", 1}, {"erf", 1},
        {"floor", 1}, {"ceil", 1}, {"maximum", 1}, {"minimum", 1}, {"clamp", 2}, {"fma", 2}, {"div_rn", 1},
        {"fdiv", 1}, {"umulhi", 1}, {"softmax", 5}, {"pow", 1}, {"fast_expf", 1}, {"fast_dividef", 1},
        {"round", 1}, {"rint", 1}, {"trunc", 1}, {"exp10", 1}, {"log10", 1}, {"atan", 1}, {"asin", 1}, {"acos", 1},
        {"sinh", 1}, {"cosh", 1}, {"erfc", 1}, {"neg", 1}, {"rcp", 1}, {"copysign", 1}, {"fmod", 1}, {"isnan", 0},
        {"isinf", 0}, {"signbit", 0}};
    auto args = evalArgs(e);
    for (const auto& kw : e["keywords"]) expr(kw["value"]);
    Value r;
    r.shape_known = true;
    bool first = true;
    for (const auto& a : args) {
      if (!a.shape_known) {
        r.shape_known = false;
        continue;
      }
      r.dims = first ? a.dims : broadcastDims(r.dims, a.dims);
      first = false;
      r.data = r.data || a.data;
      if (r.dtype.empty() || r.dtype == kPyFloat || r.dtype == kPyInt) r.dtype = a.dtype;
    }
    for (const auto& a : args) r.data = r.data || a.data;
    if ((f == "maximum" || f == "minimum") && args.size() == 2 && args[0].sym() && args[1].sym()) {
      r.aff = Aff{f == "maximum" ? sym::max(args[0].sym(), args[1].sym()) : sym::min(args[0].sym(), args[1].sym()), {}, {}};
    }
    auto it = math.find(f);
    if (it != math.end()) {
      if (it->second > 0) recordMath(e, f, it->second, r);
      return r;
    }
    opaque(e, "tl." + f + " is not modelled");
    r.aff.reset();
    return r;
  }

  Value arange(const Node& e) {
    const Node* start = argOrKw(e, 0, "start");
    const Node* end = argOrKw(e, 1, "end");
    if (!start || !end) {
      opaque(e, "tl.arange without start and end");
      return unknown();
    }
    Value s = expr(*start), en = expr(*end);
    if (!s.sym() || !en.sym()) {
      opaque(e, "tl.arange bounds are not integer expressions");
      return unknown();
    }
    sym::Expr extent = sym::sub(en.sym(), s.sym());
    markTile(en.sym());
    markTile(s.sym());
    Value v;
    v.shape_known = true;
    v.dims = {extent};
    v.dtype = "i32";
    Term t;
    t.axis = 0;
    t.stride = sym::num(1);
    t.extent = extent;
    t.index = "arange(" + sym::str(s.sym()) + ", " + sym::str(en.sym()) + ")";
    t.arange = next_arange_++;
    v.aff = Aff{s.sym(), {t}, {}};
    return v;
  }

  // ---- memory ----------------------------------------------------------------------------
  std::set<std::string> pointerCandidates(const sym::Expr& offset) const {
    std::set<std::string> out;
    for (const auto& a : sym::addends(offset)) {
      if (a->op != sym::Op::kVar) continue;
      const Param* p = k_.param(a->name);
      if (!p || p->is_constexpr) continue;
      out.insert(a->name);
    }
    return out;
  }

  PointerForm pointerForm(const Value& pv, const Node& ptr_node) {
    PointerForm pf;
    if (!pv.aff) {
      pf.irregular.push_back(pv.data ? "the pointer is loaded data" : "pointer expression not understood: " + text(ptr_node, 60));
      return pf;
    }
    const Aff& a = *pv.aff;
    auto cands = pointerCandidates(a.offset);
    std::string base;
    std::vector<std::string> typed, untyped_nonint;
    for (const auto& c : cands) {
      auto t = types_.types.find(c);
      if (t != types_.types.end()) {
        if (!t->second.empty() && t->second[0] == '*') typed.push_back(c);
        continue;
      }
      if (!int_evidence_.count(c)) untyped_nonint.push_back(c);
    }
    if (typed.size() == 1) {
      base = typed[0];
      pf.base_evidence = "its type is " + types_.types.at(base);
    } else if (typed.empty() && untyped_nonint.size() == 1) {
      base = untyped_nonint[0];
      pf.base_evidence = "the only addend that is a parameter used as neither an integer nor a constexpr";
    } else if (typed.empty() && untyped_nonint.size() > 1) {
      for (const auto& c : untyped_nonint) {
        if (c.find("ptr") != std::string::npos || c.find("Ptr") != std::string::npos) {
          if (!base.empty()) {
            base.clear();
            break;
          }
          base = c;
        }
      }
      if (!base.empty()) pf.base_evidence = "guessed from its name: several addends could be the pointer";
    }
    if (base.empty()) {
      pf.irregular.push_back("no pointer parameter found in " + text(ptr_node, 60));
      pf.offset = a.offset;
    } else {
      pf.base = base;
      pf.offset = sym::sub(a.offset, sym::var(base));
    }
    for (const auto& t : a.terms) {
      IndexTerm it;
      it.axis = t.axis;
      it.stride = t.stride;
      it.extent = t.extent;
      it.index = t.index;
      it.wrap = t.wrap;
      it.wrap_by = t.wrap_by;
      pf.terms.push_back(it);
    }
    std::sort(pf.terms.begin(), pf.terms.end(), [](const IndexTerm& x, const IndexTerm& y) { return x.axis < y.axis; });
    pf.irregular.insert(pf.irregular.end(), a.irregular.begin(), a.irregular.end());
    pf.affine = !base.empty() && pf.irregular.empty();
    return pf;
  }

  IrAccess newAccess(const Node& e, AccessKind kind, const std::string& api) {
    IrAccess a;
    a.id = static_cast<int>(out_.accesses.size());
    a.kind = kind;
    a.api = api;
    a.loc = loc(e);
    a.loop = currentLoop();
    a.via = via_;
    a.guards = guards_;
    return a;
  }

  void readMask(IrAccess& a, const Node& call, size_t mask_pos) {
    const Node* mask = argOrKw(call, mask_pos, "mask");
    if (!mask || (isType(*mask, "Constant") && (*mask)["vt"] == "None")) return;
    Value m = expr(*mask);
    a.mask = text(*mask, 100);
    a.mask_bounds = m.bounds;
  }

  void readModifiers(IrAccess& a, const Node& call) {
    a.cache_modifier = kwString(call, "cache_modifier");
    a.eviction_policy = kwString(call, "eviction_policy");
    a.padding_option = kwString(call, "padding_option");
    a.sem = kwString(call, "sem");
    a.scope = kwString(call, "scope");
    if (const Node* b = keywordArg(call, "boundary_check")) a.boundary_check = text(*b, 40);
    if (const Node* v = keywordArg(call, "volatile")) a.is_volatile = isType(*v, "Constant") && (*v)["value"] == true;
  }

  void fillFromBlockPtr(IrAccess& a, const Value& pv) {
    const IrBlockPtr& bp = out_.block_ptrs[pv.block_ptr];
    a.block_ptr = pv.block_ptr;
    a.shape = bp.block_shape;
    a.shape_known = !bp.block_shape.empty();
    a.ptr.base = bp.base;
    a.ptr.base_evidence = "the base of the block pointer";
    sym::Expr off = bp.base_offset ? bp.base_offset : sym::num(0);
    bool ok = bp.offsets.size() == bp.strides.size() && bp.strides.size() == bp.block_shape.size() && !bp.base.empty();
    for (size_t i = 0; ok && i < bp.strides.size(); ++i) {
      off = sym::add(off, sym::mul(bp.offsets[i], bp.strides[i]));
      IndexTerm t;
      t.axis = static_cast<int>(i);
      t.stride = bp.strides[i];
      t.extent = bp.block_shape[i];
      t.index = fmt::format("block axis {}", i);
      a.ptr.terms.push_back(t);
    }
    a.ptr.offset = off;
    a.ptr.affine = ok && !sym::isOpaque(off);
    if (!ok) a.ptr.irregular.push_back("block pointer not fully understood");
  }

  Value load(const Node& e) {
    const Node* ptr = argOrKw(e, 0, "pointer");
    if (!ptr) {
      opaque(e, "tl.load without a pointer");
      return unknown();
    }
    Value pv = expr(*ptr);
    IrAccess a = newAccess(e, AccessKind::kLoad, "tl.load");
    a.text = text(*ptr, 100);
    if (pv.block_ptr >= 0) {
      fillFromBlockPtr(a, pv);
      a.dtype = pv.pointee;
    } else {
      a.shape = pv.dims;
      a.shape_known = pv.shape_known;
      a.dtype = pv.pointee;
      a.ptr = pointerForm(pv, *ptr);
    }
    readMask(a, e, 1);
    if (const Node* o = argOrKw(e, 2, "other")) {
      expr(*o);
      a.other = text(*o, 40);
    }
    readModifiers(a, e);
    Value r;
    r.shape_known = a.shape_known;
    r.dims = a.shape;
    r.dtype = a.dtype;
    r.data = true;
    r.access = a.id;
    out_.accesses.push_back(a);
    return r;
  }

  Value store(const Node& e) {
    const Node* ptr = argOrKw(e, 0, "pointer");
    const Node* val = argOrKw(e, 1, "value");
    if (!ptr) {
      opaque(e, "tl.store without a pointer");
      return Value{};
    }
    Value pv = expr(*ptr);
    Value vv = val ? expr(*val) : Value{};
    IrAccess a = newAccess(e, AccessKind::kStore, "tl.store");
    a.value_from_dot = vv.from_dot;
    a.text = text(*ptr, 100);
    if (pv.block_ptr >= 0) {
      fillFromBlockPtr(a, pv);
      a.dtype = pv.pointee;
    } else {
      a.shape = pv.dims;
      a.shape_known = pv.shape_known;
      a.dtype = pv.pointee;
      a.ptr = pointerForm(pv, *ptr);
    }
    readMask(a, e, 2);
    readModifiers(a, e);
    out_.accesses.push_back(a);
    return Value{};
  }

  Value atomic(const Node& e, const std::string& op) {
    const Node* ptr = argOrKw(e, 0, "pointer");
    if (!ptr) {
      opaque(e, "atomic without a pointer");
      return unknown();
    }
    Value pv = expr(*ptr);
    size_t mask_pos = 2;
    if (op == "cas") {
      if (const Node* c = argOrKw(e, 1, "cmp")) expr(*c);
      if (const Node* v = argOrKw(e, 2, "val")) expr(*v);
      mask_pos = 99;
    }
    Value vv = op != "cas" && argOrKw(e, 1, "val") ? expr(*argOrKw(e, 1, "val")) : Value{};
    IrAccess a = newAccess(e, AccessKind::kAtomic, "tl.atomic_" + op);
    a.value_from_dot = vv.from_dot;
    a.op = op;
    a.text = text(*ptr, 100);
    a.shape = pv.dims;
    a.shape_known = pv.shape_known;
    a.dtype = pv.pointee;
    a.ptr = pointerForm(pv, *ptr);
    readMask(a, e, mask_pos);
    readModifiers(a, e);
    if (op == "cas") {
      if (const Node* s = argOrKw(e, 3, "sem")) if (auto t = strLiteral(*s)) a.sem = *t;
    }
    Value r;
    r.shape_known = a.shape_known;
    r.dims = a.shape;
    r.dtype = a.dtype;
    r.data = true;
    out_.accesses.push_back(a);
    return r;
  }

  std::vector<sym::Expr> symList(const Node* n, bool tile = false) {
    if (!n) return {};
    auto d = dimsOf(*n, tile);
    if (!d) return {};
    return *d;
  }

  Value makeBlockPtr(const Node& e) {
    const Node* base = argOrKw(e, 0, "base");
    IrBlockPtr bp;
    bp.id = static_cast<int>(out_.block_ptrs.size());
    bp.loc = loc(e);
    Value bv = base ? expr(*base) : Value{};
    if (bv.aff) {
      auto c = pointerCandidates(bv.aff->offset);
      if (c.size() == 1) bp.base = *c.begin();
    }
    bp.shape = symList(argOrKw(e, 1, "shape"));
    bp.strides = symList(argOrKw(e, 2, "strides"));
    bp.offsets = symList(argOrKw(e, 3, "offsets"));
    bp.block_shape = symList(argOrKw(e, 4, "block_shape"), true);
    if (const Node* order = argOrKw(e, 5, "order")) {
      Value ov = expr(*order);
      for (const auto& it : ov.items) if (auto c = sym::constant(it.sym())) bp.order.push_back(static_cast<int>(*c));
    }
    // An offset folded into the base pointer (base + row * stride) adds to the offsets' sum.
    if (bv.aff && !bp.base.empty()) {
      sym::Expr extra = sym::sub(bv.aff->offset, sym::var(bp.base));
      if (sym::constant(extra) != 0 && !bp.strides.empty()) {
        out_.notes.push_back(fmt::format("line {}: block pointer base carries an offset ({})", bp.loc.line, sym::str(extra)));
        bp.base_offset = extra;
      }
    }
    if (bp.base.empty()) opaque(e, "block pointer base is not a pointer parameter");
    if (bp.block_shape.empty() || bp.strides.empty()) opaque(e, "block pointer shape / strides not understood");
    out_.block_ptrs.push_back(bp);
    Value v;
    v.block_ptr = bp.id;
    v.is_pointer = true;
    v.pointee = bv.pointee;
    v.shape_known = !bp.block_shape.empty();
    v.dims = bp.block_shape;
    return v;
  }

  Value advance(const Node& e) {
    auto args = evalArgs(e);
    if (args.size() < 2 || args[0].block_ptr < 0) {
      opaque(e, "tl.advance of something that is not a known block pointer");
      return unknown();
    }
    std::vector<sym::Expr> deltas;
    for (const auto& it : args[1].items) deltas.push_back(it.sym() ? it.sym() : sym::opaque("?"));
    // A loop-carried advance: bp = tl.advance(bp, ...) inside a loop.
    if (!loop_stack_.empty() && isType(e["args"][0], "Name")) {
      std::string name = e["args"][0]["id"].get<std::string>();
      if (loop_outer_names_.back().count(name)) advances_[loop_stack_.back()][name] = deltas;
    }
    IrBlockPtr bp = out_.block_ptrs[args[0].block_ptr];
    bp.id = static_cast<int>(out_.block_ptrs.size());
    bp.loc = loc(e);
    bp.advanced_from = args[0].block_ptr;
    bp.advance = deltas;
    for (size_t i = 0; i < bp.offsets.size() && i < deltas.size(); ++i) bp.offsets[i] = sym::add(bp.offsets[i], deltas[i]);
    out_.block_ptrs.push_back(bp);
    Value v = args[0];
    v.block_ptr = bp.id;
    return v;
  }

  Value makeDescriptor(const Node& e) {
    const Node* base = argOrKw(e, 0, "base");
    IrDescriptor d;
    d.id = static_cast<int>(out_.descriptors.size());
    d.loc = loc(e);
    Value bv = base ? expr(*base) : Value{};
    if (bv.aff) {
      auto c = pointerCandidates(bv.aff->offset);
      if (c.size() == 1) d.base = *c.begin();
    }
    d.shape = symList(argOrKw(e, 1, "shape"));
    d.strides = symList(argOrKw(e, 2, "strides"));
    d.block_shape = symList(argOrKw(e, 3, "block_shape"), true);
    out_.descriptors.push_back(d);
    Value v;
    v.desc = d.id;
    v.pointee = bv.pointee;
    return v;
  }

  int descriptorFor(const Value& base, const Node& base_node) {
    if (base.desc >= 0) return base.desc;
    if (isParamName(base_node)) {
      std::string name = base_node["id"].get<std::string>();
      for (const auto& d : out_.descriptors) if (d.host && d.base == name) return d.id;
      IrDescriptor d;
      d.id = static_cast<int>(out_.descriptors.size());
      d.loc = loc(base_node);
      d.base = name;
      d.host = true;
      // Triton's signature type for a host TensorDescriptor: "tensordesc<fp16[64, 64]>".
      auto t = types_.types.find(name);
      if (t != types_.types.end() && t->second.rfind("tensordesc<", 0) == 0) {
        std::string s = t->second.substr(11);
        size_t lb = s.find('['), rb = s.find(']');
        if (lb != std::string::npos && rb != std::string::npos) {
          std::string dims = s.substr(lb + 1, rb - lb - 1);
          size_t pos = 0;
          while (pos < dims.size()) {
            size_t comma = dims.find(',', pos);
            std::string item = dims.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
            try {
              d.block_shape.push_back(sym::num(std::stoll(item)));
            } catch (...) {
              d.block_shape.clear();
              break;
            }
            if (comma == std::string::npos) break;
            pos = comma + 1;
          }
        }
      }
      if (types_.symbolic_host_descriptors && !d.block_shape.empty()) {
        for (size_t i = 0; i < d.block_shape.size(); ++i) {
          d.shape.push_back(sym::var(fmt::format("{}.shape[{}]", name, i)));
          // the last dimension's stride is 1 (TensorDescriptor asserts it)
          d.strides.push_back(i + 1 == d.block_shape.size() ? sym::num(1)
                                                            : sym::var(fmt::format("{}.strides[{}]", name, i)));
        }
      }
      out_.descriptors.push_back(d);
      host_descs_.insert(name);
      return d.id;
    }
    return -1;
  }

  void fillFromDescriptor(IrAccess& a, int di, const std::vector<sym::Expr>& offsets) {
    const IrDescriptor& d = out_.descriptors[di];
    a.descriptor = di;
    a.desc_offsets = offsets;
    a.shape = d.block_shape;
    a.shape_known = !d.block_shape.empty();
    a.ptr.base = d.base;
    a.ptr.base_evidence = d.host ? "a tensor descriptor built on the host" : "the base of the tensor descriptor";
    bool ok = !d.strides.empty() && d.strides.size() == d.block_shape.size() && offsets.size() == d.strides.size();
    sym::Expr off = sym::num(0);
    for (size_t i = 0; ok && i < d.strides.size(); ++i) {
      off = sym::add(off, sym::mul(offsets[i], d.strides[i]));
      IndexTerm t;
      t.axis = static_cast<int>(i);
      t.stride = d.strides[i];
      t.extent = d.block_shape[i];
      t.index = fmt::format("descriptor axis {}", i);
      a.ptr.terms.push_back(t);
    }
    a.ptr.offset = ok ? off : nullptr;
    a.ptr.affine = ok;
    if (!ok) a.ptr.irregular.push_back(d.host ? "host-side descriptor: block shape and strides are set by the launcher"
                                              : "descriptor strides / block shape not understood");
  }

  std::vector<sym::Expr> offsetList(const Value& v) {
    std::vector<sym::Expr> out;
    for (const auto& it : v.items) out.push_back(it.sym() ? it.sym() : sym::opaque("?"));
    if (!v.is_tuple && v.sym()) out.push_back(v.sym());
    return out;
  }

  Value descriptorAccess(const Node& e, const std::string& m, const Value& base, const Node& base_node) {
    int di = descriptorFor(base, base_node);
    auto args = evalArgs(e);
    if (di < 0) {
      opaque(e, "." + m + "() on something that is not a known tensor descriptor");
      return unknown();
    }
    IrAccess a = newAccess(e, m == "load" ? AccessKind::kLoad : AccessKind::kStore, "desc." + m);
    a.text = text(e, 100);
    if (m == "store" && args.size() > 1) a.value_from_dot = args[1].from_dot;
    fillFromDescriptor(a, di, args.empty() ? std::vector<sym::Expr>{} : offsetList(args[0]));
    a.dtype = base.pointee;
    auto t = types_.types.find(out_.descriptors[di].base);
    if (a.dtype.empty() && t != types_.types.end() && t->second.rfind("tensordesc<", 0) == 0) {
      std::string s = t->second.substr(11);
      a.dtype = s.substr(0, s.find('['));
    }
    readModifiers(a, e);
    Value r;
    r.shape_known = a.shape_known;
    r.dims = a.shape;
    r.dtype = a.dtype;
    r.data = true;
    r.access = a.id;
    out_.accesses.push_back(a);
    return m == "load" ? r : Value{};
  }

  Value descriptorAccessFunctional(const Node& e, const std::string& m, const Value& d) {
    const Node& base_node = e["args"].empty() ? e : e["args"][0];
    IrAccess a = newAccess(e, m == "load" ? AccessKind::kLoad : AccessKind::kStore, "tl." + m + "_tensor_descriptor");
    int di = descriptorFor(d, base_node);
    if (di < 0) {
      opaque(e, "tensor descriptor not understood");
      return unknown();
    }
    Value offs = e["args"].size() > 1 ? expr(e["args"][1]) : Value{};
    fillFromDescriptor(a, di, offsetList(offs));
    a.dtype = d.pointee;
    a.text = text(e, 100);
    Value r;
    r.shape_known = a.shape_known;
    r.dims = a.shape;
    r.dtype = a.dtype;
    r.data = true;
    r.access = a.id;
    out_.accesses.push_back(a);
    return m == "load" ? r : Value{};
  }

  Value dot(const Node& e, bool scaled) {
    auto args = evalArgs(e);
    std::map<std::string, Value> kw;
    for (const auto& k : e["keywords"]) {
      if (k["arg"].is_string()) kw[k["arg"].get<std::string>()] = expr(k["value"]);
    }
    Value a, b;
    std::optional<Value> acc;
    if (!scaled) {
      a = args.size() > 0 ? args[0] : kw.count("input") ? kw["input"] : Value{};
      b = args.size() > 1 ? args[1] : kw.count("other") ? kw["other"] : Value{};
      if (args.size() > 2) acc = args[2];
      else if (kw.count("acc")) acc = kw["acc"];
    } else {
      // dot_scaled(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc=None, ...)
      a = args.size() > 0 ? args[0] : kw.count("lhs") ? kw["lhs"] : Value{};
      b = args.size() > 3 ? args[3] : kw.count("rhs") ? kw["rhs"] : Value{};
      if (args.size() > 6) acc = args[6];
      else if (kw.count("acc")) acc = kw["acc"];
    }
    if (acc && acc->is_none) acc.reset();
    IrDot d;
    d.id = static_cast<int>(out_.dots.size());
    d.loc = loc(e);
    d.loop = currentLoop();
    d.via = via_;
    d.guards = guards_;
    d.scaled = scaled;
    d.text = text(e, 80);
    d.a_dtype = a.dtype == kPyFloat ? "" : a.dtype;
    d.b_dtype = b.dtype == kPyFloat ? "" : b.dtype;
    d.a_access = a.access;
    d.b_access = b.access;
    d.b_transposed = b.transposed;
    d.has_acc = acc.has_value();
    if (const Node* ip = keywordArg(e, "input_precision")) {
      if (auto s = strLiteral(*ip)) d.input_precision = *s;
      else d.input_precision = text(*ip, 30);
    }
    if (const Node* at = keywordArg(e, "allow_tf32")) {
      if (isType(*at, "Constant") && (*at)["value"].is_boolean()) d.allow_tf32 = (*at)["value"].get<bool>();
    }
    if (const Node* od = keywordArg(e, "out_dtype")) d.out_dtype = dtypeArg(od);
    if (d.has_acc) {
      d.acc_dtype = acc->dtype;
    } else if (!d.out_dtype.empty()) {
      d.acc_dtype = d.out_dtype;
    } else if (!d.a_dtype.empty()) {
      d.acc_dtype = isFloatDtype(d.a_dtype) ? "fp32" : "i32";
    }
    Value r;
    r.data = true;
    r.dot_result = true;
    r.from_dot = true;
    r.dtype = d.acc_dtype;
    if (a.shape_known && b.shape_known && a.dims.size() == 2 && b.dims.size() == 2) {
      d.m = a.dims[0];
      d.k = a.dims[1];
      d.n = b.dims[1];
      r.shape_known = true;
      r.dims = {d.m, d.n};
    } else if (a.shape_known && b.shape_known && a.dims.size() == 3 && b.dims.size() == 3) {
      d.batch = a.dims[0];
      d.m = a.dims[1];
      d.k = a.dims[2];
      d.n = b.dims[2];
      r.shape_known = true;
      r.dims = {d.batch, d.m, d.n};
    } else {
      out_.notes.push_back(fmt::format("line {}: a dot whose operand shapes could not be inferred", d.loc.line));
    }
    if (scaled && d.k && sym::constant(d.k)) {
      // packed fp4 operands hold two values per byte: K counts the logical elements
    }
    out_.dots.push_back(d);
    return r;
  }

  // ---- finishing -------------------------------------------------------------------------
  void finish() {
    // Parameter kinds.
    std::map<std::string, std::string> pointer_evidence, desc_evidence;
    for (const auto& a : out_.accesses) {
      if (!a.ptr.base.empty() && !pointer_evidence.count(a.ptr.base) && a.descriptor < 0) {
        pointer_evidence[a.ptr.base] = fmt::format("the base of the {} at line {}", a.api, a.loc.line);
      }
    }
    for (const auto& b : out_.block_ptrs) {
      if (!b.base.empty() && !pointer_evidence.count(b.base)) {
        pointer_evidence[b.base] = fmt::format("the base of the block pointer at line {}", b.loc.line);
      }
    }
    for (const auto& d : out_.descriptors) {
      if (d.base.empty()) continue;
      if (d.host) desc_evidence[d.base] = fmt::format("a tensor descriptor used at line {}", d.loc.line);
      else if (!pointer_evidence.count(d.base)) pointer_evidence[d.base] = fmt::format("the base of the tensor descriptor at line {}", d.loc.line);
    }
    std::set<std::string> used;
    walk(k_.def->at("body"), [&](const Node& n) {
      if (isType(n, "Name")) used.insert(n["id"].get<std::string>());
      return true;
    });
    for (const auto& p : k_.params) {
      IrParam ip;
      ip.name = p.name;
      ip.index = p.index;
      ip.annotation = p.annotation;
      if (p.default_value) ip.default_text = src_.slice(*p.default_value);
      auto t = types_.types.find(p.name);
      if (t != types_.types.end()) ip.type = t->second;
      ip.used = used.count(p.name) > 0;
      if (p.is_constexpr) {
        ip.kind = ParamKind::kConstexpr;
        ip.evidence = "annotated tl.constexpr";
      } else if (!ip.type.empty()) {
        if (ip.type[0] == '*') ip.kind = ParamKind::kPointer;
        else if (ip.type.rfind("tensordesc", 0) == 0 || ip.type == "nvTmaDesc") ip.kind = ParamKind::kDescriptor;
        else ip.kind = ParamKind::kScalar;
        ip.evidence = ip.type == "constexpr" ? "an integer equal to 1 (or None) here: Triton's JIT passes it as a constant"
                                             : "its type is " + ip.type;
      } else if (desc_evidence.count(p.name)) {
        ip.kind = ParamKind::kDescriptor;
        ip.evidence = desc_evidence[p.name];
      } else if (pointer_evidence.count(p.name)) {
        ip.kind = ParamKind::kPointer;
        ip.evidence = pointer_evidence[p.name];
      } else if (int_evidence_.count(p.name)) {
        ip.kind = ParamKind::kScalar;
        ip.evidence = int_evidence_[p.name];
      } else if (!used.count(p.name)) {
        ip.kind = ParamKind::kUnused;
        ip.evidence = "not used in the body";
      } else {
        ip.kind = ParamKind::kUnknown;
        ip.evidence = "used, but neither as a pointer nor in integer arithmetic";
      }
      out_.params.push_back(ip);
    }
    programAxes();
    std::vector<std::string> notes;
    for (const auto& n : out_.notes) if (std::find(notes.begin(), notes.end(), n) == notes.end()) notes.push_back(n);
    out_.notes = notes;
  }

  std::set<int> pidAxesOf(const sym::Expr& e) const {
    std::set<int> axes;
    for (const auto& v : sym::vars(out_.expand(e))) {
      if (v.rfind("program_id(", 0) == 0) axes.insert(std::stoi(v.substr(11)));
    }
    return axes;
  }

  void programAxes() {
    std::map<int, IrProgramAxis> axes;
    // Every program_id call in the kernel (and inlined callees) names an axis.
    for (const auto& [name, a] : pid_names_) {
      axes[a].axis = a;
      axes[a].names.push_back(name);
    }
    for (const auto& [name, def] : out_.locals) {
      for (int a : pidAxesOf(def)) {
        auto& ax = axes[a];
        ax.axis = a;
        ax.names.push_back(name);
      }
    }
    walk(k_.def->at("body"), [&](const Node& n) {
      if (isType(n, "Call") && tlName(n["func"]) == "program_id") {
        const Node* a = argOrKw(n, 0, "axis");
        auto ax = a ? intLiteral(*a) : std::optional<int64_t>(0);
        if (ax) axes[static_cast<int>(*ax)].axis = static_cast<int>(*ax);
      }
      return true;
    });
    for (const auto& acc : out_.accesses) {
      // A descriptor store whose strides are set on the host: its offsets say which tile.
      if (acc.kind != AccessKind::kLoad && acc.descriptor >= 0 && !acc.ptr.offset) {
        for (size_t d = 0; d < acc.desc_offsets.size(); ++d) {
          for (int a : pidAxesOf(acc.desc_offsets[d])) {
            PidUse u;
            u.access = acc.id;
            u.base = acc.ptr.base;
            u.kind = "tile";
            u.dim = static_cast<int>(d);
            if (d < acc.shape.size()) u.extent = acc.shape[d];
            axes[a].axis = a;
            axes[a].uses.push_back(u);
          }
        }
        continue;
      }
      if (acc.kind == AccessKind::kLoad || !acc.ptr.offset) continue;
      for (const auto& addend : sym::addends(acc.ptr.offset)) {
        std::set<int> pa = pidAxesOf(addend);
        if (pa.empty()) continue;
        std::string through;
        for (const auto& f : sym::factors(addend)) {
          if (f->op == sym::Op::kVar && out_.locals.count(f->name) && !pidAxesOf(f).empty()) through = f->name;
        }
        // The scale of the program id: the factors of the expanded addend that do not carry it.
        std::vector<sym::Expr> scale;
        for (const auto& f : sym::factors(out_.expand(addend))) {
          if (!pidAxesOf(f).empty()) continue;
          scale.push_back(f);
        }
        sym::Expr S = sym::product(scale);
        const IndexTerm* tile = nullptr;
        for (const auto& t : acc.ptr.terms) {
          if (t.extent && t.stride && sym::same(S, out_.expand(sym::mul(t.extent, t.stride)))) {
            tile = &t;
            break;
          }
        }
        for (int a : pa) {
          PidUse u;
          u.access = acc.id;
          u.base = acc.ptr.base;
          u.through = through;
          if (tile) {
            u.kind = "tile";
            u.dim = tile->axis;
            u.extent = tile->extent;
            u.stride = tile->stride;
          } else {
            u.kind = "offset";
            u.extent = sym::num(1);
            u.stride = S;
          }
          axes[a].axis = a;
          axes[a].uses.push_back(u);
        }
      }
    }
    for (auto& [a, ax] : axes) {
      std::map<int, std::set<int>> dims_per_access;
      for (const auto& u : ax.uses) if (u.kind == "tile") dims_per_access[u.access].insert(u.dim);
      for (const auto& [acc, dims] : dims_per_access) if (dims.size() > 1) ax.grouped = true;
      std::sort(ax.names.begin(), ax.names.end());
      out_.program_axes.push_back(ax);
    }
  }

  const ModuleIR& ir_;
  const Kernel& k_;
  const ParamTypes& types_;
  const SourceText& src_;
  KernelIR out_;
  std::map<std::string, Value> env_;
  std::map<std::string, int> assign_count_;
  std::map<std::string, std::string> int_evidence_;
  std::vector<int> loop_stack_;
  std::vector<std::set<std::string>> loop_outer_names_;
  std::map<int, std::map<std::string, sym::Expr>> increments_;
  std::map<int, std::map<std::string, std::vector<sym::Expr>>> advances_;
  std::map<std::string, int> loop_var_info_;
  std::vector<IrGuard> guards_;
  size_t guard_base_ = 0;
  std::vector<std::string> via_;
  std::optional<Value> return_value_;
  bool returned_ = false;
  int next_arange_ = 0;
  std::set<std::string> host_descs_;
  std::map<std::string, int> pid_names_;
  int64_t inlined_steps_ = 0;
  bool inline_limit_noted_ = false;
  uint64_t limit_hits_seen_ = sym::limitHits();
  std::set<int> limit_lines_;
};

}  // namespace

KernelIR buildKernelIR(const ModuleIR& ir, const Kernel& kernel, const ParamTypes& types) {
  // A kernel imported from another module reads that module's imports (tl, triton).
  return Builder(kernel.home ? *kernel.home : ir, kernel, types).build();
}

}  // namespace tf

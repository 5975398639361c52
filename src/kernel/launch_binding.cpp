// Map: PyEval (statements and expressions of plain Python with the torch / triton calls
// that shape tensors) -> bindCase (make_inputs, then the launcher, recording launches) ->
// evalGrid.
#include "kernel/launch_binding.h"

#include <fmt/format.h>

#include <cmath>

namespace tf {

PyValue PyValue::integer(int64_t v) {
  PyValue p;
  p.kind = Kind::kInt;
  p.i = v;
  return p;
}

std::string PyValue::describe() const {
  switch (kind) {
    case Kind::kInt: return std::to_string(i);
    case Kind::kBool: return i ? "True" : "False";
    case Kind::kFloat: return fmt::format("{}", f);
    case Kind::kNone: return "None";
    case Kind::kStr: return "'" + s + "'";
    case Kind::kDType: return s;
    case Kind::kTensor: {
      std::string d;
      for (size_t k = 0; k < shape.size(); ++k) d += (k ? ", " : "") + std::to_string(shape[k]);
      std::string st;
      for (size_t k = 0; k < strides.size(); ++k) st += (k ? ", " : "") + std::to_string(strides[k]);
      return fmt::format("tensor {}[{}] strides ({})", dtype.empty() ? "?" : dtype, d, st);
    }
    case Kind::kDescriptor: {
      std::string d;
      for (size_t k = 0; k < shape.size(); ++k) d += (k ? ", " : "") + std::to_string(shape[k]);
      return fmt::format("tensor descriptor {}[{}]", dtype, d);
    }
    case Kind::kTuple: {
      std::string s2 = "(";
      for (size_t k = 0; k < items.size(); ++k) s2 += (k ? ", " : "") + items[k].describe();
      return s2 + ")";
    }
    case Kind::kDict: return "{...}";
    case Kind::kLambda: return "<lambda>";
    default: return "?";
  }
}

std::string tritonType(const PyValue& v) {
  switch (v.kind) {
    case PyValue::Kind::kTensor: return v.dtype.empty() ? "" : "*" + v.dtype;
    case PyValue::Kind::kInt:
      if (v.i == 1) return "constexpr";
      return v.i >= -(int64_t{1} << 31) && v.i < (int64_t{1} << 31) ? "i32" : "i64";
    case PyValue::Kind::kBool: return "i1";
    case PyValue::Kind::kFloat: return "fp32";
    case PyValue::Kind::kNone: return "constexpr";
    case PyValue::Kind::kDescriptor: {
      std::string d;
      for (size_t k = 0; k < v.shape.size(); ++k) d += (k ? ", " : "") + std::to_string(v.shape[k]);
      return fmt::format("tensordesc<{}[{}]>", v.dtype, d);
    }
    default: return "";
  }
}

namespace {

using K = PyValue::Kind;

PyValue unknown() { return PyValue{}; }

PyValue floatValue(double f) {
  PyValue p;
  p.kind = K::kFloat;
  p.f = f;
  return p;
}

PyValue noneValue() {
  PyValue p;
  p.kind = K::kNone;
  return p;
}

std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

PyValue tensorOf(std::vector<int64_t> shape, std::string dtype) {
  PyValue p;
  p.kind = K::kTensor;
  p.strides = contiguousStrides(shape);
  p.shape = std::move(shape);
  p.dtype = std::move(dtype);
  return p;
}

std::string torchDtype(const std::string& attr) {
  static const std::map<std::string, std::string> names = {
      {"float16", "fp16"}, {"half", "fp16"}, {"bfloat16", "bf16"}, {"float32", "fp32"}, {"float", "fp32"},
      {"float64", "fp64"}, {"double", "fp64"}, {"int8", "i8"}, {"uint8", "u8"}, {"int16", "i16"}, {"short", "i16"},
      {"int32", "i32"}, {"int", "i32"}, {"int64", "i64"}, {"long", "i64"}, {"bool", "i1"},
      {"float8_e4m3fn", "fp8e4nv"}, {"float8_e5m2", "fp8e5"}, {"uint32", "u32"}, {"uint16", "u16"}, {"uint64", "u64"}};
  auto it = names.find(attr);
  return it == names.end() ? "" : it->second;
}

struct Frame {
  std::map<std::string, PyValue> env;
  std::optional<PyValue> ret;
  bool returned = false;
};

class PyEval {
 public:
  PyEval(const ModuleIR& mod, CaseBinding* out) : mod_(mod), out_(out) {}

  PyValue callFunction(const FunctionInfo& fn, const std::vector<PyValue>& args,
                       const std::map<std::string, PyValue>& kwargs, int depth) {
    if (depth > 6) {
      note("calls nest too deeply in " + fn.name);
      return unknown();
    }
    Frame f;
    const Node& a = fn.def->at("args");
    std::vector<const Node*> params;
    for (const auto& p : a["posonlyargs"]) params.push_back(&p);
    for (const auto& p : a["args"]) params.push_back(&p);
    const Node& defaults = a["defaults"];
    size_t first_default = params.size() - std::min(params.size(), defaults.size());
    for (size_t i = 0; i < params.size(); ++i) {
      std::string name = (*params[i])["arg"].get<std::string>();
      if (i < args.size()) f.env[name] = args[i];
      else if (kwargs.count(name)) f.env[name] = kwargs.at(name);
      else if (i >= first_default) f.env[name] = eval(defaults[i - first_default], f);
      else f.env[name] = unknown();
    }
    const Node& kwonly = a["kwonlyargs"];
    const Node& kwdefaults = a["kw_defaults"];
    for (size_t i = 0; i < kwonly.size(); ++i) {
      std::string name = kwonly[i]["arg"].get<std::string>();
      if (kwargs.count(name)) f.env[name] = kwargs.at(name);
      else if (i < kwdefaults.size() && kwdefaults[i].is_object()) f.env[name] = eval(kwdefaults[i], f);
    }
    depth_ = depth;
    block(fn.def->at("body"), f);
    return f.ret ? *f.ret : noneValue();
  }

  std::map<std::string, PyValue> lastScope;

 private:
  void note(const std::string& n) {
    if (std::find(out_->notes.begin(), out_->notes.end(), n) == out_->notes.end()) out_->notes.push_back(n);
  }

  int line(const Node& n) const {
    auto p = nodePos(n);
    return p ? p->line : 0;
  }

  void block(const Node& body, Frame& f) {
    for (const auto& s : body) {
      if (f.returned) return;
      stmt(s, f);
    }
  }

  void bind(const Node& target, const PyValue& v, Frame& f) {
    if (isType(target, "Name")) {
      f.env[target["id"].get<std::string>()] = v;
    } else if (isType(target, "Tuple") || isType(target, "List")) {
      const Node& elts = target["elts"];
      for (size_t i = 0; i < elts.size(); ++i) {
        if (v.kind == K::kTuple && i < v.items.size()) bind(elts[i], v.items[i], f);
        else bind(elts[i], unknown(), f);
      }
    }
  }

  void unbindAssigned(const Node& body, Frame& f) {
    walk(body, [&](const Node& n) {
      if (isType(n, "Assign")) for (const auto& t : n["targets"]) bind(t, unknown(), f);
      if (isType(n, "AugAssign") || isType(n, "AnnAssign")) bind(n["target"], unknown(), f);
      return true;
    });
  }

  void stmt(const Node& s, Frame& f) {
    const std::string& t = nodeType(s);
    if (t == "Assign") {
      PyValue v = eval(s["value"], f);
      for (const auto& target : s["targets"]) bind(target, v, f);
    } else if (t == "AnnAssign") {
      if (s["value"].is_object()) bind(s["target"], eval(s["value"], f), f);
    } else if (t == "AugAssign") {
      if (isType(s["target"], "Name")) {
        std::string n = s["target"]["id"].get<std::string>();
        PyValue cur = f.env.count(n) ? f.env[n] : unknown();
        f.env[n] = binop(nodeType(s["op"]), cur, eval(s["value"], f));
      }
    } else if (t == "Expr") {
      eval(s["value"], f);
    } else if (t == "Return") {
      f.ret = s["value"].is_object() ? eval(s["value"], f) : noneValue();
      f.returned = true;
    } else if (t == "If") {
      PyValue c = eval(s["test"], f);
      std::optional<bool> known;
      if (c.isInt()) known = c.i != 0;
      else if (c.kind == K::kNone) known = false;
      if (known) {
        block(*known ? s["body"] : s["orelse"], f);
      } else {
        note(fmt::format("line {}: the condition `{}` could not be evaluated; both branches were followed", line(s),
                         mod_.source->source.slice(s["test"])));
        Frame g = f;
        block(s["body"], g);
        if (g.returned) {
          f.ret = g.ret;
        }
        block(s["orelse"], f);
      }
    } else if (t == "For" || t == "While") {
      note(fmt::format("line {}: a loop in {} was followed once with unknown values", line(s), "the launcher"));
      Frame g = f;
      if (t == "For") bind(s["target"], unknown(), g);
      unbindAssigned(s["body"], g);
      block(s["body"], g);
      unbindAssigned(s["body"], f);
    } else if (t == "With") {
      block(s["body"], f);
    } else if (t == "Try") {
      block(s["body"], f);
    }
  }

  PyValue constant(const Node& e) {
    std::string vt = e.value("vt", "");
    if (vt == "int") return PyValue::integer(e["value"].get<int64_t>());
    if (vt == "bool") {
      PyValue p;
      p.kind = K::kBool;
      p.i = e["value"].get<bool>() ? 1 : 0;
      return p;
    }
    if (vt == "float") return floatValue(e["value"].get<double>());
    if (vt == "None") return noneValue();
    if (vt == "str") {
      PyValue p;
      p.kind = K::kStr;
      p.s = e["value"].get<std::string>();
      return p;
    }
    return unknown();
  }

  PyValue lookupModule(const std::string& name) {
    auto it = mod_.module_assignments.find(name);
    if (it == mod_.module_assignments.end() || module_depth_ > 4) return unknown();
    ++module_depth_;
    Frame g;
    PyValue v = eval(*it->second, g);
    --module_depth_;
    return v;
  }

  static std::optional<std::vector<int64_t>> intList(const PyValue& v) {
    std::vector<int64_t> out;
    if (v.kind == K::kTuple) {
      for (const auto& x : v.items) {
        if (!x.isInt()) return std::nullopt;
        out.push_back(x.i);
      }
      return out;
    }
    if (v.isInt()) return std::vector<int64_t>{v.i};
    return std::nullopt;
  }

  PyValue binop(const std::string& op, const PyValue& a, const PyValue& b) {
    if (a.isInt() && b.isInt()) {
      int64_t x = a.i, y = b.i, r = 0;
      if (op == "Add") r = x + y;
      else if (op == "Sub") r = x - y;
      else if (op == "Mult") r = x * y;
      else if (op == "FloorDiv") {
        if (y == 0) return unknown();
        r = x / y;
        if ((x % y != 0) && ((x < 0) != (y < 0))) --r;
      } else if (op == "Mod") {
        if (y == 0) return unknown();
        r = ((x % y) + y) % y;
      } else if (op == "Pow") {
        r = 1;
        for (int64_t k = 0; k < y && k < 63; ++k) r *= x;
      } else if (op == "Div") {
        return y == 0 ? unknown() : floatValue(static_cast<double>(x) / static_cast<double>(y));
      } else if (op == "LShift") r = x << y;
      else if (op == "RShift") r = x >> y;
      else if (op == "BitAnd") r = x & y;
      else if (op == "BitOr") r = x | y;
      else return unknown();
      return PyValue::integer(r);
    }
    auto num = [](const PyValue& v) -> std::optional<double> {
      if (v.isInt()) return static_cast<double>(v.i);
      if (v.kind == K::kFloat) return v.f;
      return std::nullopt;
    };
    if (num(a) && num(b)) {
      double x = *num(a), y = *num(b);
      if (op == "Add") return floatValue(x + y);
      if (op == "Sub") return floatValue(x - y);
      if (op == "Mult") return floatValue(x * y);
      if (op == "Div") return y == 0 ? unknown() : floatValue(x / y);
      if (op == "Pow") return floatValue(std::pow(x, y));
      return unknown();
    }
    if (a.kind == K::kTensor && b.kind == K::kTensor && op == "MatMult" && a.shape.size() == 2 && b.shape.size() == 2) {
      return tensorOf({a.shape[0], b.shape[1]}, a.dtype);
    }
    if (a.kind == K::kTensor) {
      PyValue r = a;
      r.strides = contiguousStrides(r.shape);
      return r;
    }
    if (b.kind == K::kTensor) {
      PyValue r = b;
      r.strides = contiguousStrides(r.shape);
      return r;
    }
    if (a.kind == K::kTuple && b.kind == K::kTuple && op == "Add") {
      PyValue r = a;
      r.items.insert(r.items.end(), b.items.begin(), b.items.end());
      return r;
    }
    return unknown();
  }

  PyValue compare(const std::string& op, const PyValue& a, const PyValue& b) {
    PyValue r;
    r.kind = K::kBool;
    if (op == "Is" || op == "IsNot") {
      bool same = a.kind == K::kNone && b.kind == K::kNone;
      if (a.kind == K::kUnknown || b.kind == K::kUnknown) return unknown();
      r.i = (op == "Is") == same;
      return r;
    }
    auto num = [](const PyValue& v) -> std::optional<double> {
      if (v.isInt()) return static_cast<double>(v.i);
      if (v.kind == K::kFloat) return v.f;
      return std::nullopt;
    };
    if (num(a) && num(b)) {
      double x = *num(a), y = *num(b);
      bool v = op == "Lt" ? x < y : op == "LtE" ? x <= y : op == "Gt" ? x > y : op == "GtE" ? x >= y : op == "Eq" ? x == y
             : op == "NotEq" ? x != y : false;
      r.i = v;
      return r;
    }
    if (a.kind == K::kStr && b.kind == K::kStr && (op == "Eq" || op == "NotEq")) {
      r.i = (a.s == b.s) == (op == "Eq");
      return r;
    }
    if (a.kind == K::kDType && b.kind == K::kDType && (op == "Eq" || op == "NotEq")) {
      r.i = (a.s == b.s) == (op == "Eq");
      return r;
    }
    return unknown();
  }

  std::string qual(const Node& n) const { return mod_.qualifiedName(n); }

  PyValue eval(const Node& e, Frame& f) {
    const std::string& t = nodeType(e);
    if (t == "Constant") return constant(e);
    if (t == "Name") {
      std::string n = e["id"].get<std::string>();
      auto it = f.env.find(n);
      if (it != f.env.end()) return it->second;
      return lookupModule(n);
    }
    if (t == "BinOp") return binop(nodeType(e["op"]), eval(e["left"], f), eval(e["right"], f));
    if (t == "UnaryOp") {
      PyValue v = eval(e["operand"], f);
      const std::string& op = nodeType(e["op"]);
      if (op == "USub") {
        if (v.isInt()) return PyValue::integer(-v.i);
        if (v.kind == K::kFloat) return floatValue(-v.f);
        return v.kind == K::kTensor ? v : unknown();
      }
      if (op == "Not") {
        if (v.isInt()) {
          PyValue r;
          r.kind = K::kBool;
          r.i = v.i == 0;
          return r;
        }
        if (v.kind == K::kNone) {
          PyValue r;
          r.kind = K::kBool;
          r.i = 1;
          return r;
        }
        return unknown();
      }
      return v;
    }
    if (t == "Compare") {
      PyValue a = eval(e["left"], f);
      if (e["ops"].size() != 1) return unknown();
      return compare(nodeType(e["ops"][0]), a, eval(e["comparators"][0], f));
    }
    if (t == "BoolOp") {
      bool is_and = isType(e["op"], "And");
      PyValue last;
      for (const auto& v : e["values"]) {
        last = eval(v, f);
        if (!last.isInt() && last.kind != K::kNone) return unknown();
        bool truth = last.kind != K::kNone && last.i != 0;
        if (is_and && !truth) return last;
        if (!is_and && truth) return last;
      }
      return last;
    }
    if (t == "IfExp") {
      PyValue c = eval(e["test"], f);
      if (!c.isInt()) return unknown();
      return eval(c.i ? e["body"] : e["orelse"], f);
    }
    if (t == "Tuple" || t == "List") {
      PyValue v;
      v.kind = K::kTuple;
      for (const auto& x : e["elts"]) {
        if (isType(x, "Starred")) {
          PyValue s = eval(x["value"], f);
          if (s.kind == K::kTuple) v.items.insert(v.items.end(), s.items.begin(), s.items.end());
          else return unknown();
        } else {
          v.items.push_back(eval(x, f));
        }
      }
      return v;
    }
    if (t == "Dict") {
      PyValue v;
      v.kind = K::kDict;
      for (size_t i = 0; i < e["keys"].size(); ++i) {
        if (!e["keys"][i].is_object()) continue;
        PyValue k = eval(e["keys"][i], f);
        if (k.kind == K::kStr) v.dict[k.s] = eval(e["values"][i], f);
      }
      return v;
    }
    if (t == "Lambda") {
      PyValue v;
      v.kind = K::kLambda;
      v.lambda = &e;
      return v;
    }
    if (t == "Subscript") return subscript(e, f);
    if (t == "Attribute") return attribute(e, f);
    if (t == "Call") return call(e, f);
    return unknown();
  }

  PyValue subscript(const Node& e, Frame& f) {
    PyValue base = eval(e["value"], f);
    const Node& idx = e["slice"];
    if (base.kind == K::kDict) {
      PyValue k = eval(idx, f);
      if (k.kind == K::kStr && base.dict.count(k.s)) return base.dict[k.s];
      return unknown();
    }
    if (base.kind == K::kTuple) {
      if (isType(idx, "Slice")) {
        PyValue lo = idx["lower"].is_object() ? eval(idx["lower"], f) : PyValue::integer(0);
        PyValue hi = idx["upper"].is_object() ? eval(idx["upper"], f) : PyValue::integer(static_cast<int64_t>(base.items.size()));
        if (!lo.isInt() || !hi.isInt()) return unknown();
        int64_t n = static_cast<int64_t>(base.items.size());
        int64_t a = lo.i < 0 ? n + lo.i : lo.i, b = hi.i < 0 ? n + hi.i : hi.i;
        PyValue r;
        r.kind = K::kTuple;
        for (int64_t i = std::max<int64_t>(a, 0); i < std::min(b, n); ++i) r.items.push_back(base.items[i]);
        return r;
      }
      PyValue k = eval(idx, f);
      if (!k.isInt()) return unknown();
      int64_t i = k.i < 0 ? static_cast<int64_t>(base.items.size()) + k.i : k.i;
      if (i < 0 || static_cast<size_t>(i) >= base.items.size()) return unknown();
      return base.items[i];
    }
    if (base.kind == K::kTensor) {
      // x[i] drops the first dimension; slices keep shapes only when they are whole.
      std::vector<const Node*> items;
      if (isType(idx, "Tuple")) for (const auto& x : idx["elts"]) items.push_back(&x);
      else items.push_back(&idx);
      PyValue r = base;
      r.shape.clear();
      r.strides.clear();
      size_t d = 0;
      for (const Node* it : items) {
        if (isType(*it, "Slice")) {
          if (it->at("lower").is_object() || it->at("upper").is_object() || it->at("step").is_object()) return unknown();
          if (d < base.shape.size()) {
            r.shape.push_back(base.shape[d]);
            r.strides.push_back(base.strides[d]);
          }
          ++d;
        } else if (isType(*it, "Constant") && (*it)["vt"] == "None") {
          r.shape.push_back(1);
          r.strides.push_back(0);
        } else {
          ++d;
        }
      }
      for (; d < base.shape.size(); ++d) {
        r.shape.push_back(base.shape[d]);
        r.strides.push_back(base.strides[d]);
      }
      return r;
    }
    return unknown();
  }

  PyValue attribute(const Node& e, Frame& f) {
    std::string attr = e["attr"].get<std::string>();
    std::string qn = qual(e);
    if (qn.rfind("torch.", 0) == 0 && qn.find('.', 6) == std::string::npos) {
      std::string d = torchDtype(attr);
      if (!d.empty()) {
        PyValue v;
        v.kind = K::kDType;
        v.s = d;
        return v;
      }
    }
    if (qn.rfind("triton.language.", 0) == 0) {
      static const std::map<std::string, std::string> tl = {{"float16", "fp16"}, {"bfloat16", "bf16"}, {"float32", "fp32"}};
      auto it = tl.find(attr);
      if (it != tl.end()) {
        PyValue v;
        v.kind = K::kDType;
        v.s = it->second;
        return v;
      }
    }
    PyValue base = eval(e["value"], f);
    if (base.kind == K::kTensor) {
      if (attr == "shape") {
        PyValue v;
        v.kind = K::kTuple;
        for (int64_t s : base.shape) v.items.push_back(PyValue::integer(s));
        return v;
      }
      if (attr == "dtype") {
        PyValue v;
        v.kind = K::kDType;
        v.s = base.dtype;
        return v;
      }
      if (attr == "T" || attr == "mT") {
        PyValue r = base;
        std::reverse(r.shape.begin(), r.shape.end());
        std::reverse(r.strides.begin(), r.strides.end());
        return r;
      }
      if (attr == "ndim") return PyValue::integer(static_cast<int64_t>(base.shape.size()));
    }
    if (base.kind == K::kDType && attr == "itemsize") {
      return PyValue::integer(dtypeBytes(base.s));
    }
    return unknown();
  }

  // Shape arguments: f(4096, 4096) or f((4096, 4096)) or f([..]) or size=(...)
  std::optional<std::vector<int64_t>> shapeArgs(const Node& call, Frame& f, size_t first = 0) {
    std::vector<int64_t> shape;
    const Node& args = call["args"];
    if (const Node* size = keywordArg(call, "size")) {
      return intList(eval(*size, f));
    }
    if (args.size() == first + 1) {
      PyValue v = eval(args[first], f);
      return intList(v);
    }
    for (size_t i = first; i < args.size(); ++i) {
      PyValue v = eval(args[i], f);
      if (!v.isInt()) return std::nullopt;
      shape.push_back(v.i);
    }
    return shape;
  }

  std::string dtypeKw(const Node& call, Frame& f, const std::string& dflt) {
    if (const Node* d = keywordArg(call, "dtype")) {
      PyValue v = eval(*d, f);
      return v.kind == K::kDType ? v.s : "";
    }
    return dflt;
  }

  PyValue call(const Node& e, Frame& f) {
    const Node& func = e["func"];
    // A kernel launch: kernel[grid](...)
    if (isType(func, "Subscript")) {
      std::string target = dottedName(func["value"]);
      if (mod_.kernel(target)) return launch(e, f);
    }
    std::string qn = qual(func);
    std::string dotted = dottedName(func);
    // Calls into other functions of the module (helpers of the launcher).
    auto fit = mod_.functions.find(dotted);
    if (fit != mod_.functions.end() && isType(func, "Name")) {
      std::vector<PyValue> args;
      std::map<std::string, PyValue> kwargs;
      for (const auto& a : e["args"]) args.push_back(eval(a, f));
      for (const auto& kw : e["keywords"]) if (kw["arg"].is_string()) kwargs[kw["arg"].get<std::string>()] = eval(kw["value"], f);
      int saved = depth_;
      PyValue r = callFunction(fit->second, args, kwargs, depth_ + 1);
      depth_ = saved;
      return r;
    }
    if (qn == "triton.cdiv" || qn == "triton.next_power_of_2" || dotted == "min" || dotted == "max" || dotted == "int" ||
        dotted == "len" || dotted == "abs" || qn == "math.ceil" || qn == "math.prod" || dotted == "float" || dotted == "bool") {
      std::vector<PyValue> a;
      for (const auto& x : e["args"]) a.push_back(eval(x, f));
      if (qn == "triton.cdiv" && a.size() == 2 && a[0].isInt() && a[1].isInt() && a[1].i != 0) {
        return PyValue::integer((a[0].i + a[1].i - 1) / a[1].i);
      }
      if (qn == "triton.next_power_of_2" && a.size() == 1 && a[0].isInt()) {
        int64_t p = 1;
        while (p < a[0].i) p *= 2;
        return PyValue::integer(p);
      }
      if ((dotted == "min" || dotted == "max") && !a.empty()) {
        std::vector<PyValue> xs = a.size() == 1 && a[0].kind == K::kTuple ? a[0].items : a;
        int64_t r = 0;
        for (size_t k = 0; k < xs.size(); ++k) {
          if (!xs[k].isInt()) return unknown();
          r = k == 0 ? xs[k].i : (dotted == "min" ? std::min(r, xs[k].i) : std::max(r, xs[k].i));
        }
        return PyValue::integer(r);
      }
      if (dotted == "int" && a.size() == 1) {
        if (a[0].isInt()) return PyValue::integer(a[0].i);
        if (a[0].kind == K::kFloat) return PyValue::integer(static_cast<int64_t>(a[0].f));
      }
      if (dotted == "float" && a.size() == 1) {
        if (a[0].isInt()) return floatValue(static_cast<double>(a[0].i));
        if (a[0].kind == K::kFloat) return a[0];
      }
      if (dotted == "len" && a.size() == 1) {
        if (a[0].kind == K::kTuple) return PyValue::integer(static_cast<int64_t>(a[0].items.size()));
        if (a[0].kind == K::kTensor && !a[0].shape.empty()) return PyValue::integer(a[0].shape[0]);
      }
      if (dotted == "abs" && a.size() == 1 && a[0].isInt()) return PyValue::integer(std::llabs(a[0].i));
      if (qn == "math.ceil" && a.size() == 1 && a[0].kind == K::kFloat) return PyValue::integer(static_cast<int64_t>(std::ceil(a[0].f)));
      if (qn == "math.prod" && a.size() == 1 && a[0].kind == K::kTuple) {
        int64_t p = 1;
        for (const auto& x : a[0].items) {
          if (!x.isInt()) return unknown();
          p *= x.i;
        }
        return PyValue::integer(p);
      }
      return unknown();
    }
    if (qn.rfind("torch.", 0) == 0 && isType(func, "Attribute") && qn.find('.', 6) == std::string::npos) {
      return torchCall(e, f, qn.substr(6));
    }
    if (qn.find("TensorDescriptor") != std::string::npos) return descriptor(e, f, qn);
    if (isType(func, "Attribute")) return method(e, f);
    return unknown();
  }

  PyValue descriptor(const Node& e, Frame& f, const std::string& qn) {
    // TensorDescriptor.from_tensor(t, block_shape) / TensorDescriptor(base, shape, strides, block_shape)
    std::vector<PyValue> a;
    for (const auto& x : e["args"]) a.push_back(eval(x, f));
    PyValue t, block;
    if (qn.size() >= 11 && qn.compare(qn.size() - 11, 11, "from_tensor") == 0) {
      if (a.size() >= 1) t = a[0];
      if (a.size() >= 2) block = a[1];
      if (const Node* b = keywordArg(e, "block_shape")) block = eval(*b, f);
    } else {
      if (a.size() >= 1) t = a[0];
      if (a.size() >= 4) block = a[3];
      if (const Node* b = keywordArg(e, "block_shape")) block = eval(*b, f);
    }
    auto bs = intList(block);
    if (t.kind != K::kTensor || !bs) return unknown();
    PyValue d;
    d.kind = K::kDescriptor;
    d.dtype = t.dtype;
    d.shape = *bs;
    return d;
  }

  PyValue torchCall(const Node& e, Frame& f, const std::string& fn) {
    static const std::set<std::string> creators = {"randn", "rand", "empty", "zeros", "ones"};
    if (creators.count(fn)) {
      auto shape = shapeArgs(e, f);
      if (!shape) return unknown();
      return tensorOf(*shape, dtypeKw(e, f, "fp32"));
    }
    if (fn == "full") {
      auto shape = e["args"].empty() ? std::nullopt : intList(eval(e["args"][0], f));
      if (!shape) return unknown();
      return tensorOf(*shape, dtypeKw(e, f, "fp32"));
    }
    if (fn == "randint") {
      // randint(low, high, size) or randint(high, size)
      std::optional<std::vector<int64_t>> shape;
      if (const Node* size = keywordArg(e, "size")) shape = intList(eval(*size, f));
      else if (!e["args"].empty()) shape = intList(eval(e["args"][e["args"].size() - 1], f));
      if (!shape) return unknown();
      return tensorOf(*shape, dtypeKw(e, f, "i64"));
    }
    if (fn == "arange") {
      std::vector<PyValue> a;
      for (const auto& x : e["args"]) a.push_back(eval(x, f));
      if (a.size() == 1 && a[0].isInt()) return tensorOf({a[0].i}, dtypeKw(e, f, "i64"));
      if (a.size() >= 2 && a[0].isInt() && a[1].isInt()) {
        int64_t step = a.size() > 2 && a[2].isInt() && a[2].i != 0 ? a[2].i : 1;
        return tensorOf({(a[1].i - a[0].i + step - 1) / step}, dtypeKw(e, f, "i64"));
      }
      return unknown();
    }
    if (fn == "randn_like" || fn == "rand_like" || fn == "empty_like" || fn == "zeros_like" || fn == "ones_like" ||
        fn == "full_like") {
      PyValue base = e["args"].empty() ? unknown() : eval(e["args"][0], f);
      if (base.kind != K::kTensor) return unknown();
      PyValue r = tensorOf(base.shape, base.dtype);
      std::string d = dtypeKw(e, f, base.dtype);
      r.dtype = d;
      return r;
    }
    if (fn == "empty_strided") {
      auto shape = e["args"].size() > 0 ? intList(eval(e["args"][0], f)) : std::nullopt;
      auto strides = e["args"].size() > 1 ? intList(eval(e["args"][1], f)) : std::nullopt;
      if (!shape || !strides) return unknown();
      PyValue r = tensorOf(*shape, dtypeKw(e, f, "fp32"));
      r.strides = *strides;
      return r;
    }
    if (fn == "matmul" || fn == "mm") {
      PyValue a = eval(e["args"][0], f), b = eval(e["args"][1], f);
      return binop("MatMult", a, b);
    }
    if (fn == "manual_seed" || fn == "Generator") return unknown();
    return unknown();
  }

  PyValue method(const Node& e, Frame& f) {
    const Node& func = e["func"];
    std::string m = func["attr"].get<std::string>();
    PyValue base = eval(func["value"], f);
    std::vector<PyValue> a;
    for (const auto& x : e["args"]) a.push_back(eval(x, f));
    if (base.kind == K::kDict && m == "get") {
      if (!a.empty() && a[0].kind == K::kStr) {
        auto it = base.dict.find(a[0].s);
        if (it != base.dict.end()) return it->second;
        return a.size() > 1 ? a[1] : noneValue();
      }
      return unknown();
    }
    if (base.kind != K::kTensor) return unknown();
    if (m == "stride") {
      if (a.empty()) {
        PyValue t;
        t.kind = K::kTuple;
        for (int64_t s : base.strides) t.items.push_back(PyValue::integer(s));
        return t;
      }
      if (!a[0].isInt()) return unknown();
      int64_t i = a[0].i < 0 ? static_cast<int64_t>(base.strides.size()) + a[0].i : a[0].i;
      if (i < 0 || static_cast<size_t>(i) >= base.strides.size()) return unknown();
      return PyValue::integer(base.strides[i]);
    }
    if (m == "size") {
      if (a.empty()) return tupleOfShape(base);
      if (!a[0].isInt()) return unknown();
      int64_t i = a[0].i < 0 ? static_cast<int64_t>(base.shape.size()) + a[0].i : a[0].i;
      if (i < 0 || static_cast<size_t>(i) >= base.shape.size()) return unknown();
      return PyValue::integer(base.shape[i]);
    }
    if (m == "numel") {
      int64_t n = 1;
      for (int64_t s : base.shape) n *= s;
      return PyValue::integer(n);
    }
    if (m == "dim") return PyValue::integer(static_cast<int64_t>(base.shape.size()));
    if (m == "element_size") return PyValue::integer(dtypeBytes(base.dtype));
    if (m == "to") {
      PyValue r = base;
      for (const auto& x : a) if (x.kind == K::kDType) r.dtype = x.s;
      if (const Node* d = keywordArg(e, "dtype")) {
        PyValue dv = eval(*d, f);
        if (dv.kind == K::kDType) r.dtype = dv.s;
      }
      return r;
    }
    if (m == "half") { base.dtype = "fp16"; return base; }
    if (m == "float") { base.dtype = "fp32"; return base; }
    if (m == "bfloat16") { base.dtype = "bf16"; return base; }
    if (m == "double") { base.dtype = "fp64"; return base; }
    if (m == "int") { base.dtype = "i32"; return base; }
    if (m == "long") { base.dtype = "i64"; return base; }
    if (m == "contiguous") {
      base.strides = contiguousStrides(base.shape);
      return base;
    }
    if (m == "t" && base.shape.size() == 2) {
      std::swap(base.shape[0], base.shape[1]);
      std::swap(base.strides[0], base.strides[1]);
      return base;
    }
    if (m == "transpose" && a.size() == 2 && a[0].isInt() && a[1].isInt()) {
      int64_t n = static_cast<int64_t>(base.shape.size());
      int64_t i = a[0].i < 0 ? n + a[0].i : a[0].i, j = a[1].i < 0 ? n + a[1].i : a[1].i;
      if (i < 0 || j < 0 || i >= n || j >= n) return unknown();
      std::swap(base.shape[i], base.shape[j]);
      std::swap(base.strides[i], base.strides[j]);
      return base;
    }
    if (m == "permute") {
      std::vector<PyValue> xs = a.size() == 1 && a[0].kind == K::kTuple ? a[0].items : a;
      if (xs.size() != base.shape.size()) return unknown();
      PyValue r = base;
      for (size_t k = 0; k < xs.size(); ++k) {
        if (!xs[k].isInt() || xs[k].i < 0 || static_cast<size_t>(xs[k].i) >= base.shape.size()) return unknown();
        r.shape[k] = base.shape[xs[k].i];
        r.strides[k] = base.strides[xs[k].i];
      }
      return r;
    }
    if (m == "view" || m == "reshape") {
      std::vector<PyValue> xs = a.size() == 1 && a[0].kind == K::kTuple ? a[0].items : a;
      if (xs.size() == 1 && xs[0].kind == K::kDType) {
        base.dtype = xs[0].s;
        return base;
      }
      int64_t total = 1;
      for (int64_t s : base.shape) total *= s;
      std::vector<int64_t> shape;
      int infer = -1;
      int64_t known = 1;
      for (size_t k = 0; k < xs.size(); ++k) {
        if (!xs[k].isInt()) return unknown();
        if (xs[k].i == -1) infer = static_cast<int>(k);
        else known *= xs[k].i;
        shape.push_back(xs[k].i);
      }
      if (infer >= 0) shape[infer] = known == 0 ? 0 : total / known;
      return tensorOf(shape, base.dtype);
    }
    if (m == "unsqueeze" && a.size() == 1 && a[0].isInt()) {
      int64_t n = static_cast<int64_t>(base.shape.size());
      int64_t i = a[0].i < 0 ? n + 1 + a[0].i : a[0].i;
      if (i < 0 || i > n) return unknown();
      base.shape.insert(base.shape.begin() + i, 1);
      base.strides.insert(base.strides.begin() + i, i < n ? base.strides[i] * base.shape[i + 1] : 1);
      return base;
    }
    if (m == "flatten") return tensorOf({[&] { int64_t n = 1; for (int64_t s : base.shape) n *= s; return n; }()}, base.dtype);
    if (m == "clone" || m == "cuda" || m == "cpu" || m == "detach" || m == "requires_grad_" || m == "abs" ||
        m == "exp" || m == "add_" || m == "mul_" || m == "normal_" || m == "uniform_" || m == "zero_" || m == "fill_" ||
        m == "sigmoid" || m == "relu" || m == "sqrt") {
      return base;
    }
    return unknown();
  }

  static PyValue tupleOfShape(const PyValue& base) {
    PyValue t;
    t.kind = K::kTuple;
    for (int64_t s : base.shape) t.items.push_back(PyValue::integer(s));
    return t;
  }

  PyValue launch(const Node& e, Frame& f) {
    LaunchBinding b;
    for (size_t i = 0; i < mod_.launches.size(); ++i) {
      if (mod_.launches[i].call == &e) b.site = static_cast<int>(i);
    }
    if (b.site < 0) return unknown();
    const LaunchSite& site = mod_.launches[b.site];
    b.kernel = site.kernel;
    b.grid = site.grid;
    for (const auto& arg : site.args) b.args[arg.param] = eval(*arg.expr, f);
    for (const auto& [name, opt] : site.options) {
      PyValue v = eval(*opt.expr, f);
      if (v.isInt()) b.options[name] = v.i;
      else b.notes.push_back(fmt::format("{} at the launch could not be evaluated", name));
    }
    if (site.has_starred) b.notes.push_back("the launch passes *args / **kwargs: some arguments are unknown");
    b.scope = f.env;
    out_->launches.push_back(std::move(b));
    return unknown();
  }

  const ModuleIR& mod_;
  CaseBinding* out_;
  int depth_ = 0;
  int module_depth_ = 0;
};

}  // namespace

CaseBinding bindCase(const ModuleIR& source, const std::string& launcher, const ModuleIR* harness,
                     const nlohmann::json& case_) {
  CaseBinding out;
  PyValue case_value;
  case_value.kind = K::kDict;
  for (const auto& [k, v] : case_.items()) {
    if (v.is_number_integer()) case_value.dict[k] = PyValue::integer(v.get<int64_t>());
    else if (v.is_number_float()) case_value.dict[k] = floatValue(v.get<double>());
    else if (v.is_boolean()) {
      PyValue b;
      b.kind = K::kBool;
      b.i = v.get<bool>();
      case_value.dict[k] = b;
    } else if (v.is_string()) {
      PyValue s;
      s.kind = K::kStr;
      s.s = v.get<std::string>();
      case_value.dict[k] = s;
    }
  }
  std::vector<PyValue> inputs;
  if (harness) {
    auto it = harness->functions.find("make_inputs");
    if (it == harness->functions.end()) {
      out.notes.push_back("the harness has no make_inputs(case, seed)");
    } else {
      PyEval hev(*harness, &out);
      PyValue r = hev.callFunction(it->second, {case_value, PyValue::integer(0)}, {}, 0);
      if (r.kind == K::kTuple) inputs = r.items;
      else if (r.kind == K::kTensor) inputs = {r};
      else out.notes.push_back("make_inputs' result could not be evaluated");
    }
  }
  out.inputs = inputs;
  auto fit = source.functions.find(launcher);
  if (fit == source.functions.end()) {
    out.notes.push_back("no launcher function '" + launcher + "' in the source");
    return out;
  }
  PyEval ev(source, &out);
  ev.callFunction(fit->second, inputs, {}, 0);
  for (auto& l : out.launches) {
    for (const auto& [name, v] : l.args) {
      if (v.kind == K::kUnknown) l.notes.push_back(fmt::format("argument {} could not be evaluated", name));
    }
  }
  return out;
}

namespace {

// Calls `lambda` (a Lambda node) with `args`, the names of `scope` visible inside it.
PyValue callLambda(const ModuleIR& source, const Node& lambda, const std::vector<PyValue>& args,
                   const std::map<std::string, PyValue>& scope) {
  CaseBinding scratch;
  PyEval ev(source, &scratch);
  nlohmann::json ret = {{"_t", "Return"}, {"value", lambda["body"]}};
  nlohmann::json def = {{"_t", "FunctionDef"}, {"name", "<lambda>"}, {"args", lambda["args"]},
                        {"body", nlohmann::json::array({ret})}};
  std::map<std::string, PyValue> kwargs;
  for (const auto& [k, v] : scope) {
    def["args"]["kwonlyargs"].push_back({{"_t", "arg"}, {"arg", k}});
    def["args"]["kw_defaults"].push_back(nullptr);
    kwargs[k] = v;
  }
  FunctionInfo fi;
  fi.name = "<lambda>";
  fi.def = &def;
  return ev.callFunction(fi, args, kwargs, 0);
}

// Evaluates an expression in `scope`.
PyValue evalIn(const ModuleIR& source, const Node& expr, const std::map<std::string, PyValue>& scope) {
  nlohmann::json lambda = {{"_t", "Lambda"},
                           {"args", {{"_t", "arguments"}, {"posonlyargs", nlohmann::json::array()},
                                     {"args", nlohmann::json::array()}, {"defaults", nlohmann::json::array()},
                                     {"kwonlyargs", nlohmann::json::array()}, {"kw_defaults", nlohmann::json::array()}}},
                           {"body", expr}};
  return callLambda(source, lambda, {}, scope);
}

PyValue metaDict(const LaunchBinding& launch, const std::map<std::string, int64_t>& meta) {
  PyValue metav;
  metav.kind = PyValue::Kind::kDict;
  for (const auto& [k, v] : launch.args) metav.dict[k] = v;
  for (const auto& [k, v] : meta) metav.dict[k] = PyValue::integer(v);
  return metav;
}

}  // namespace

std::optional<std::array<int64_t, 3>> evalGrid(const ModuleIR& source, const LaunchBinding& launch,
                                               const std::map<std::string, int64_t>& meta) {
  if (!launch.grid) return std::nullopt;
  PyValue gv;
  if (isType(*launch.grid, "Lambda")) {
    gv.kind = PyValue::Kind::kLambda;
    gv.lambda = launch.grid;  // a copy made by evalIn would not outlive it
  } else {
    gv = evalIn(source, *launch.grid, launch.scope);
  }
  if (gv.kind == PyValue::Kind::kLambda) gv = callLambda(source, *gv.lambda, {metaDict(launch, meta)}, launch.scope);
  std::array<int64_t, 3> grid = {1, 1, 1};
  if (gv.isInt()) {
    grid[0] = gv.i;
    return grid;
  }
  if (gv.kind != PyValue::Kind::kTuple || gv.items.empty() || gv.items.size() > 3) return std::nullopt;
  for (size_t i = 0; i < gv.items.size(); ++i) {
    if (!gv.items[i].isInt()) return std::nullopt;
    grid[i] = gv.items[i].i;
  }
  return grid;
}

std::map<std::string, int64_t> evalHeuristics(const ModuleIR& source, const Kernel& kernel, const LaunchBinding& launch,
                                              const std::map<std::string, int64_t>& meta, std::vector<std::string>* notes) {
  std::map<std::string, int64_t> out;
  std::map<std::string, int64_t> known = meta;
  for (const auto& d : kernel.def->at("decorator_list")) {
    if (!isType(d, "Call")) continue;
    std::string name = source.qualifiedName(d["func"]);
    if (name != "triton.heuristics" && name != "triton.runtime.heuristics") continue;
    const Node* values = keywordArg(d, "values");
    if (!values && !d["args"].empty()) values = &d["args"][0];
    if (!values || !isType(*values, "Dict")) continue;
    for (size_t i = 0; i < (*values)["keys"].size(); ++i) {
      auto key = strLiteral((*values)["keys"][i]);
      const Node& lam = (*values)["values"][i];
      if (!key || !isType(lam, "Lambda")) continue;
      PyValue r = callLambda(source, lam, {metaDict(launch, known)}, {});
      if (r.isInt()) {
        out[*key] = r.i;
        known[*key] = r.i;
      } else if (notes) {
        notes->push_back("the heuristic for " + *key + " could not be evaluated");
      }
    }
  }
  return out;
}

}  // namespace tf

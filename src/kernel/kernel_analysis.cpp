#include "kernel/kernel_analysis.h"

#include <fmt/format.h>

#include <functional>
#include <set>

namespace tf {
namespace {

bool isReduction(const std::string& f) {
  static const std::set<std::string> names = {"sum", "max", "min", "argmax", "argmin", "reduce", "xor_sum", "prod"};
  return names.count(f) > 0;
}

class Analyzer {
 public:
  Analyzer(const ModuleIR& ir, const Kernel& k) : ir_(ir), k_(k), src_(ir.source->source) {
    for (const auto& p : k.params) {
      if (p.is_constexpr) facts_.params[p.name] = {};
      env_[p.name] = Shape{};
    }
  }

  KernelFacts run() {
    block(k_.def->at("body"), 0);
    return std::move(facts_);
  }

 private:
  std::string lname(const Node& func) const {
    // "triton.language.arange" -> "arange"; methods ("x.to") -> "to"
    std::string qn = ir_.qualifiedName(func);
    // tl.math.exp2 -> "exp2": the longer prefix first (it starts with the shorter one)
    for (const std::string pre : {"triton.language.math.", "triton.language."}) {
      if (qn.rfind(pre, 0) == 0) return qn.substr(pre.size());
    }
    return "";
  }

  void block(const Node& body, int loop_depth) {
    for (const auto& s : body) stmt(s, loop_depth);
  }

  void stmt(const Node& s, int depth) {
    const std::string& t = nodeType(s);
    if (t == "Assign") {
      auto shape = expr(s["value"], depth);
      bool pid = mentionsPid(s["value"]);
      for (const auto& target : s["targets"]) assign(target, s["value"], shape, pid, depth);
    } else if (t == "AnnAssign") {
      if (s["value"].is_object()) assign(s["target"], s["value"], expr(s["value"], depth), mentionsPid(s["value"]), depth);
    } else if (t == "AugAssign") {
      expr(s["value"], depth);
      if (isType(s["op"], "Mult")) noteProducts(s["target"], s["value"]);
    } else if (t == "For") {
      ++facts_.loops;
      const Node& it = s["iter"];
      if (isType(it, "Call")) {
        for (const auto& a : it["args"]) markLoopBound(a);
        for (const auto& kw : it["keywords"]) {
          if (kw["arg"].is_string() && kw["arg"].get<std::string>() == "step") markLoopBound(kw["value"]);
        }
      }
      if (isType(s["target"], "Name")) {
        loop_vars_.insert(s["target"]["id"].get<std::string>());
        env_[s["target"]["id"].get<std::string>()] = Shape{};
      }
      block(s["body"], depth + 1);
      block(s["orelse"], depth + 1);
    } else if (t == "While") {
      ++facts_.loops;
      expr(s["test"], depth);
      block(s["body"], depth + 1);
    } else if (t == "If") {
      expr(s["test"], depth);
      block(s["body"], depth);
      block(s["orelse"], depth);
    } else if (t == "Expr" || t == "Return") {
      if (s["value"].is_object()) expr(s["value"], depth);
    } else if (t == "With") {
      block(s["body"], depth);
    }
  }

  void assign(const Node& target, const Node& value, std::optional<Shape> shape, bool pid, int depth) {
    if (isType(target, "Name")) {
      std::string name = target["id"].get<std::string>();
      env_[name] = shape;
      if (pid) pid_vars_.insert(name);
      if (auto axis = programIdAxis(value)) pid_axis_[name] = *axis;
      return;
    }
    if (isType(target, "Tuple") && isType(value, "Tuple") && target["elts"].size() == value["elts"].size()) {
      for (size_t i = 0; i < target["elts"].size(); ++i) {
        const Node& v = value["elts"][i];
        assign(target["elts"][i], v, expr(v, depth), mentionsPid(v), depth);
      }
      return;
    }
    if (isType(target, "Tuple")) {
      for (const auto& e : target["elts"]) {
        if (isType(e, "Name")) env_[e["id"].get<std::string>()] = std::nullopt;
      }
    }
  }

  bool mentionsPid(const Node& e) const {
    bool found = false;
    walk(e, [&](const Node& n) {
      if (found) return false;
      if (isType(n, "Call")) {
        std::string f = ir_.qualifiedName(n["func"]);
        if (f == "triton.language.program_id" || f == "triton.language.num_programs") found = true;
      }
      if (isType(n, "Name") && pid_vars_.count(n["id"].get<std::string>())) found = true;
      return true;
    });
    return found;
  }

  // The axis of `tl.program_id(k)` (k a literal), if `e` is exactly that call.
  std::optional<int> programIdAxis(const Node& e) const {
    if (!isType(e, "Call") || ir_.qualifiedName(e["func"]) != "triton.language.program_id") return std::nullopt;
    const Node* axis = e["args"].empty() ? keywordArg(e, "axis") : &e["args"][0];
    if (!axis) return std::nullopt;
    auto v = intLiteral(*axis);
    if (!v) return std::nullopt;
    return static_cast<int>(*v);
  }

  // The grid axis of a direct program-id value: `pid_m` (bound to tl.program_id(0)) or the call.
  std::optional<int> axisOf(const Node& e) const {
    if (isType(e, "Name")) {
      auto it = pid_axis_.find(e["id"].get<std::string>());
      if (it != pid_axis_.end()) return it->second;
      return std::nullopt;
    }
    return programIdAxis(e);
  }

  bool mentionsLoopVar(const Node& e) const {
    bool found = false;
    walk(e, [&](const Node& n) {
      if (isType(n, "Name") && loop_vars_.count(n["id"].get<std::string>())) found = true;
      return !found;
    });
    return found;
  }

  std::vector<std::string> paramsIn(const Node& e) const {
    std::vector<std::string> out;
    walk(e, [&](const Node& n) {
      if (isType(n, "Name")) {
        std::string id = n["id"].get<std::string>();
        if (facts_.params.count(id)) out.push_back(id);
      }
      return true;
    });
    return out;
  }

  void markLoopBound(const Node& e) {
    for (const auto& p : paramsIn(e)) facts_.params[p].loop_stepped = true;
  }

  void markTile(const std::string& dim_text, const Node* node) {
    if (facts_.params.count(dim_text)) {
      facts_.params[dim_text].tile_extent = true;
      return;
    }
    if (node) for (const auto& p : paramsIn(*node)) facts_.params[p].tile_extent = true;
  }

  void noteProducts(const Node& l, const Node& r) {
    bool lp = mentionsPid(l), rp = mentionsPid(r);
    bool ll = mentionsLoopVar(l), rl = mentionsLoopVar(r);
    auto la = axisOf(l), ra = axisOf(r);
    for (const auto& p : paramsIn(r)) {
      if (lp) facts_.params[p].pid_scaled = true;
      if (la) facts_.params[p].pid_axes.insert(*la);
      if (ll) facts_.params[p].loop_stepped = true;
    }
    for (const auto& p : paramsIn(l)) {
      if (rp) facts_.params[p].pid_scaled = true;
      if (ra) facts_.params[p].pid_axes.insert(*ra);
      if (rl) facts_.params[p].loop_stepped = true;
    }
  }

  // Numpy-style broadcast of two shapes. Unknown with a tensor shape gives that shape
  // (good enough for finding tile extents); unknown with a scalar stays unknown.
  static std::optional<Shape> broadcast(const std::optional<Shape>& a, const std::optional<Shape>& b) {
    if (!a || !b) {
      const auto& known = a ? a : b;
      if (known && !known->empty()) return known;
      return std::nullopt;
    }
    if (a->empty()) return b;
    if (b->empty()) return a;
    size_t n = std::max(a->size(), b->size());
    Shape out(n);
    for (size_t i = 0; i < n; ++i) {
      const std::string* da = i + a->size() >= n ? &(*a)[i + a->size() - n] : nullptr;
      const std::string* db = i + b->size() >= n ? &(*b)[i + b->size() - n] : nullptr;
      if (!da) out[i] = *db;
      else if (!db || *db == "1") out[i] = *da;
      else if (*da == "1") out[i] = *db;
      else out[i] = *da;
    }
    return out;
  }

  std::optional<Shape> shapeFromTuple(const Node& t) {
    if (!(isType(t, "Tuple") || isType(t, "List"))) return std::nullopt;
    Shape s;
    for (const auto& e : t["elts"]) {
      std::string d = src_.slice(e);
      markTile(d, &e);
      s.push_back(d);
    }
    return s;
  }

  const Node* argOrKw(const Node& call, size_t i, const char* name) {
    if (i < call["args"].size()) return &call["args"][i];
    return keywordArg(call, name);
  }

  std::optional<Shape> expr(const Node& e, int depth) {
    const std::string& t = nodeType(e);
    if (t == "Constant") return Shape{};
    if (t == "Name") {
      auto it = env_.find(e["id"].get<std::string>());
      if (it != env_.end()) return it->second;
      return Shape{};  // a global constant
    }
    if (t == "BinOp") {
      auto l = expr(e["left"], depth);
      auto r = expr(e["right"], depth);
      if (isType(e["op"], "Mult")) noteProducts(e["left"], e["right"]);
      if (isType(e["op"], "FloorDiv") || isType(e["op"], "Mod")) {
        if (mentionsPid(e["left"])) for (const auto& p : paramsIn(e["right"])) facts_.params[p].index_arith = true;
      }
      return broadcast(l, r);
    }
    if (t == "BoolOp") {
      std::optional<Shape> s = Shape{};
      for (const auto& v : e["values"]) s = broadcast(s, expr(v, depth));
      return s;
    }
    if (t == "Compare") {
      auto s = expr(e["left"], depth);
      for (const auto& c : e["comparators"]) s = broadcast(s, expr(c, depth));
      return s;
    }
    if (t == "UnaryOp") return expr(e["operand"], depth);
    if (t == "IfExp") {
      expr(e["test"], depth);
      return broadcast(expr(e["body"], depth), expr(e["orelse"], depth));
    }
    if (t == "Subscript") return subscript(e, depth);
    if (t == "Attribute") {
      auto base = expr(e["value"], depth);
      std::string attr = e["attr"].get<std::string>();
      if (attr == "T" && base) return Shape(base->rbegin(), base->rend());
      if (attr == "dtype" || attr == "shape") return std::nullopt;
      return ir_.qualifiedName(e).rfind("triton.language.", 0) == 0 ? Shape{} : base;
    }
    if (t == "Call") return call(e, depth);
    if (t == "Tuple" || t == "List") {
      for (const auto& x : e["elts"]) expr(x, depth);
      return std::nullopt;
    }
    return std::nullopt;
  }

  std::optional<Shape> subscript(const Node& e, int depth) {
    auto base = expr(e["value"], depth);
    const Node& idx = e["slice"];
    std::vector<const Node*> items;
    if (isType(idx, "Tuple")) for (const auto& x : idx["elts"]) items.push_back(&x);
    else items.push_back(&idx);
    if (!base) return std::nullopt;
    Shape out;
    size_t d = 0;
    for (const Node* it : items) {
      if (isType(*it, "Slice")) {
        if (d < base->size()) out.push_back((*base)[d]);
        ++d;
      } else if (isType(*it, "Constant") && (*it)["vt"] == "None") {
        out.push_back("1");
      } else if (isType(*it, "Constant") && (*it)["vt"] == "Ellipsis") {
        return std::nullopt;
      } else {
        ++d;  // an integer index drops the dimension
      }
    }
    while (d < base->size()) out.push_back((*base)[d++]);
    return out;
  }

  std::optional<Shape> call(const Node& e, int depth) {
    const Node& func = e["func"];
    std::string f = lname(func);
    bool method = f.empty() && isType(func, "Attribute");
    std::string m = method ? func["attr"].get<std::string>() : "";
    std::vector<std::optional<Shape>> args;
    for (const auto& a : e["args"]) args.push_back(expr(a, depth));
    for (const auto& kw : e["keywords"]) expr(kw["value"], depth);
    auto arg = [&](size_t i) -> std::optional<Shape> { return i < args.size() ? args[i] : std::nullopt; };

    if (f == "exp") facts_.calls_exp = true;
    if (f == "exp2") facts_.calls_exp2 = true;
    if (f == "arange") {
      const Node* end = argOrKw(e, 1, "end");
      const Node* start = argOrKw(e, 0, "start");
      if (!end) return std::nullopt;
      std::string d = src_.slice(*end);
      if (start && !(intLiteral(*start) && *intLiteral(*start) == 0)) d = fmt::format("({} - {})", d, src_.slice(*start));
      markTile(src_.slice(*end), end);
      return Shape{d};
    }
    if (f == "zeros" || f == "full" || f == "empty" || f == "zeros_like" || f == "full_like") {
      if (f == "zeros_like" || f == "full_like") return arg(0);
      const Node* shape = argOrKw(e, 0, "shape");
      return shape ? shapeFromTuple(*shape) : std::nullopt;
    }
    if (f == "load") {
      ++facts_.loads;
      if (depth > 0) facts_.loop_has_load = true;
      if (auto v = arg(0)) facts_.load_values[&e] = *v;
      return arg(0);
    }
    if (f == "store") {
      ++facts_.stores;
      if (auto v = arg(1)) facts_.store_values[&e] = *v;
      return Shape{};
    }
    if (f.rfind("atomic_", 0) == 0) {
      ++facts_.atomics;
      return arg(0);
    }
    if (f == "make_block_ptr") {
      const Node* bs = keywordArg(e, "block_shape");
      if (!bs && e["args"].size() > 5) bs = &e["args"][5];
      return bs ? shapeFromTuple(*bs) : std::nullopt;
    }
    if (f == "advance") return arg(0);
    // An in-kernel tensor descriptor stands for its block: its loads have the block's shape
    // (below), so a dot of descriptor tiles gives its M, N and K tiles their roles.
    if (f == "make_tensor_descriptor") {
      const Node* bs = keywordArg(e, "block_shape");
      if (!bs && e["args"].size() > 3) bs = &e["args"][3];
      return bs ? shapeFromTuple(*bs) : std::nullopt;
    }
    if (f == "load_tensor_descriptor") {
      ++facts_.loads;
      if (depth > 0) facts_.loop_has_load = true;
      return arg(0);
    }
    if (f == "dot" || f == "dot_scaled") {
      auto a = arg(0), b = arg(1);
      DotFact fact;
      fact.call = &e;
      fact.in_loop = depth > 0;
      fact.loop_depth = depth;
      if (a && b && a->size() == 2 && b->size() == 2) {
        fact.m = (*a)[0];
        fact.k = (*a)[1];
        fact.n = (*b)[1];
        setRole(fact.m, "m");
        setRole(fact.n, "n");
        setRole(fact.k, "k");
        facts_.dots.push_back(fact);
        return Shape{(*a)[0], (*b)[1]};
      }
      if (a && b && a->size() == 3 && b->size() == 3) {
        fact.m = (*a)[1];
        fact.k = (*a)[2];
        fact.n = (*b)[2];
        setRole(fact.m, "m");
        setRole(fact.n, "n");
        setRole(fact.k, "k");
        facts_.dots.push_back(fact);
        return Shape{(*a)[0], (*a)[1], (*b)[2]};
      }
      facts_.dots.push_back(fact);
      facts_.notes.push_back("a dot whose operand shapes could not be inferred");
      return std::nullopt;
    }
    if (f == "trans" || f == "permute") {
      auto a = arg(0);
      if (a && a->size() == 2) return Shape{(*a)[1], (*a)[0]};
      return std::nullopt;
    }
    if (isReduction(f) || (method && isReduction(m))) {
      ++facts_.reductions;
      auto a = method ? expr(func["value"], depth) : arg(0);
      const Node* axis = keywordArg(e, "axis");
      if (!axis && e["args"].size() > (method ? 0u : 1u)) axis = &e["args"][method ? 0 : 1];
      if (!a) return std::nullopt;
      if (!axis || (isType(*axis, "Constant") && (*axis)["vt"] == "None")) return Shape{};
      auto ax = intLiteral(*axis);
      if (!ax) return std::nullopt;
      int64_t i = *ax < 0 ? static_cast<int64_t>(a->size()) + *ax : *ax;
      if (i < 0 || static_cast<size_t>(i) >= a->size()) return std::nullopt;
      Shape out = *a;
      out.erase(out.begin() + i);
      return out;
    }
    if (f == "cumsum" || f == "cumprod" || f == "associative_scan" || f == "sort" || f == "flip") return arg(0);
    if (f == "where") return broadcast(broadcast(arg(0), arg(1)), arg(2));
    if (f == "reshape" || f == "view" || f == "broadcast_to") {
      const Node* shape = argOrKw(e, 1, "shape");
      return shape ? shapeFromTuple(*shape) : std::nullopt;
    }
    if (f == "expand_dims") {
      auto a = arg(0);
      auto ax = e["args"].size() > 1 ? intLiteral(e["args"][1]) : std::nullopt;
      if (!a || !ax) return std::nullopt;
      Shape out = *a;
      int64_t i = *ax < 0 ? static_cast<int64_t>(out.size()) + 1 + *ax : *ax;
      out.insert(out.begin() + std::clamp<int64_t>(i, 0, static_cast<int64_t>(out.size())), "1");
      return out;
    }
    if (f == "program_id" || f == "num_programs" || f == "cdiv") return Shape{};
    if (f == "multiple_of" || f == "max_contiguous" || f == "max_constancy") return arg(0);
    if (!f.empty()) {
      // Elementwise math and the like: the broadcast of the tensor arguments.
      std::optional<Shape> s = Shape{};
      for (const auto& a : args) s = broadcast(s, a);
      return s;
    }
    if (method) {
      auto base = expr(func["value"], depth);
      if (m == "to" || m == "cast") return base;
      // A tensor descriptor's load and store (desc.load([row, col])): memory operations like
      // tl.load / tl.store, so a loop of them has something to pipeline.
      if (m == "load" && e["args"].size() == 1 && isType(e["args"][0], "List")) {
        ++facts_.loads;
        if (depth > 0) facts_.loop_has_load = true;
        return base;  // the descriptor's block shape, when it was made in the kernel
      }
      if (m == "store" && e["args"].size() == 2 && isType(e["args"][0], "List")) {
        ++facts_.stores;
        return Shape{};
      }
      if (m == "reshape" || m == "view") {
        return e["args"].size() == 1 ? shapeFromTuple(e["args"][0]) : std::nullopt;
      }
      return base;
    }
    std::string callee = dottedName(func);
    if (callee == "range" || callee == "min" || callee == "max" || callee == "len" || callee == "int") return Shape{};
    if (const Kernel* h = ir_.kernel(callee)) {  // a nested jit function: not inlined yet, its dots and exps counted
      helperFacts(*h, depth > 0, 0);
      return std::nullopt;
    }
    return std::nullopt;
  }

  // A helper's tl.dot calls in loops and its exponentials, and its own helpers' (4 deep).
  void helperFacts(const Kernel& h, bool in_loop, int nesting) {
    if (!h.def || h.home || &h == &k_ || nesting >= 4) return;
    std::function<void(const Node&, bool)> visit = [&](const Node& n, bool looped) {
      if (n.is_array()) {
        for (const auto& x : n) visit(x, looped);
        return;
      }
      if (!n.is_object()) return;
      const bool loop = isType(n, "For") || isType(n, "While");
      if (isType(n, "Call")) {
        std::string f = lname(n["func"]);
        if (f == "dot" && looped) ++facts_.helper_dots_in_loops;
        if (f == "exp" || f == "exp2") facts_.helper_calls_exp = true;
        if (const Kernel* inner = f.empty() ? ir_.kernel(dottedName(n["func"])) : nullptr) {
          helperFacts(*inner, looped, nesting + 1);
        }
      }
      for (const auto& [key, child] : n.items()) {
        if (child.is_object() || child.is_array()) visit(child, looped || (loop && key == "body"));
      }
    };
    visit(h.def->at("body"), in_loop);
  }

  void setRole(const std::string& dim, const char* role) {
    auto it = facts_.params.find(dim);
    if (it == facts_.params.end()) return;
    if (it->second.dot_role.empty()) it->second.dot_role = role;
  }

  const ModuleIR& ir_;
  const Kernel& k_;
  const SourceText& src_;
  KernelFacts facts_;
  std::map<std::string, std::optional<Shape>> env_;
  std::set<std::string> pid_vars_;
  std::map<std::string, int> pid_axis_;
  std::set<std::string> loop_vars_;
};

}  // namespace

namespace {

// Does a function that launches `kernel` sum whole (`convert` false) or convert to a dtype
// (`convert` true), after the launch, a name it passes to it?
bool launcherReducesAnArgument(const ModuleIR& ir, const Kernel& kernel, bool convert) {
  for (const LaunchSite& site : ir.launches) {
    if (site.kernel != kernel.name || site.function.empty()) continue;
    auto fn = ir.functions.find(site.function);
    if (fn == ir.functions.end() || !fn->second.def) continue;
    std::set<std::string> passed;
    for (const LaunchArg& a : site.args) {
      if (isType(*a.expr, "Name")) passed.insert(a.expr->at("id").get<std::string>());
    }
    auto launch_line = nodePos(*site.call);
    bool found = false;
    walk(fn->second.def->at("body"), [&](const Node& n) {
      if (found || !isType(n, "Call")) return !found;
      // No keywords but `dim=` (a sum along a dimension, which fused-sum also takes).
      const Node& kws = n["keywords"];
      bool dim_kw = kws.size() == 1 && keywordArg(n, "dim");  // (**kwargs has no name)
      if (!kws.empty() && (convert || !dim_kw)) return true;
      auto at = nodePos(n);
      if (!at || !launch_line || at->line <= launch_line->end_line) return true;
      const Node& f = n["func"];
      const Node* of = nullptr;
      std::string attr = isType(f, "Attribute") ? f["attr"].get<std::string>() : "";
      if (!convert) {
        // t.sum(), t.sum(0), t.sum(dim=0), torch.sum(t, -1): at most one dimension, an integer.
        std::string q = ir.qualifiedName(f);
        bool method = attr == "sum" || attr == "mean", function = q == "torch.sum" || q == "torch.mean";
        size_t skip = function ? 1 : 0;
        const Node& args = n["args"];
        const Node* dim = dim_kw ? &kws[0]["value"] : args.size() == skip + 1 ? &args[skip] : nullptr;
        bool one_dim = args.size() + (dim_kw ? 1 : 0) <= skip + 1 && (!dim || intLiteral(*dim));
        if (method && one_dim) of = &f["value"];
        if (function && !args.empty() && one_dim) of = &args[0];
      } else if ((attr == "to" && n["args"].size() == 1) ||
                 ((attr == "bfloat16" || attr == "half" || attr == "float" || attr == "double") && n["args"].empty())) {
        of = &f["value"];
      }
      if (of && isType(*of, "Name") && passed.count((*of)["id"].get<std::string>())) found = true;
      return !found;
    });
    if (found) return true;
  }
  return false;
}

}  // namespace

KernelFacts analyzeKernel(const ModuleIR& ir, const Kernel& kernel) {
  // A kernel imported from another module reads that module's imports (tl, triton).
  KernelFacts facts = Analyzer(kernel.home ? *kernel.home : ir, kernel).run();
  // Any mention of a constexpr parameter in the body counts as a use.
  walk(kernel.def->at("body"), [&](const Node& n) {
    if (isType(n, "Name")) {
      auto it = facts.params.find(n["id"].get<std::string>());
      if (it != facts.params.end()) it->second.used = true;
    }
    return true;
  });
  facts.launcher_sums = launcherReducesAnArgument(ir, kernel, false);
  facts.launcher_converts = launcherReducesAnArgument(ir, kernel, true);
  return facts;
}

}  // namespace tf

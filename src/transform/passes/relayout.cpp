// relayout: a read-only tensor that a dot reads along a strided reduction (K) dimension is
// passed to the kernel as a copy whose K dimension is innermost (contiguous); the launch
// passes the copy's strides, so the kernel computes the same values, reading K-contiguous
// rows. Only the launch changes: the kernel is not edited, so it applies to kernels imported
// from other modules of the task's package too.
//
//   operands=all|a|b   which operands of the kernel's dots (default all)
//
// Measured on the H200 (attorch's NCHW conv2d, 8x320x64x64, 3x3, fp16, its own autotune):
// 0.482 ms as written; the weight with its input channels innermost 0.337 ms; the input in
// channels-last too 0.258 ms (cuDNN 0.148), the copies included.
//
// The copy is made at every call, on the line before the launch (or, inside an expression, as
// `(w_tf := ...)` at the first argument that names it):
//   w_tf = w if w.stride(1) == 1 else w.movedim(1, -1).contiguous().movedim(-1, 1)
//   kernel[grid](x, w_tf, *w_tf.stride(), ...)
// Preconditions: the operand's pointer is a kernel parameter passed a plain name T whose
// strides are passed too (`*T.stride()`, or `T.stride(i)` for every dimension); T appears in
// the launch only as that pointer and through shape queries; the kernel never stores through
// that pointer; and the stride parameter the K index multiplies is one of T's.
//
// A kernel that takes one stride of T as 1 (`b_ptr + k[:, None] * ldb + n[None, :]`, B
// row-major: the fp32 GEMM whose tf32 wgmma wants a K-major B) gets that stride as a new
// parameter, multiplying the operand's index terms on its other axis, when the launch passes
// every other stride, the kernel is in this file and reads the pointer only there. The copy
// is then made only where the kernel as written reads T right (that stride 1, T of the rank
// the kernel indexes); elsewhere T is passed as it is and the new stride as 1:
//   b_tf = b.movedim(0, -1).contiguous().movedim(-1, 0) if b.dim() == 2 and b.stride(1) == 1 and
//          b.stride(0) != 1 else b
//   kernel[grid](a, b_tf, ..., b_tf.stride(0), ..., b_stride1=1 if b_tf is b else b_tf.stride(1))
#include <fmt/format.h>

#include "transform/pass_context.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {

// Names that are factors of a product chain `a * b * (c * d)` (not inside other operations).
void productFactors(const Node& n, std::vector<std::string>* out) {
  if (isType(n, "BinOp") && isType(n["op"], "Mult")) {
    productFactors(n["left"], out);
    productFactors(n["right"], out);
  } else if (isType(n, "Name")) {
    out->push_back(n["id"].get<std::string>());
  }
}

// The node below the `.to(...)` / `.cast` chain: `tl.load(p).to(tl.float16)` -> tl.load(p).
const Node& stripConversions(const PassContext& ctx, const Node& n) {
  const Node* cur = &n;
  while (isType(*cur, "Call")) {
    const Node& f = (*cur)["func"];
    if (isType(f, "Attribute") && f["attr"] == "to") {
      cur = &f["value"];
    } else if (ctx.isTlCall(*cur, "cast") && !(*cur)["args"].empty()) {
      cur = &(*cur)["args"][0];
    } else {
      break;
    }
  }
  return *cur;
}

struct OperandLoad {
  int k_axis = 0;                      // the axis of the loaded tile that the dot reduces over
  std::set<std::string> deps;          // every name the pointer expression depends on
  std::vector<const Node*> exprs;      // the pointer expression and the assignments it follows
  std::vector<const Node*> pointers;   // the loads' pointer expressions themselves
};

// A dot operand that qualifies: its pointer parameters, the parameters multiplying its K
// index, and the index terms of its other axis whose stride the kernel takes as 1.
struct Operand {
  std::set<std::string> pointers;
  std::set<std::string> strides;
  std::vector<const Node*> unit_terms;
  bool shared_unit_term = false;
  OperandLoad load;
};

class Analysis {
 public:
  explicit Analysis(const PassContext& ctx) : ctx_(ctx) {
    walk(ctx.body(), [&](const Node& n) {
      if (isType(n, "FunctionDef") && &n != ctx.kernel->def) return false;
      if (isType(n, "Assign")) {
        for (const auto& t : n["targets"]) {
          if (isType(t, "Name")) values_[t["id"].get<std::string>()].push_back(&n["value"]);
        }
      } else if ((isType(n, "AugAssign") || isType(n, "AnnAssign")) && isType(n["target"], "Name") &&
                 n["value"].is_object()) {
        values_[n["target"]["id"].get<std::string>()].push_back(&n["value"]);
      }
      return true;
    });
  }

  // The load a dot operand comes from: the operand itself or the values assigned to its name.
  std::optional<OperandLoad> operandLoad(const Node& operand, int k_axis) const {
    std::vector<const Node*> candidates;
    std::set<std::string> seen;
    if (!loadsOf(operand, &seen, &candidates)) return std::nullopt;
    OperandLoad out;
    out.k_axis = k_axis;
    for (const Node* c : candidates) {
      const Node* ptr = !(*c)["args"].empty() ? &(*c)["args"][0] : keywordArg(*c, "pointer");
      if (!ptr) return std::nullopt;
      out.pointers.push_back(ptr);
      closure(*ptr, &out);
    }
    return out;
  }

  // The runtime parameters that multiply an index broadcast along `axis` in the expressions.
  std::set<std::string> stridesOnAxis(const OperandLoad& load) const {
    std::set<std::string> out;
    auto note = [&](const std::vector<std::string>& names) {
      for (const auto& nm : names) {
        const Param* p = ctx_.kernel->param(nm);
        if (p && !p->is_constexpr) out.insert(nm);
      }
    };
    for (const Node* e : load.exprs) {
      walk(*e, [&](const Node& n) {
        if (broadcastAxis(n) == load.k_axis) {
          // (stride * offs)[None, :]
          std::vector<std::string> f;
          productFactors(n["value"], &f);
          note(f);
        }
        if (isType(n, "BinOp") && isType(n["op"], "Mult")) {
          // offs[None, :] * stride
          for (const char* side : {"left", "right"}) {
            const char* other = std::string_view(side) == "left" ? "right" : "left";
            if (broadcastAxis(n[side]) == load.k_axis) {
              std::vector<std::string> f;
              productFactors(n[other], &f);
              note(f);
            }
          }
        }
        return true;
      });
    }
    return out;
  }

  // The index terms of the pointer expressions broadcast along the tile's other (non-K) axis
  // that no runtime parameter multiplies: `base + k[:, None] * ldb + n[None, :]` has the term
  // `n[None, :]`, whose stride the kernel takes as 1. Empty when such a term's expression is
  // shared with other accesses (rewriting it would change those too): `*shared` says so.
  std::vector<const Node*> unitTerms(const OperandLoad& load, bool* shared) const {
    int axis = 1 - load.k_axis;
    std::vector<const Node*> out;
    std::set<const Node*> roots_with_terms;
    auto strided = [&](const Node& side) {
      std::vector<std::string> f;
      productFactors(side["value"], &f);
      for (const auto& nm : f) {
        const Param* p = ctx_.kernel->param(nm);
        if (p && !p->is_constexpr) return true;
      }
      return false;
    };
    // The summands of the address: the pointer expression's terms, through the names it
    // adds (`offs = k[:, None] * s + n[None, :]`, `b_ptr + offs`); a term inside a product
    // (`(start + m[:, None]) * stride`) is scaled, not unit-stride.
    std::set<std::string> followed;
    std::function<void(const Node&, const Node*)> summands = [&](const Node& e, const Node* root) {
      if (isType(e, "BinOp") && (isType(e["op"], "Add") || isType(e["op"], "Sub"))) {
        summands(e["left"], root);
        summands(e["right"], root);
      } else if (broadcastAxis(e) == axis && !strided(e)) {
        if (std::find(out.begin(), out.end(), &e) == out.end()) out.push_back(&e);
        roots_with_terms.insert(root);
      } else if (isType(e, "Name") && followed.insert(e["id"].get<std::string>()).second) {
        auto it = values_.find(e["id"].get<std::string>());
        if (it == values_.end()) return;
        for (const Node* v : it->second) summands(*v, v);
      }
    };
    for (const Node* p : load.pointers) summands(*p, p);
    // A name whose value holds a term may be read only by the operand's own pointer expressions.
    std::set<const Node*> inside = namesIn(load);
    *shared = false;
    for (const auto& [name, values] : values_) {
      bool holds = false;
      for (const Node* v : values) holds = holds || roots_with_terms.count(v);
      if (!holds) continue;
      walk(ctx_.body(), [&](const Node& n) {
        if (isType(n, "Name") && n["id"] == name && n.value("ctx", "") != "Store" && !inside.count(&n)) *shared = true;
        return !*shared;
      });
    }
    if (*shared) out.clear();
    return out;
  }

  // Is every read of `param` in the kernel part of the operand's pointer expressions?
  bool readOnlyBy(const std::string& param, const OperandLoad& load) const {
    std::set<const Node*> inside = namesIn(load);
    bool only = true;
    walk(ctx_.body(), [&](const Node& n) {
      if (isType(n, "Name") && n["id"] == param && !inside.count(&n)) only = false;
      return only;
    });
    return only;
  }

  // Does some store or atomic write through a pointer derived from `param`?
  bool writesThrough(const std::string& param) const {
    bool found = false;
    walk(ctx_.body(), [&](const Node& n) {
      if (found || !isType(n, "Call")) return !found;
      std::string fn = ctx_.tlFunction(n);
      if (fn != "store" && fn.rfind("atomic_", 0) != 0) return true;
      const Node* ptr = !n["args"].empty() ? &n["args"][0] : keywordArg(n, "pointer");
      if (!ptr) {
        found = true;  // cannot tell: count it as a write
        return false;
      }
      OperandLoad deps;
      closure(*ptr, &deps);
      if (deps.deps.count(param)) found = true;
      return !found;
    });
    return found;
  }

 private:
  // The Name nodes of the operand's pointer expressions and the assignments they follow.
  static std::set<const Node*> namesIn(const OperandLoad& load) {
    std::set<const Node*> out;
    for (const Node* e : load.exprs) forEachName(*e, [&](const Node& nm) { out.insert(&nm); });
    return out;
  }

  // The tl.load calls a value comes from, through casts and names bound to casts of loads
  // (`x = tl.load(p)`, then `x = x.to(tl.float16)`); false when some binding is anything else.
  bool loadsOf(const Node& value, std::set<std::string>* seen, std::vector<const Node*>* out) const {
    const Node& v = stripConversions(ctx_, value);
    if (isType(v, "Call") && ctx_.isTlCall(v, "load")) {
      out->push_back(&v);
      return true;
    }
    if (!isType(v, "Name")) return false;
    std::string id = v["id"].get<std::string>();
    if (!seen->insert(id).second) return true;
    auto it = values_.find(id);
    if (it == values_.end()) return false;
    for (const Node* b : it->second) {
      if (!loadsOf(*b, seen, out)) return false;
    }
    return true;
  }

  void closure(const Node& e, OperandLoad* out) const {
    out->exprs.push_back(&e);
    forEachName(e, [&](const Node& nm) {
      std::string id = nm["id"].get<std::string>();
      if (!out->deps.insert(id).second) return;
      auto it = values_.find(id);
      if (it == values_.end()) return;
      for (const Node* v : it->second) closure(*v, out);
    });
  }

  const PassContext& ctx_;
  std::map<std::string, std::vector<const Node*>> values_;
};

// `T.stride(i)` -> (T, i); `T.stride()` -> (T, -1).
std::optional<std::pair<std::string, int>> strideCall(const Node& n) {
  if (!isType(n, "Call")) return std::nullopt;
  const Node& f = n["func"];
  if (!isType(f, "Attribute") || f["attr"] != "stride" || !isType(f["value"], "Name")) return std::nullopt;
  std::string t = f["value"]["id"].get<std::string>();
  if (n["args"].empty() && n["keywords"].empty()) return std::make_pair(t, -1);
  if (n["args"].size() == 1 && n["keywords"].empty()) {
    if (auto i = intLiteral(n["args"][0]); i && *i >= 0) return std::make_pair(t, static_cast<int>(*i));
  }
  return std::nullopt;
}

// How many dimensions the launching function shows `name` to have: `a, b, c = name.shape`
// (or .size()), `name.ndim == k` / `name.dim() == k` / `len(name.shape) == k`,
// `name = torch.empty((a, b, c), ...)` (empty, zeros, ones, full, randn, rand).
std::optional<int> rankOf(const Node& function_def, const std::string& name) {
  std::optional<int> rank;
  auto isShapeOf = [&](const Node& v) {
    if (isType(v, "Attribute") && v["attr"] == "shape" && dottedName(v["value"]) == name) return true;
    return isType(v, "Call") && isType(v["func"], "Attribute") && v["func"]["attr"] == "size" &&
           dottedName(v["func"]["value"]) == name && v["args"].empty();
  };
  walk(function_def, [&](const Node& n) {
    if (rank) return false;
    if (isType(n, "Assign") && n["targets"].size() == 1 && isType(n["targets"][0], "Tuple") && isShapeOf(n["value"])) {
      bool starred = false;
      for (const auto& e : n["targets"][0]["elts"]) starred = starred || isType(e, "Starred");
      if (!starred) rank = static_cast<int>(n["targets"][0]["elts"].size());
    } else if (isType(n, "Compare") && n["ops"].size() == 1 && isType(n["ops"][0], "Eq")) {
      const Node& l = n["left"];
      auto k = intLiteral(n["comparators"][0]);
      bool ndim = isType(l, "Attribute") && l["attr"] == "ndim" && dottedName(l["value"]) == name;
      bool dim = isType(l, "Call") && isType(l["func"], "Attribute") && l["func"]["attr"] == "dim" &&
                 dottedName(l["func"]["value"]) == name;
      bool len = isType(l, "Call") && dottedName(l["func"]) == "len" && l["args"].size() == 1 && isShapeOf(l["args"][0]);
      if (k && (ndim || dim || len)) rank = static_cast<int>(*k);
    } else if (isType(n, "Assign") && n["targets"].size() == 1 && dottedName(n["targets"][0]) == name &&
               isType(n["value"], "Call")) {
      std::string fn = dottedName(n["value"]["func"]);
      static const std::set<std::string> kMakers = {"torch.empty", "torch.zeros", "torch.ones",
                                                    "torch.full",  "torch.randn", "torch.rand"};
      const Node& args = n["value"]["args"];
      if (kMakers.count(fn) && !args.empty()) {
        if (isType(args[0], "Tuple") || isType(args[0], "List")) rank = static_cast<int>(args[0]["elts"].size());
        else if (fn != "torch.full") rank = static_cast<int>(args.size());
      }
    }
    return true;
  });
  return rank;
}

// A launch's arguments mapped to kernel parameters, stars `*T.stride()` expanded when T's
// rank is known: for each parameter, the argument node and, inside a star, the dimension.
struct ArgView {
  const Node* expr = nullptr;
  std::string star_tensor;  // set when the parameter is covered by `*T.stride()`
  int star_dim = -1;
};

std::map<std::string, ArgView> mapArguments(const PassContext& ctx, const LaunchSite& site) {
  std::map<std::string, ArgView> out;
  const Node* fdef = nullptr;
  if (auto it = ctx.ir->functions.find(site.function); it != ctx.ir->functions.end()) fdef = it->second.def;
  size_t i = 0;
  const auto& params = ctx.kernel->params;
  for (const auto& a : site.call->at("args")) {
    if (isType(a, "Starred")) {
      auto sc = strideCall(a["value"]);
      std::optional<int> rank = sc && sc->second < 0 && fdef ? rankOf(*fdef, sc->first) : std::nullopt;
      if (!rank) break;  // the rest cannot be placed
      for (int d = 0; d < *rank && i < params.size(); ++d, ++i) out[params[i].name] = {&a, sc->first, d};
      continue;
    }
    if (i < params.size()) out[params[i].name] = {&a, "", -1};
    ++i;
  }
  for (const auto& kw : site.call->at("keywords")) {
    if (kw["arg"].is_string()) out[kw["arg"].get<std::string>()] = {&kw["value"], "", -1};
  }
  return out;
}

// Is every use of the name `t` inside the launch's arguments the pointer argument itself or
// a query that a copy of the same shape answers the same way (strides are the copy's, which
// is the point)?
bool usedOnlyAsPointerAndShape(const Node& call, const std::string& t, const Node* pointer_arg, std::string* why) {
  static const std::set<std::string> kQueries = {"stride", "shape", "size", "dtype", "numel", "ndim", "dim", "device"};
  bool ok = true;
  auto visit = [&](const Node& n) {
    if (!ok || &n == pointer_arg) return false;
    if (isType(n, "Attribute") && isType(n["value"], "Name") && n["value"]["id"] == t) {
      if (!kQueries.count(n["attr"].get<std::string>())) {
        ok = false;
        *why = fmt::format("the launch uses {}.{}", t, n["attr"].get<std::string>());
      }
      return false;
    }
    if (isType(n, "Name") && n["id"] == t) {
      ok = false;
      *why = fmt::format("the launch passes {} more than once", t);
    }
    return ok;
  };
  for (const auto& a : call["args"]) walk(a, visit);
  for (const auto& kw : call["keywords"]) walk(kw["value"], visit);
  return ok;
}

class RelayoutPass : public Pass {
 public:
  RelayoutPass() {
    info_.name = "relayout";
    info_.summary = "Pass a dot operand that the kernel reads along a strided K dimension as a copy with K innermost "
                    "(the launch passes the copy's strides; the kernel is unchanged).";
    info_.preconditions = {
        "the operand is tl.load(pointer expression) (through .to() casts), the pointer a kernel parameter passed "
        "a plain name T, with T's strides passed (*T.stride(), or T.stride(i) for every dimension)",
        "the dot's K index is multiplied by one of T's stride parameters ((s * k)[None, :] or k[None, :] * s for "
        "the first operand, [:, None] for the second)",
        "T appears in the launch only as that pointer and through shape / stride queries; the kernel never "
        "stores through it",
        "a stride of T the launch does not pass (the kernel takes it as 1) becomes a kernel parameter when it is "
        "the only one, the operand's index on its other axis is the only use of it and the kernel is in this file",
    };
    info_.params = {
        {"operands", PassParamKind::kChoice, "all", false, 0, 0, false, {"all", "a", "b"},
         "which operands of the dots to relay out", {"all"}},
    };
    info_.launcher_only = true;
  }
  const PassInfo& info() const override { return info_; }

  PassOutcome run(const PassContext& ctx, const PassArgs& args) const override {
    if (ctx.sites.empty()) return refuse(fmt::format("no launch of {} in this file", ctx.kernel->name));
    if (ctx.facts.dots.empty()) return refuse(fmt::format("{} has no tl.dot", ctx.kernel->name));
    std::string which = args.text("operands");
    Analysis an(ctx);
    std::vector<Operand> operands;
    std::string why_not;
    for (const auto& d : ctx.facts.dots) {
      const Node& call = *d.call;
      for (int op = 0; op < 2; ++op) {
        if ((which == "a" && op != 0) || (which == "b" && op != 1)) continue;
        const Node* arg = op < static_cast<int>(call["args"].size()) ? &call["args"][op] : nullptr;
        if (!arg) continue;
        auto load = an.operandLoad(*arg, op == 0 ? 1 : 0);
        if (!load) {
          why_not = fmt::format("the dot's {} operand is not a tl.load of a pointer expression", op == 0 ? "first" : "second");
          continue;
        }
        std::set<std::string> strides = an.stridesOnAxis(*load);
        std::set<std::string> pointers;
        for (const auto& nm : load->deps) {
          const Param* p = ctx.kernel->param(nm);
          if (p && !p->is_constexpr && !strides.count(nm)) pointers.insert(nm);
        }
        if (strides.empty()) {
          why_not = fmt::format("no stride parameter multiplies the K index of the dot's {} operand",
                                op == 0 ? "first" : "second");
          continue;
        }
        Operand o{std::move(pointers), std::move(strides), {}, false, *load};
        o.unit_terms = an.unitTerms(*load, &o.shared_unit_term);
        operands.push_back(std::move(o));
      }
    }
    if (operands.empty()) return refuse(why_not.empty() ? "no dot operand to relay out" : why_not);

    SourceEditor ed(ctx.text().text());
    std::vector<std::string> unit_params(operands.size());            // the stride parameter added
    std::vector<std::set<const LaunchSite*>> unit_sites(operands.size());  // the launches passing it
    std::map<std::string, std::string> param_types;
    int relaid = 0;
    std::vector<std::string> notes;
    for (const LaunchSite* site : ctx.sites) {
      std::map<std::string, ArgView> argmap = mapArguments(ctx, *site);
      std::set<std::string> done;  // tensors of this launch already relaid
      for (size_t oi = 0; oi < operands.size(); ++oi) {
        const Operand& operand = operands[oi];
        const auto& pointers = operand.pointers;
        const auto& strides = operand.strides;
        // The tensor: a pointer parameter passed a plain name whose stride is passed for a K stride.
        std::string tensor, pointer_param;
        int dim = -1;
        for (const auto& s : strides) {
          auto it = argmap.find(s);
          if (it == argmap.end()) continue;
          std::string t;
          int dd = -1;
          if (!it->second.star_tensor.empty()) {
            t = it->second.star_tensor;
            dd = it->second.star_dim;
          } else if (auto sc = strideCall(*it->second.expr); sc && sc->second >= 0) {
            t = sc->first;
            dd = sc->second;
          }
          if (t.empty()) continue;
          for (const auto& p : pointers) {
            auto pa = argmap.find(p);
            if (pa != argmap.end() && pa->second.star_tensor.empty() && isType(*pa->second.expr, "Name") &&
                pa->second.expr->at("id") == t) {
              tensor = t;
              pointer_param = p;
              dim = dd;
            }
          }
        }
        if (tensor.empty()) {
          why_not = "the K stride of the operand is not passed as a stride of the tensor passed for its pointer "
                    "(x.stride(i) or *x.stride() with x's rank known)";
          continue;
        }
        if (done.count(tensor)) continue;
        if (an.writesThrough(pointer_param)) {
          why_not = fmt::format("the kernel stores through {} (the copy would take the writes)", pointer_param);
          continue;
        }
        const Node* pointer_arg = argmap.at(pointer_param).expr;
        std::string why;
        if (!usedOnlyAsPointerAndShape(*site->call, tensor, pointer_arg, &why)) {
          why_not = why;
          continue;
        }
        std::string name = freshLocal(ctx, *site, tensor + "_tf");
        std::string copy = fmt::format("{t} if {t}.stride({d}) == 1 else {t}.movedim({d}, -1).contiguous()"
                                       ".movedim(-1, {d})",
                                       fmt::arg("t", tensor), fmt::arg("d", dim));
        // Every stride of the tensor is passed; otherwise the kernel takes one as 1, and that
        // one becomes a parameter of the kernel (a unit-stride term of the operand's other axis).
        std::optional<UnitStride> unit;
        if (!allStridesPassed(ctx, *site, tensor, &why)) {
          unit = unitStride(ctx, an, *site, operand, tensor, pointer_param, dim, &why);
          if (!unit) {
            why_not = why;
            continue;
          }
          if (unit_params[oi].empty()) {
            unit_params[oi] = ctx.freshName(stripPtr(pointer_param) + "_stride" + std::to_string(unit->dim));
            for (const Node* t : operand.unit_terms) {
              ed.replace(ctx.range(*t), fmt::format("{} * {}", ctx.slice(*t), unit_params[oi]));
            }
            addKernelParam(ctx, ed, unit_params[oi], "");
            param_types[unit_params[oi]] = "i32";
          }
          // Relaid only where the kernel as written reads the tensor right (that stride 1) and
          // it has the rank the kernel indexes; otherwise passed as it is, the stride as 1.
          copy = fmt::format("{t}.movedim({d}, -1).contiguous().movedim(-1, {d}) if {t}.dim() == {r} and "
                             "{t}.stride({j}) == 1 and {t}.stride({d}) != 1 else {t}",
                             fmt::arg("t", tensor), fmt::arg("d", dim), fmt::arg("r", unit->rank),
                             fmt::arg("j", unit->dim));
          addLaunchKeyword(ctx, ed, *site, unit_params[oi],
                           fmt::format("1 if {n} is {t} else {n}.stride({j})", fmt::arg("n", name),
                                       fmt::arg("t", tensor), fmt::arg("j", unit->dim)));
          unit_sites[oi].insert(site);
        }
        const Node* first = firstMention(*site->call, tensor);
        if (const Node* stmt = statementAround(ctx, *site)) {
          // `name = copy` on the line before the launch's statement.
          int line = nodePos(*stmt)->line;
          std::string indent = ctx.text().indentOf(line);
          std::string comment = fmt::format("  # relayout: dimension {} innermost", dim);
          std::string text = fmt::format("{}{} = {}{}\n", indent, name, copy, comment);
          if (auto cut = copy.find(" if "); unit && text.size() > 101 && cut != std::string::npos) {
            // `name = (copy  # comment` / `        if ... else T)`: the condition on a line of its own.
            std::string pad(indent.size() + name.size() + 4, ' ');
            text = fmt::format("{}{} = ({}{}\n{}{})\n", indent, name, copy.substr(0, cut), comment, pad,
                               copy.substr(cut + 1));
          }
          ed.insert(ctx.lineRange(line, line).begin, text);
          first = nullptr;
        } else {
          // Inside an expression: the first mention evaluated binds the copy (`(name := copy)`).
          copy = fmt::format("({} := {})", name, copy);
        }
        forEachMention(*site->call, tensor, [&](const Node& nm) {
          ed.replace(ctx.range(nm), &nm == first ? copy : name);
        });
        done.insert(tensor);
        notes.push_back(fmt::format("{}: {} is passed with dimension {} innermost (a copy at every call)",
                                    site->function.empty() ? "module level" : site->function, tensor, dim));
        ++relaid;
      }
    }
    if (relaid == 0) return refuse(why_not);
    // A launch that did not relay an operand whose unit stride became a parameter passes 1.
    for (size_t oi = 0; oi < operands.size(); ++oi) {
      if (unit_params[oi].empty()) continue;
      for (const LaunchSite* site : ctx.sites) {
        if (!unit_sites[oi].count(site)) addLaunchKeyword(ctx, ed, *site, unit_params[oi], "1");
      }
      notes.push_back(fmt::format("{} takes the stride it took as 1 as a parameter, {}", ctx.kernel->name,
                                  unit_params[oi]));
    }
    PassOutcome out;
    out.applied = true;
    out.source = ed.apply();
    out.notes = std::move(notes);
    out.param_types = std::move(param_types);
    return out;
  }

 private:
  static bool allStridesPassed(const PassContext& ctx, const LaunchSite& site, const std::string& tensor,
                               std::string* why) {
    std::set<int> dims;
    bool star = false;
    for (const auto& a : site.call->at("args")) {
      if (isType(a, "Starred")) {
        if (auto sc = strideCall(a["value"]); sc && sc->first == tensor && sc->second < 0) star = true;
        continue;
      }
      if (auto sc = strideCall(a); sc && sc->first == tensor) dims.insert(sc->second);
    }
    for (const auto& kw : site.call->at("keywords")) {
      if (auto sc = strideCall(kw["value"]); sc && sc->first == tensor) dims.insert(sc->second);
    }
    if (star) return true;
    const Node* fdef = nullptr;
    if (auto it = ctx.ir->functions.find(site.function); it != ctx.ir->functions.end()) fdef = it->second.def;
    std::optional<int> rank = fdef ? rankOf(*fdef, tensor) : std::nullopt;
    if (!rank) {
      *why = fmt::format("the rank of {} is not known, so whether all its strides are passed is not", tensor);
      return false;
    }
    for (int d = 0; d < *rank; ++d) {
      if (!dims.count(d)) {
        *why = fmt::format("{}.stride({}) is not passed: the kernel takes that stride as given", tensor, d);
        return false;
      }
    }
    return true;
  }

  struct UnitStride {
    int dim = -1;   // the tensor's dimension the kernel takes as unit-stride
    int rank = 0;   // the rank the kernel indexes
  };

  // The one stride of `tensor` the launch does not pass, when the kernel reads it as the
  // operand's unit-stride index terms and may take it as a parameter instead.
  static std::optional<UnitStride> unitStride(const PassContext& ctx, const Analysis& an, const LaunchSite& site,
                                              const Operand& operand, const std::string& tensor,
                                              const std::string& pointer_param, int k_dim, std::string* why) {
    if (operand.unit_terms.empty()) return std::nullopt;  // `why` names the stride not passed
    if (ctx.kernel->home) {
      *why = fmt::format("{} is imported: the stride it takes as 1 cannot become a parameter here", ctx.kernel->name);
      return std::nullopt;
    }
    if (operand.shared_unit_term) {
      *why = "the operand's unit-stride index is computed together with other accesses";
      return std::nullopt;
    }
    if (!an.readOnlyBy(pointer_param, operand.load)) {
      *why = fmt::format("{} is read outside the operand's load", pointer_param);
      return std::nullopt;
    }
    std::set<int> passed;
    auto note = [&](const Node& e) {
      if (auto sc = strideCall(e); sc && sc->first == tensor && sc->second >= 0) passed.insert(sc->second);
    };
    for (const auto& a : site.call->at("args")) note(a);
    for (const auto& kw : site.call->at("keywords")) note(kw["value"]);
    const Node* fdef = nullptr;
    if (auto it = ctx.ir->functions.find(site.function); it != ctx.ir->functions.end()) fdef = it->second.def;
    std::optional<int> known = fdef ? rankOf(*fdef, tensor) : std::nullopt;
    // Without a visible rank, the kernel's indexing gives it: the passed strides and the unit one.
    int rank = known ? *known : static_cast<int>(passed.size()) + 1;
    std::vector<int> missing;
    for (int d = 0; d < rank; ++d) {
      if (!passed.count(d)) missing.push_back(d);
    }
    if (missing.size() != 1 || !passed.count(k_dim) || (!passed.empty() && *passed.rbegin() >= rank)) {
      *why = fmt::format("more than one stride of {} is not passed: the kernel takes them as given", tensor);
      return std::nullopt;
    }
    return UnitStride{missing[0], rank};
  }

  static std::string stripPtr(const std::string& p) {
    for (const char* suffix : {"_ptr", "_ptrs", "_p"}) {
      std::string_view sv(suffix);
      if (p.size() > sv.size() && p.compare(p.size() - sv.size(), sv.size(), sv) == 0) {
        return p.substr(0, p.size() - sv.size());
      }
    }
    return p;
  }

  // The statement the launch is part of, when it starts its line inside a function body (a new
  // statement can go on the line before it); nullptr otherwise.
  static const Node* statementAround(const PassContext& ctx, const LaunchSite& site) {
    auto it = ctx.ir->functions.find(site.function);
    if (it == ctx.ir->functions.end()) return nullptr;
    Range call = ctx.range(*site.call);
    const Node* found = nullptr;
    walk(it->second.def->at("body"), [&](const Node& n) {
      if (found || nodeType(n).empty()) return !found;
      static const std::set<std::string> kSimple = {"Expr", "Assign", "AugAssign", "AnnAssign", "Return"};
      if (kSimple.count(nodeType(n))) {
        auto r = ctx.text().range(n);
        if (r && r->begin <= call.begin && call.end <= r->end) found = &n;
        return false;
      }
      return !isType(n, "FunctionDef") && !isType(n, "Lambda") && !isType(n, "ClassDef");
    });
    if (!found) return nullptr;
    auto p = nodePos(*found);
    if (!p || static_cast<size_t>(p->col) != ctx.text().indentOf(p->line).size()) return nullptr;
    return found;
  }

  static std::string freshLocal(const PassContext& ctx, const LaunchSite& site, const std::string& base) {
    std::set<std::string> used;
    const Node* scope = &ctx.src->ast;
    if (auto it = ctx.ir->functions.find(site.function); it != ctx.ir->functions.end()) scope = it->second.def;
    forEachName(*scope, [&](const Node& n) { used.insert(n["id"].get<std::string>()); });
    std::string name = base;
    for (int i = 2; used.count(name); ++i) name = fmt::format("{}_{}", base, i);
    return name;
  }

  static void forEachMention(const Node& call, const std::string& t, const std::function<void(const Node&)>& fn) {
    auto visit = [&](const Node& root) {
      forEachName(root, [&](const Node& n) {
        if (n["id"] == t) fn(n);
      });
    };
    for (const auto& a : call["args"]) visit(a);
    for (const auto& kw : call["keywords"]) visit(kw["value"]);
  }

  // The mention evaluated first: positional arguments, then keywords, in source order.
  static const Node* firstMention(const Node& call, const std::string& t) {
    const Node* first = nullptr;
    forEachMention(call, t, [&](const Node& n) {
      if (!first) first = &n;
    });
    return first;
  }

  PassInfo info_;
};

}  // namespace

std::unique_ptr<Pass> makeRelayoutPass() { return std::make_unique<RelayoutPass>(); }

}  // namespace tf

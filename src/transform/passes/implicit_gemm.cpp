// implicit-gemm: a loop that accumulates rank-1 updates into a 2-D tile, one scalar step at a
// time (a direct convolution's loop over input channels, a GEMM written as outer products),
// becomes a loop over blocks of that variable whose update is one tl.dot on the tensor cores:
//
//   acc = tl.zeros((BM, BN), tl.float32)          acc = tl.zeros((BM, BN), tl.float32)
//   for c in range(C):                            for c in range(0, C, BLOCK_C):
//       for r in range(R):                            c_offs = c + tl.arange(0, BLOCK_C)
//           ...                            ->         for r in range(R):
//           a = tl.load(x + base + c * sc,                ...
//                       mask=ok, other=0.0)                a = tl.load((x + base)[:, None] + (c_offs * sc)[None, :],
//           b = tl.load(w + offs_n * sk + c,                           mask=ok[:, None] & (c_offs < C)[None, :], ...)
//                       mask=n_ok, other=0.0)              b = tl.load((w + offs_n * sk)[None, :] + c_offs[:, None], ...)
//           acc += a[:, None] * b[None, :]                 acc += tl.dot(a, b, input_precision="ieee")
//
// Why it is exact (up to the order of the floating-point sum): the loop variable V enters the
// kernel only through the two operands' addresses, each REST + V * COEFF with COEFF the same
// for every element (a scalar), so lane j of a block reads what step V + j read; the masks do
// not depend on V, so they mask lane j as they masked step V + j; lanes past the loop's end are
// masked off with 0 for one operand and a finite constant for the other, so they add nothing.
// Everything else the loop runs (inner loops, the names they bind) does not depend on V and has
// no side effect, so running it once per block instead of once per step changes nothing but
// the time. The dot sums the block's products in fp32 like the loop did; fp32 operands keep
// fp32 (input_precision="ieee"): tf32 is a precision choice tensor-cores makes from the task's
// tolerance, never this pass. `.to(tl.float32)` on both operands is dropped: the tensor cores
// multiply fp16, bf16 and 8-bit values exactly into the fp32 accumulator.
//
// Which loop: the innermost loop around the update whose variable qualifies (a direct NCHW
// convolution's outer channel loop qualifies where the filter loops inside, read by the masks,
// do not).
//
// Entry point: makeImplicitGemmPass(). Recognition in ImplicitGemmPass::plan.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "transform/pass_context.h"
#include "transform/passes/loop_split.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {

// One factor of the rank-1 update and the load it comes from.
struct Operand {
  int axis = -1;                 // 0: the column factor (the dot's A), 1: the row factor (B)
  bool wrapped = false;          // broadcast by the update (u[:, None]); else loaded 2-D already
  bool implicit = false;         // a 1-D factor the update broadcasts as a row without writing it
  const Node* factor = nullptr;  // the factor as the update writes it
  const Node* load = nullptr;    // the tl.load call
  const Node* stmt = nullptr;    // `u = tl.load(...)[.to(T)]` in the update's loop body, or null (inline)
  const Node* bind_cast = nullptr;  // the .to(T) call on the binding's value
  const Node* factor_cast = nullptr;  // a .to(T) call in the factor
  const Node* pointer = nullptr;  // the address expression (the load's first argument, or what its name is bound to)
  std::string cast;               // T of the outer cast, "" when none
};

// Casts `.to(T)` peeled off `e`: returns the node below and the first cast's call.
const Node& peelCast(const Node& e, const Node** cast) {
  const Node* n = &e;
  while (isType(*n, "Call") && isType((*n)["func"], "Attribute") && (*n)["func"].value("attr", "") == "to" &&
         (*n)["args"].size() == 1) {
    if (cast && !*cast) *cast = n;
    n = &(*n)["func"]["value"];
  }
  return *n;
}

bool simpleText(const std::string& t) {
  return !t.empty() && std::all_of(t.begin(), t.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
  });
}
std::string paren(const std::string& t) { return simpleText(t) ? t : "(" + t + ")"; }

// Is `st` indented by spaces alone, first on its line?
bool startsItsLine(const PassContext& ctx, const Node& st) {
  size_t line_start = ctx.lineRange(st).begin;
  std::string lead = ctx.text().text().substr(line_start, ctx.range(st).begin - line_start);
  return lead.find_first_not_of(' ') == std::string::npos;
}

// Where `name` is read (not bound) below `scope`.
std::vector<Range> readsOf(const PassContext& ctx, const Node& scope, const std::string& name) {
  std::vector<Range> out;
  walk(scope, [&](const Node& n) {
    if (isType(n, "Name") && nameOf(n) == name && n.value("ctx", "") != "Store") out.push_back(ctx.range(n));
    return true;
  });
  return out;
}

// An address as REST + V * COEFF ("" for zero).
struct Affine {
  std::string rest, coeff;
};

// What an address reads of the loops' variables: `depends` tells whether an expression reads
// them; `inlined` maps a name bound in the loop for one address alone (read there once) to its
// value, which the address reads in its place.
struct Reads {
  std::function<bool(const Node&)> depends;
  std::map<std::string, const Node*> inlined;
  const Node* through(const Node& e) const {
    auto it = inlined.find(nameOf(e));
    return isType(e, "Name") && it != inlined.end() ? it->second : nullptr;
  }
};

class ImplicitGemmPass : public Pass {
 public:
  ImplicitGemmPass() {
    info_.name = "implicit-gemm";
    info_.summary = "A loop of rank-1 updates acc += a[:, None] * b[None, :] (a direct convolution, a GEMM "
                    "written as outer products) -> a loop over blocks of its variable with one tl.dot per block.";
    info_.preconditions = {
        "acc += a[:, None] * b[None, :] (either order, or acc = acc + ...), acc a 2-D tl.zeros/tl.full of "
        "tl.float32 bound once before the loops, a and b loads bound once in the same loop body (or inline), "
        "each with at most a .to(T) cast, read only by the update",
        "a loop around it, `for V in range(END)` or range(LO, END) (or tl.range, tl.static_range; step 1), without break, "
        "continue, return or else, whose variable is read only in the two loads' addresses (directly or "
        "through a name bound for that address alone), additively: REST + V * COEFF with COEFF a scalar",
        "the loads' masks do not read V; their other= is a number, 0 for at least one of them (0 is added "
        "where there is none)",
        "everything else in that loop binds names no one else binds or reads outside it, without side "
        "effects (no store, atomic, print, inline assembly or user function), or is a loop over a range; no if "
        "or while; the accumulator is read there by the update alone",
        "loops=nest (the default): two or more loops nested around the update, each directly in the one "
        "before, over ranges whose bounds the nest does not bind, collapse into one when their variables (and "
        "names bound from them alone) are read only in the addresses, as REST + OFFSET with OFFSET the same "
        "for every element; else one loop as above",
    };
    info_.params = {
        {"block", PassParamKind::kInt, "32", false, 16, 256, true, {}, "the block of the loop variable per dot (K)",
         {"16", "32", "64"}},
        {"loops", PassParamKind::kChoice, "nest", false, 0, 0, false, {"nest", "one"},
         "nest: collapse the loops nested around the update into one loop over their flattened steps where they "
         "qualify together (a patch embedding's channel, row and column loops: one K = C*P*P); one: block one loop",
         {"nest", "one"}},
    };
  }
  const PassInfo& info() const override { return info_; }

  PassOutcome run(const PassContext& ctx, const PassArgs& args) const override {
    std::vector<std::pair<const Node*, std::vector<const Node*>>> updates;  // update, enclosing loops
    std::function<void(const Node&, std::vector<const Node*>&)> scan = [&](const Node& list,
                                                                            std::vector<const Node*>& loops) {
      for (const auto& st : list) {
        if (isType(st, "For")) {
          loops.push_back(&st);
          scan(st["body"], loops);
          loops.pop_back();
        } else if (!loops.empty() && rankOneProduct(ctx, st)) {
          updates.emplace_back(&st, loops);
        }
      }
    };
    std::vector<const Node*> loops;
    scan(ctx.body(), loops);
    if (updates.empty()) {
      return refuse("no rank-1 update `acc += a[:, None] * b[None, :]` directly in a loop of the kernel");
    }
    std::string first_why;
    for (const auto& [update, chain] : updates) {
      std::string why;
      PassOutcome out;
      try {
        if (plan(ctx, *update, chain, args.integer("block"), args.text("loops") == "nest", &out, &why)) return out;
      } catch (const std::logic_error&) {
        why = "the rewrite's edits overlap";
      }
      if (first_why.empty()) first_why = why;
    }
    return refuse(first_why);
  }

 private:
  PassInfo info_;

  // The product X * Y of `acc += X * Y` / `acc = acc + X * Y`, else nullptr.
  static const Node* productOf(const Node& st, std::string* acc) {
    const Node* value = nullptr;
    *acc = assignedName(st);
    if (acc->empty()) return nullptr;
    if (isType(st, "AugAssign") && isType(st["op"], "Add")) {
      value = &st["value"];
    } else if (isType(st, "Assign") && isType(st["value"], "BinOp") && isType(st["value"]["op"], "Add")) {
      const Node& v = st["value"];
      if (nameOf(v["left"]) == *acc) value = &v["right"];
      else if (nameOf(v["right"]) == *acc) value = &v["left"];
    }
    if (!value || !isType(*value, "BinOp") || !isType((*value)["op"], "Mult")) return nullptr;
    return value;
  }

  // acc += X * Y with X and Y broadcast by the update (u[:, None], v[None, :]), a column times
  // a factor not broadcast (a 1-D row, checked by plan), or neither broadcast (names or loads:
  // their pointers decide); the rest is checked by plan.
  static bool rankOneProduct(const PassContext&, const Node& st) {
    std::string acc;
    const Node* p = productOf(st, &acc);
    if (!p) return false;
    int a = broadcastAxis(peelCast((*p)["left"], nullptr));
    int b = broadcastAxis(peelCast((*p)["right"], nullptr));
    return (a == 0 && b == 1) || (a == 1 && b == 0) || (a < 0 && b < 0) || (a == 0 && b < 0) || (a < 0 && b == 0);
  }

  // The axis a value spans: -2 a scalar, 0 a column (only x[:, None] broadcasts around
  // scalars), 1 a row, -1 anything else (2-D, 1-D, unknown).
  static int axisOf(const PassContext& ctx, const Node& e, int depth = 0) {
    if (int b = broadcastAxis(e); b >= 0) return b;
    std::set<std::string> visiting;
    if (isScalar(ctx, e, visiting)) return -2;
    auto both = [](int a, int b) { return a == -1 || b == -1 ? -1 : a == -2 ? b : b == -2 ? a : a == b ? a : -1; };
    const std::string& t = nodeType(e);
    if (t == "BinOp") return both(axisOf(ctx, e["left"], depth), axisOf(ctx, e["right"], depth));
    if (t == "Compare" && e["comparators"].size() == 1) {
      return both(axisOf(ctx, e["left"], depth), axisOf(ctx, e["comparators"][0], depth));
    }
    if (t == "UnaryOp") return axisOf(ctx, e["operand"], depth);
    if (t == "Name" && depth < 8) {
      // Every binding of the name (a pointer set once, advanced by scalar steps) spans the axis.
      int axis = -2;
      bool bound = false;
      walk(ctx.body(), [&](const Node& n) {
        if ((isType(n, "Assign") || isType(n, "AugAssign")) && assignedName(n) == nameOf(e)) {
          bound = true;
          axis = both(axis, axisOf(ctx, n["value"], depth + 1));
        } else if (isType(n, "For") && nameOf(n["target"]) == nameOf(e)) {
          axis = -1;
        }
        return true;
      });
      return bound ? axis : -1;
    }
    return -1;
  }

  // Is `e` the same value for every element (no tensor)? Parameters, literals, loop variables
  // over ranges, program ids, and arithmetic and casts of those, through names bound only so.
  static bool isScalar(const PassContext& ctx, const Node& e, std::set<std::string>& visiting) {
    const std::string& t = nodeType(e);
    if (t == "Constant") return true;
    if (t == "BinOp") return isScalar(ctx, e["left"], visiting) && isScalar(ctx, e["right"], visiting);
    if (t == "UnaryOp") return isScalar(ctx, e["operand"], visiting);
    if (t == "Call") {
      std::string fn = ctx.tlFunction(e);
      if (fn == "program_id" || fn == "num_programs") return true;
      bool known = fn == "cdiv" || fn == "minimum" || fn == "maximum" || dottedName(e["func"]) == "min" ||
                   dottedName(e["func"]) == "max";
      if (isType(e["func"], "Attribute") && e["func"].value("attr", "") == "to") {
        return isScalar(ctx, e["func"]["value"], visiting);
      }
      if (!known) return false;
      for (const auto& a : e["args"]) {
        if (!isScalar(ctx, a, visiting)) return false;
      }
      return true;
    }
    if (t != "Name") return false;
    std::string name = nameOf(e);
    if (visiting.count(name)) return true;  // a name bound from itself: its other bindings decide
    visiting.insert(name);
    bool param = ctx.kernel->param(name) != nullptr;
    bool bound = false, scalar = true;
    walk(ctx.body(), [&](const Node& n) {
      if (!scalar) return false;
      if (isType(n, "For") && nameOf(n["target"]) == name) {
        bound = true;
        scalar = isRangeCall(ctx, n["iter"]);
      } else if ((isType(n, "Assign") || isType(n, "AugAssign") || isType(n, "AnnAssign")) &&
                 assignedName(n) == name) {
        bound = true;
        scalar = !n["value"].is_null() && isScalar(ctx, n["value"], visiting);
      }
      return true;
    });
    visiting.erase(name);
    return scalar && (bound || param);
  }

  // `e` as REST + PART: PART the terms that read the loops' variables (`reads.depends`), REST the
  // others, through sums, differences, negation and products with a scalar that reads none of
  // them ((REST + PART) * s = REST * s + PART * s). `leaf` gives the part of a term that reads
  // them and is none of those (nullopt: not of the form). nullopt when `e` is not of the form.
  static std::optional<Affine> decompose(const PassContext& ctx, const Node& e, const Reads& reads,
                                         const std::function<std::optional<Affine>(const Node&)>& leaf) {
    if (!reads.depends(e)) return Affine{ctx.slice(e), ""};
    if (const Node* v = reads.through(e)) return decompose(ctx, *v, reads, leaf);
    if (auto l = leaf(e)) return l;
    auto add = [](const std::string& p, const std::string& q) { return p.empty() ? q : q.empty() ? p : p + " + " + q; };
    auto neg = [](const std::string& p) { return p.empty() ? p : "-" + paren(p); };
    auto sub = [&](const std::string& p, const std::string& q) {
      return q.empty() ? p : p.empty() ? neg(q) : p + " - " + paren(q);
    };
    if (isType(e, "UnaryOp") && isType(e["op"], "USub")) {
      auto a = decompose(ctx, e["operand"], reads, leaf);
      if (!a) return std::nullopt;
      return Affine{neg(a->rest), neg(a->coeff)};
    }
    if (!isType(e, "BinOp")) return std::nullopt;
    const std::string& op = nodeType(e["op"]);
    if (op == "Add" || op == "Sub") {
      auto a = decompose(ctx, e["left"], reads, leaf), b = decompose(ctx, e["right"], reads, leaf);
      if (!a || !b) return std::nullopt;
      if (op == "Add") return Affine{add(a->rest, b->rest), add(a->coeff, b->coeff)};
      return Affine{sub(a->rest, b->rest), sub(a->coeff, b->coeff)};
    }
    if (op != "Mult") return std::nullopt;
    bool l = reads.depends(e["left"]), r = reads.depends(e["right"]);
    if (l && r) return std::nullopt;
    const Node& x = l ? e["left"] : e["right"];
    const Node& s = l ? e["right"] : e["left"];
    std::set<std::string> visiting;
    if (!isScalar(ctx, s, visiting)) return std::nullopt;
    auto a = decompose(ctx, x, reads, leaf);
    if (!a) return std::nullopt;
    std::string st = paren(ctx.slice(s));
    auto mul = [&](const std::string& p) { return p.empty() ? p : p == "1" ? st : paren(p) + " * " + st; };
    return Affine{mul(a->rest), mul(a->coeff)};
  }

  // `e` as REST + var * COEFF (COEFF in `coeff`), nullopt when it is not of that form.
  static std::optional<Affine> affine(const PassContext& ctx, const Node& e, const std::string& var,
                                      const Reads& reads) {
    return decompose(ctx, e, reads, [&](const Node& t) -> std::optional<Affine> {
      if (nameOf(t) == var) return Affine{"", "1"};
      return std::nullopt;
    });
  }

  // `e` as REST + OFFSET with OFFSET (in `coeff`) the terms that read the nest's variables, each
  // the same for every element (a scalar expression); nullopt when it is not so.
  static std::optional<Affine> splitOff(const PassContext& ctx, const Node& e, const Reads& reads) {
    return decompose(ctx, e, reads, [&](const Node& t) -> std::optional<Affine> {
      std::set<std::string> visiting;
      if (isScalar(ctx, t, visiting)) return Affine{"", ctx.slice(t)};
      return std::nullopt;
    });
  }

  // Fills the operand's load, binding and casts from its factor; false (and why) otherwise.
  static bool operandOf(const PassContext& ctx, const Node& body, size_t update_at, const Node& factor, Operand* o,
                        std::string* why) {
    o->factor = &factor;
    const Node& sub = peelCast(factor, &o->factor_cast);
    o->axis = broadcastAxis(sub);
    o->wrapped = o->axis >= 0;
    const Node& inner = o->wrapped ? peelCast(sub["value"], &o->factor_cast) : sub;
    if (ctx.isTlCall(inner, "load")) {
      o->load = &inner;
    } else {
      std::string u = nameOf(inner);
      if (u.empty()) {
        *why = fmt::format("the factor '{}' is neither a load nor a name", ctx.slice(factor));
        return false;
      }
      std::map<std::string, int> stores = storeCounts(ctx.body());
      for (size_t i = 0; i < update_at; ++i) {
        if (isType(body[i], "Assign") && assignedName(body[i]) == u) o->stmt = &body[i];
      }
      if (!o->stmt || countOf(stores, u) != 1) {
        *why = fmt::format("'{}' is not bound once, to a load, in the update's loop body", u);
        return false;
      }
      const Node& v = peelCast((*o->stmt)["value"], &o->bind_cast);
      if (!ctx.isTlCall(v, "load")) {
        *why = fmt::format("'{}' is not bound to a tl.load", u);
        return false;
      }
      o->load = &v;
      if (readsOf(ctx, ctx.body(), u).size() != 1) {
        *why = fmt::format("'{}' is read elsewhere than in the update (its shape becomes 2-D)", u);
        return false;
      }
    }
    const Node& load = *o->load;
    if (load["args"].size() != 1) {
      *why = "a load passes its mask or other= positionally, or its pointer by keyword";
      return false;
    }
    const Node* cast = o->factor_cast ? o->factor_cast : o->bind_cast;
    if (cast) o->cast = ctx.slice(cast->at("args")[0]);
    o->pointer = &load["args"][0];
    return true;
  }

  bool plan(const PassContext& ctx, const Node& update, const std::vector<const Node*>& chain, int64_t block,
            bool nests, PassOutcome* out, std::string* why) const {
    auto no = [&](std::string reason) {
      *why = std::move(reason);
      return false;
    };
    std::string acc;
    const Node& product = *productOf(update, &acc);
    const Node& body = (*chain.back())["body"];
    size_t update_at = 0;
    while (update_at < body.size() && &body[update_at] != &update) ++update_at;

    // The accumulator: a 2-D fp32 zeros (or full) bound once before the outermost loop.
    const Node& outer = *chain.front();
    std::map<std::string, int> kernel_stores = storeCounts(ctx.body());
    const Node* init = nullptr;
    for (const auto& st : ctx.body()) {
      if (&st == &outer) break;
      if (isType(st, "Assign") && assignedName(st) == acc) init = &st;
    }
    if (!init) return no(fmt::format("the accumulator '{}' is not bound at the top of the kernel before its loops", acc));
    const Node& iv = (*init)["value"];
    bool zeros = ctx.isTlCall(iv, "zeros"), full = ctx.isTlCall(iv, "full");
    if (!zeros && !full) return no(fmt::format("'{}' does not start as tl.zeros or tl.full", acc));
    const Node* dtype = keywordArg(iv, "dtype");
    size_t dtype_at = zeros ? 1 : 2;
    if (!dtype && iv["args"].size() > dtype_at) dtype = &iv["args"][dtype_at];
    if (!dtype || dottedName(*dtype) != ctx.tl() + ".float32") {
      return no(fmt::format("the accumulator '{}' is not tl.float32", acc));
    }
    const Node& shape = iv["args"].empty() ? iv : iv["args"][0];
    if (!(isType(shape, "Tuple") || isType(shape, "List")) || shape["elts"].size() != 2) {
      return no(fmt::format("the accumulator '{}' is not a 2-D tile", acc));
    }

    // The operands.
    Operand ops[2];
    {
      Operand l, r;
      if (!operandOf(ctx, body, update_at, product["left"], &l, why)) return false;
      if (!operandOf(ctx, body, update_at, product["right"], &r, why)) return false;
      if (l.wrapped != r.wrapped) {
        // `a[:, None] * b` with b 1-D: broadcasting lines b up with the last axis, a row.
        Operand& u = l.wrapped ? r : l;
        auto shape = ctx.facts.load_values.find(u.load);
        if (shape == ctx.facts.load_values.end() || shape->second.size() != 1) {
          return no(fmt::format("'{}' * '{}' is not a rank-1 update: '{}' is not known to be 1-D",
                                ctx.slice(product["left"]), ctx.slice(product["right"]), ctx.slice(*u.factor)));
        }
        u.axis = 1;
        u.wrapped = u.implicit = true;
      }
      if (!l.wrapped) ops[0] = l, ops[1] = r;  // axes from the pointers, below
      else ops[l.axis] = l, ops[r.axis] = r;
    }
    // A pointer given by name: the name's binding in the update's loop body, for that load alone.
    for (Operand& o : ops) {
      std::string p = nameOf(*o.pointer);
      if (p.empty()) continue;
      const Node* bind = nullptr;
      for (size_t i = 0; i < update_at; ++i) {
        if (isType(body[i], "Assign") && assignedName(body[i]) == p) bind = &body[i];
      }
      if (bind && countOf(kernel_stores, p) == 1 && readsOf(ctx, ctx.body(), p).size() == 1) {
        o.pointer = &(*bind)["value"];
      }
    }

    // Loaded 2-D already: a column of pointers (broadcast x[:, None] around scalars) times a row.
    if (!ops[0].wrapped) {
      for (Operand& o : ops) {
        o.axis = axisOf(ctx, *o.pointer);
        if (o.axis < 0) {
          return no(fmt::format("'{}' * '{}' is not a rank-1 update: the address '{}' is not a column "
                                "(x[:, None] and scalars) or a row (x[None, :] and scalars)",
                                ctx.slice(product["left"]), ctx.slice(product["right"]), ctx.slice(*o.pointer)));
        }
        if (const Node* mask = keywordArg(*o.load, "mask"); mask && axisOf(ctx, *mask) != o.axis && axisOf(ctx, *mask) != -2) {
          return no(fmt::format("the mask '{}' does not span the address's axis alone", ctx.slice(*mask)));
        }
      }
      if (ops[0].axis == ops[1].axis) return no("both factors span the same axis: not a rank-1 update");
      if (ops[0].axis == 1) std::swap(ops[0], ops[1]);
    }

    // The loops: the most loops nested around the update (innermost ones, two or more) that
    // qualify together, collapsed into one; else the innermost one whose variable qualifies.
    if (nests) {
      for (size_t n = chain.size(); n >= 2; --n) {
        std::vector<const Node*> nest(chain.end() - static_cast<std::ptrdiff_t>(n), chain.end());
        std::string w;
        if (emit(ctx, nest, update, product, acc, ops, block, out, &w)) return true;
      }
    }
    std::string loop_why;
    for (auto li = chain.rbegin(); li != chain.rend(); ++li) {
      std::string w;
      if (emit(ctx, {*li}, update, product, acc, ops, block, out, &w)) return true;
      if (loop_why.empty()) loop_why = w;
    }
    return no(loop_why);
  }

  // One loop (`nest` of one) blocked by its variable, or a nest of loops (outermost first, each
  // directly in the one before) collapsed into one loop over their flattened steps, blocked.
  bool emit(const PassContext& ctx, const std::vector<const Node*>& nest, const Node& update, const Node& product,
            const std::string& acc, Operand (&ops)[2], int64_t block, PassOutcome* out, std::string* why) const {
    const Node& loop = *nest.front();
    const bool nested = nest.size() > 1;
    std::vector<std::string> vars;
    for (const Node* l : nest) vars.push_back(nameOf((*l)["target"]));
    std::string var = vars.front();
    std::string listed;
    for (const auto& v : vars) listed += (listed.empty() ? "'" : ", '") + (v.empty() ? "?" : v) + "'";
    auto no = [&](std::string reason) {
      *why = fmt::format("{} {}: {}", nested ? "loops over" : "loop over", listed, reason);
      return false;
    };
    const Node& lbody = loop["body"];
    std::map<std::string, int> inner = storeCounts(lbody);
    std::map<std::string, int> all = storeCounts(ctx.body());
    // Each loop: over range(END) / range(LO, END) / tl.range(...), step 1, no else, one-line
    // header, its bounds bound outside the nest and reading none of its variables.
    std::vector<std::string> extents, starts;
    std::vector<bool> literal;  // the extent is a literal count (range(3)): never below 0
    for (size_t k = 0; k < nest.size(); ++k) {
      const Node& l = *nest[k];
      if (vars[k].empty()) return no("a target is not a name");
      const Node& lit = l["iter"];
      bool builtin = isType(lit, "Call") && dottedName(lit["func"]) == "range";
      if (!builtin && !ctx.isTlCall(lit, "range") && !ctx.isTlCall(lit, "static_range")) {
        return no("it is not over range(...), tl.range(...) or tl.static_range(...)");
      }
      const size_t na = lit["args"].size();
      if (na < 1 || na > 3) return no("its range does not give its bounds positionally");
      if (na == 3 && intLiteral(lit["args"][2]) != 1) return no("it does not step by 1");
      if (!l["orelse"].empty()) return no("it has an else clause");
      if (countOf(inner, vars[k]) != (k == 0 ? 0 : 1)) return no("its body rebinds the variable");
      bool rebound = false;
      for (size_t i = 0; i < std::min<size_t>(na, 2); ++i) {
        forEachName(lit["args"][i], [&](const Node& n) {
          rebound = rebound || countOf(inner, nameOf(n)) > 0 ||
                    std::find(vars.begin(), vars.end(), nameOf(n)) != vars.end();
        });
      }
      if (rebound) return no("its body rebinds a name of its bounds");
      if (nodePos(l["body"][0])->line == nodePos(l)->line) return no("its body starts on the line of the `for`");
      const Node& e = lit["args"][na == 1 ? 0 : 1];
      std::string lo = na == 1 ? "" : ctx.slice(lit["args"][0]);
      if (lo == "0") lo.clear();
      starts.push_back(lo);
      literal.push_back(lo.empty() && intLiteral(e) && *intLiteral(e) >= 0);
      extents.push_back(lo.empty() ? ctx.slice(e) : fmt::format("{} - {}", ctx.slice(e), paren(lo)));
    }
    // A nest is perfect: each body holds the next loop and nothing else compound.
    for (size_t k = 0; k < nest.size(); ++k) {
      int loops_in = 0;
      for (const auto& st : (*nest[k])["body"]) loops_in += isType(st, "For") ? 1 : 0;
      if (nested && loops_in != (k + 1 < nest.size() ? 1 : 0)) return no("they are not a perfect nest of loops");
    }
    const Node& it = loop["iter"];
    const size_t nargs = it["args"].size();
    const Node& end = it["args"][nargs == 1 ? 0 : 1];

    // Pointers advanced by a fixed step at every step of the loop (`p += D` in its body, after
    // the statement that loads through p): block by block, lane j reads p + j * D, and p
    // advances by BLOCK * D. (One loop only: in a nest an advance is an impure statement.)
    const Node* advance[2] = {nullptr, nullptr};
    Range lr = ctx.range(loop);
    for (int k = 0; k < 2 && !nested; ++k) {
      const Node& ptr = *ops[k].pointer;
      std::string p = nameOf(ptr);
      if (p.empty() || &ptr != &(*ops[k].load)["args"][0]) continue;
      Range load_r = ctx.range(*ops[k].load);
      int load_at = -1;
      for (size_t i = 0; i < lbody.size(); ++i) {
        Range r = ctx.range(lbody[i]);
        if (r.begin <= load_r.begin && load_r.end <= r.end) load_at = static_cast<int>(i);
        const Node& st = lbody[i];
        if (!isType(st, "AugAssign") || !isType(st["op"], "Add") || assignedName(st) != p) continue;
        std::set<std::string> visiting;
        if (countOf(inner, p) != 1 || load_at < 0 || mentionsName(st["value"], var) ||
            mentionsName(st["value"], p) || !isScalar(ctx, st["value"], visiting)) {
          return no(fmt::format("'{}' is not advanced once, after its load, by a step that does not change", p));
        }
        bool step_rebound = false;
        forEachName(st["value"], [&](const Node& n) { step_rebound = step_rebound || countOf(inner, nameOf(n)) > 0; });
        if (step_rebound) return no(fmt::format("the step of '{}' is rebound in the loop", p));
        advance[k] = &st;
      }
      if (!advance[k]) continue;
      int reads = 0;
      bool after = false;
      for (Range r : readsOf(ctx, ctx.body(), p)) {
        if (r.begin >= lr.end) after = true;
        if (r.begin >= lr.begin && r.end <= lr.end) ++reads;
      }
      if (after || reads != 1) return no(fmt::format("'{}' is read besides its load in the loop, or after it", p));
    }
    auto isAdvance = [&](const Node& st) { return &st == advance[0] || &st == advance[1]; };

    // Its body: loops over ranges, the update, and pure bindings of names local to it.
    std::string impure;
    std::function<void(const Node&)> check = [&](const Node& list) {
      for (const auto& st : list) {
        if (!impure.empty()) return;
        if (&st == &update || isAdvance(st)) continue;
        if (isType(st, "For")) {
          if (!isRangeCall(ctx, st["iter"]) || !st["orelse"].empty()) impure = "a loop not over a range";
          check(st["body"]);
          continue;
        }
        std::string name = assignedName(st);
        if (!isType(st, "Assign") || name.empty()) {
          bool call = isType(st, "Expr") && isType(st["value"], "Call");
          impure = call ? fmt::format("a call '{}'", ctx.slice(st["value"]["func"]))
                        : fmt::format("a statement '{}'", nodeType(st));
          return;
        }
        if (name == acc || countOf(all, name) != countOf(inner, name) || countOf(inner, name) != 1) {
          impure = fmt::format("'{}' (a name bound elsewhere too)", name);
          return;
        }
        walk(st["value"], [&](const Node& n) {
          if (!isType(n, "Call") || !impure.empty()) return impure.empty();
          std::string fn = ctx.tlFunction(n);
          bool method = isType(n["func"], "Attribute") && n["func"].value("attr", "") == "to";
          bool builtin = dottedName(n["func"]) == "min" || dottedName(n["func"]) == "max";
          bool effect = fn == "store" || fn.rfind("atomic_", 0) == 0 || fn == "device_print" || fn == "debug_barrier" ||
                        fn == "device_assert" || fn == "static_print" || fn == "inline_asm_elementwise";
          if ((fn.empty() && !method && !builtin) || effect) impure = fmt::format("a call '{}'", ctx.slice(n["func"]));
          return true;
        });
      }
    };
    check(lbody);
    if (!impure.empty()) return no(fmt::format("its body holds {}, not only loops and pure bindings", impure));
    walk(lbody, [&](const Node& n) {
      const std::string& t = nodeType(n);
      if (t == "Break" || t == "Continue" || t == "Return") impure = t;
      return impure.empty();
    });
    if (!impure.empty()) return no("it has a break, continue or return");
    // The accumulator is read in it by the update alone (its value between two steps of a block
    // is not the loop's).
    Range ur = ctx.range(update);
    bool acc_read = false;
    for (Range r : readsOf(ctx, lbody, acc)) acc_read = acc_read || r.begin < ur.begin || r.end > ur.end;
    if (acc_read) return no(fmt::format("'{}' is read in it besides the update", acc));
    // Names it binds are read only inside it (an advanced pointer: checked above).
    std::string escapes;
    walk(ctx.body(), [&](const Node& n) {
      bool advanced = (advance[0] && nameOf(n) == assignedName(*advance[0])) ||
                      (advance[1] && nameOf(n) == assignedName(*advance[1]));
      if (isType(n, "Name") && n.value("ctx", "") != "Store" && countOf(inner, nameOf(n)) && nameOf(n) != acc &&
          !advanced) {
        Range r = ctx.range(n);
        if (r.begin < lr.begin || r.end > lr.end) escapes = nameOf(n);
      }
      return true;
    });
    if (!escapes.empty()) return no(fmt::format("'{}', bound in it, is read after it", escapes));
    // The variables hold other values once blocked (a block's start, a vector): no read outside
    // the loop may see them (the body of a loop elsewhere over the same name sees its own).
    std::vector<Range> rebinding;
    walk(ctx.body(), [&](const Node& n) {
      if (isType(n, "For") && &n != &loop && std::count(vars.begin(), vars.end(), nameOf(n["target"]))) {
        Range r = ctx.range(n);
        if (r.end <= lr.begin || r.begin >= lr.end) rebinding.push_back({ctx.range(n["body"][0]).begin, r.end});
      }
      return true;
    });
    for (const auto& v : vars) {
      for (Range r : readsOf(ctx, ctx.body(), v)) {
        bool inside = r.begin >= lr.begin && r.end <= lr.end;
        bool own = std::any_of(rebinding.begin(), rebinding.end(), [&](Range f) {
          return f.begin <= r.begin && r.end <= f.end;
        });
        if (!inside && !own) return no(fmt::format("'{}' is read outside the loop", v));
      }
    }

    // What depends on the variables: themselves and, in a nest, names bound in it from them
    // (each the same for every element: it becomes a vector over the block).
    std::set<std::string> vset(vars.begin(), vars.end());
    std::vector<const Node*> derived;
    auto mentionsAny = [&](const Node& e) {
      bool any = false;
      forEachName(e, [&](const Node& n) { any = any || vset.count(nameOf(n)) > 0; });
      return any;
    };
    auto operandBinding = [&](const Node& st) {
      for (const Operand& o : ops) {
        if (&st == o.stmt || (isType(st, "Assign") && &st["value"] == o.pointer)) return true;
      }
      return false;
    };
    // A name bound from them for one address alone (read once, there) is read through: the
    // address takes its value and its binding goes.
    Reads reads{mentionsAny, {}};
    std::vector<const Node*> inlined;
    auto forOneAddress = [&](const Node& st) {
      std::string name = assignedName(st);
      std::vector<Range> r = readsOf(ctx, ctx.body(), name);
      if (countOf(all, name) != 1 || r.size() != 1) return false;
      // Its lines go: nothing else may stand on them but blanks and a comment.
      Range lines = ctx.lineRange(st), self = ctx.range(st);
      std::string after = ctx.text().text().substr(self.end, lines.end - self.end);
      size_t tail = after.find_first_not_of(" \t\r\n");
      if (!startsItsLine(ctx, st) || (tail != std::string::npos && after[tail] != '#')) return false;
      return std::any_of(std::begin(ops), std::end(ops), [&](const Operand& o) {
        Range p = ctx.range(*o.pointer);
        return p.begin <= r[0].begin && r[0].end <= p.end;
      });
    };
    for (bool grew = true; grew;) {
      grew = false;
      walk(lbody, [&](const Node& st) {
        if (!isType(st, "Assign") || operandBinding(st) || vset.count(assignedName(st)) || !mentionsAny(st["value"])) {
          return true;
        }
        std::set<std::string> visiting;
        if (nested && isScalar(ctx, st["value"], visiting)) {
          derived.push_back(&st);
        } else if (forOneAddress(st)) {
          reads.inlined[assignedName(st)] = &st["value"];
          inlined.push_back(&st);
        } else {
          if (nested) impure = assignedName(st);
          return true;
        }
        vset.insert(assignedName(st));
        grew = true;
        return true;
      });
    }
    if (!impure.empty()) {
      return no(fmt::format("'{}' mixes the loops' variables with tensors outside the loads' addresses", impure));
    }
    // The variables: read only in the two addresses (and in a nest, the names bound from them).
    std::vector<Range> allowed;
    for (const Operand& o : ops) allowed.push_back(ctx.range(*o.pointer));
    for (const Node* d : derived) allowed.push_back(ctx.range((*d)["value"]));
    for (const Node* d : inlined) allowed.push_back(ctx.range((*d)["value"]));
    std::string stray;
    walk(lbody, [&](const Node& n) {
      if (isType(n, "Name") && n.value("ctx", "") != "Store" && vset.count(nameOf(n))) {
        Range r = ctx.range(n);
        bool in = std::any_of(allowed.begin(), allowed.end(), [&](Range a) { return a.begin <= r.begin && r.end <= a.end; });
        if (!in) stray = "x";
      }
      return true;
    });
    if (!stray.empty()) {
      return no(nested ? "their variables are read elsewhere than in the two loads' addresses"
                       : "its variable is read elsewhere than in the two loads' addresses");
    }
    // Each address: REST + V * COEFF with COEFF a scalar (one loop), REST + G with G the same
    // for every element (a nest: G becomes the block's vector of offsets).
    std::optional<Affine> aff[2];
    for (int k = 0; k < 2; ++k) {
      if (advance[k]) continue;
      if (!mentionsAny(*ops[k].pointer)) {
        return no("its variable is not in both loads' addresses (nor are they advanced at every step)");
      }
      aff[k] = nested ? splitOff(ctx, *ops[k].pointer, reads) : affine(ctx, *ops[k].pointer, var, reads);
      if (!aff[k] || aff[k]->rest.empty() || aff[k]->coeff.empty()) {
        return no(nested ? fmt::format("the address '{}' is not REST + OFFSET with OFFSET the same for every element",
                                       ctx.slice(*ops[k].pointer))
                         : fmt::format("the address '{}' is not REST + {} * COEFF with COEFF a scalar",
                                       ctx.slice(*ops[k].pointer), var));
      }
    }
    // Masks without the variable, others a number, one of them 0.
    bool some_zero = false;
    for (const Operand& o : ops) {
      const Node* mask = keywordArg(*o.load, "mask");
      if (mask && mentionsAny(*mask)) return no("a load's mask reads its variable");
      const Node* other = keywordArg(*o.load, "other");
      if (!other) {
        some_zero = true;
        continue;
      }
      const Node& ov = isType(*other, "UnaryOp") && isType((*other)["op"], "USub") ? (*other)["operand"] : *other;
      std::string vt = ov.value("vt", "");
      if (!isType(ov, "Constant") || (vt != "int" && vt != "float")) {
        return no(fmt::format("a load's other= '{}' is not a number", ctx.slice(*other)));
      }
      if (ov["value"].get<double>() == 0.0) some_zero = true;
    }
    if (!some_zero) return no("neither load's other= is 0 (the lanes past the end would add)");

    // Emission.
    std::string tl = ctx.tl();
    std::string joined;
    for (const auto& v : vars) joined += (joined.empty() ? "" : "_") + v;
    std::string up;
    for (char c : joined) up += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    std::string bk = ctx.freshName("BLOCK_" + up);
    std::string lv = nested ? ctx.freshName(joined) : var;
    std::string offs = ctx.freshName(joined + "_offs");
    SourceEditor ed(ctx.text().text());
    std::string body_indent(static_cast<size_t>(nodePos(lbody[0])->col), ' ');
    std::string end_text = ctx.slice(end);
    std::string head_lines = fmt::format("{}{} = {} + {}.arange(0, {})\n", body_indent, offs, lv, tl, bk);
    size_t shift = 0;  // columns the nest's innermost statements move left
    if (!nested) {
      const Node& lo_end = it["args"][nargs - (nargs == 3 ? 2 : 1)];
      if (nargs == 1) {
        ed.replace(ctx.range(end), fmt::format("0, {}, {}", ctx.slice(end), bk));
      } else if (nargs == 2) {
        ed.insert(ctx.range(lo_end).end, ", " + bk);
      } else {
        ed.replace(ctx.range(it["args"][2]), bk);
      }
    } else {
      // for c in range(C): for i in range(P): ...  ->  for c_i in range(0, C * P, BLOCK_C_I):
      // with c = c_i_offs // P and i = c_i_offs % P, vectors over the block.
      end_text.clear();
      // The steps the nest runs: the product of its extents, each past the first clamped at 0
      // where it is not a literal (two empty ranges, END < LO, must not multiply to steps).
      for (size_t k = 0; k < extents.size(); ++k) {
        std::string e = k == 0 || literal[k] ? paren(extents[k]) : fmt::format("{}.maximum({}, 0)", tl, extents[k]);
        end_text += (end_text.empty() ? "" : " * ") + e;
      }
      std::string steps = ctx.freshName(joined + "_steps");
      ed.insert(ctx.lineRange(loop).begin, fmt::format("{}{} = {}\n",
                                                       std::string(static_cast<size_t>(nodePos(loop)->col), ' '),
                                                       steps, end_text));
      end_text = steps;
      ed.replace(ctx.range(loop["target"]), lv);
      // The step count is a run-time value (clamped): a static (unrolled) range cannot take it.
      if (ctx.isTlCall(it, "static_range")) ed.replace(ctx.range(it["func"]), "range");
      ed.replace(Range{ctx.range(it["args"][0]).begin, ctx.range(it["args"][nargs - 1]).end},
                 fmt::format("0, {}, {}", end_text, bk));
      for (size_t k = 0; k < nest.size(); ++k) {
        std::string below;
        for (size_t q = k + 1; q < extents.size(); ++q) below += (below.empty() ? "" : " * ") + paren(extents[q]);
        std::string index = below.empty() ? offs : fmt::format("{} // {}", offs, paren(below));
        if (k > 0) index = below.empty() ? fmt::format("{} % {}", offs, paren(extents[k]))
                                         : fmt::format("({}) % {}", index, paren(extents[k]));
        if (!starts[k].empty()) index = fmt::format("{} + {}", paren(starts[k]), index);
        head_lines += fmt::format("{}{} = {}\n", body_indent, vars[k], index);
      }
      for (size_t k = 1; k < nest.size(); ++k) {
        const Node& l = *nest[k];
        const Node& lb = l["body"];
        ed.replace(Range{ctx.lineRange(l).begin, ctx.lineRange(lb[0]).begin}, "");
        for (const auto& st : lb) {
          if (isType(st, "For") || std::count(inlined.begin(), inlined.end(), &st)) continue;
          if (!startsItsLine(ctx, st)) return no("a statement is indented with tabs or shares its line with another");
          size_t line_start = ctx.lineRange(st).begin;
          ed.replace(Range{line_start, ctx.range(st).begin}, body_indent);
        }
      }
      shift = static_cast<size_t>(nodePos((*nest.back())["body"][0])->col) - body_indent.size();
    }
    ed.insert(ctx.lineRange(lbody[0]).begin, head_lines);
    for (const Node* st : inlined) ed.replace(ctx.lineRange(*st), "");
    bool drop_casts = ops[0].cast == ops[1].cast && (ops[0].cast == tl + ".float32");
    const std::string dot_head = tl + ".dot";
    const size_t dot_column = static_cast<size_t>(nodePos(product)->col) - shift;
    std::string dot_args[2];
    for (int k = 0; k < 2; ++k) {
      const Operand& o = ops[k];
      const char* own = !o.wrapped ? "" : k == 0 ? "[:, None]" : "[None, :]";
      const char* cross = k == 0 ? "[None, :]" : "[:, None]";
      std::string address;
      if (advance[k]) {
        std::string step = paren(ctx.slice((*advance[k])["value"]));
        address = fmt::format("{}{} + {}.arange(0, {}){} * {}", ctx.slice(*o.pointer), own, tl, bk, cross, step);
        ed.replace(ctx.range((*advance[k])["value"]), fmt::format("{} * {}", bk, step));
      } else {
        // `offs[None, :] * COEFF`: the form tensor-cores' descriptor loads read as a column index.
        std::string term = nested ? paren(aff[k]->coeff) + cross
                                  : offs + cross + (aff[k]->coeff == "1" ? "" : " * " + paren(aff[k]->coeff));
        address = fmt::format("{}{} + {}", o.wrapped ? paren(aff[k]->rest) : aff[k]->rest, own, term);
      }
      const Node& load = *o.load;
      // The load written anew: the block's address, the mask widened by the range check, other=.
      std::vector<std::string> largs;
      if (o.pointer == &load["args"][0]) {
        largs.push_back(address);
      } else {
        ed.replace(ctx.range(*o.pointer), address);  // a name bound for this address alone
        largs.push_back(ctx.slice(load["args"][0]));
      }
      std::string in_range = fmt::format("({}{} < {})", offs, cross, paren(end_text));
      for (const auto& kw : load["keywords"]) {
        std::string name = kw["arg"].is_string() ? kw["arg"].get<std::string>() : "";
        if (name.empty()) return no("a load passes **keywords");
        std::string value = name == "mask" ? fmt::format("{}{} & {}", paren(ctx.slice(kw["value"])), own, in_range)
                                           : ctx.slice(kw["value"]);
        largs.push_back(name + "=" + value);
      }
      if (!keywordArg(load, "mask")) largs.push_back("mask=" + in_range);
      if (!keywordArg(load, "other")) largs.push_back("other=0.0");
      std::string head = ctx.slice(load["func"]);
      if (o.stmt) {
        // `u = tl.load(...)[.to(T)]`: the load rewritten in place, its cast dropped when both go.
        const Node& value = (*o.stmt)["value"];
        std::string text = wrapCall(head, largs, static_cast<size_t>(nodePos(load)->col) - shift);
        if (o.bind_cast && !drop_casts) {
          ed.replace(ctx.range(load), text);
        } else {
          ed.replace(ctx.range(value), text);
        }
        const Node& sub = peelCast(*o.factor, nullptr);
        dot_args[k] = nameOf(o.wrapped && !o.implicit ? peelCast(sub["value"], nullptr) : sub);
        if (!drop_casts && o.factor_cast) dot_args[k] += fmt::format(".to({})", o.cast);
      } else {
        dot_args[k] = wrapCall(head, largs, dot_column + dot_head.size() + 1);
        if (!drop_casts && !o.cast.empty()) dot_args[k] += fmt::format(".to({})", o.cast);
      }
    }
    ed.replace(ctx.range(product),
               wrapCall(dot_head, {dot_args[0], dot_args[1], "input_precision=\"ieee\""}, dot_column));
    addKernelParam(ctx, ed, bk, ctx.constexprAnnotation(), std::to_string(block));
    out->applied = true;
    out->source = ed.apply();
    if (nested) {
      out->notes.push_back(fmt::format("the loops over {} run as one loop over their steps ({}), in blocks of {} ({} = {}): "
                                       "{} gathers one tl.dot per block",
                                       listed, end_text, bk, bk, block, acc));
    } else {
      out->notes.push_back(fmt::format("{} runs in blocks of {} ({} = {}): {} gathers one tl.dot per block", var, bk,
                                       bk, block, acc));
    }
    if (drop_casts) out->notes.push_back("the operands' .to(tl.float32) dropped: the dot takes them as loaded");
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> makeImplicitGemmPass() { return std::make_unique<ImplicitGemmPass>(); }

}  // namespace tf

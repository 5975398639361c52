// flatten-loops: a nest of counted loops around a tl.dot (an implicit-GEMM convolution's
// loops over filter rows, filter columns and channel blocks) becomes one loop over the
// product of their trip counts, so the software pipeliner (num_stages) overlaps the loads of
// every step with the dots of the steps before, across the rows and columns of the filter
// too, instead of draining and refilling at every filter tap.
//
//   for r in range(R):                          r_count = tl.maximum(R, 0)    (clamped when
//       h = p * stride_h - pad_h + r            ...                            two or more
//       for s in range(S):                      for flat in range(r_count * s_count * c0_count):
//           x_base = ...                  ->        r = flat // (s_count * c0_count)
//           for c0 in range(0, C, BK):              h = p * stride_h - pad_h + r
//               acc += tl.dot(a, b)                 s = flat // c0_count % s_count
//                                                   x_base = ...
//                                                   c0 = flat % c0_count * BK
//                                                   acc += tl.dot(a, b)
//
// Why it is exact: the flat index runs over the same (r, s, c0) tuples in the same order
// (outer loops most significant). The statements between the loops are evaluated again for
// every inner step instead of once per outer step, which is the same only because they are
// pure and fresh: each binds names nothing else binds, reads only the loop variables, names
// bound before it between the loops, and names the nest never binds, calls nothing with a
// side effect, and nothing outside the nest reads what they bind. Inner trip counts must not
// depend on outer variables. When two or more counts may be negative (range(n) with n < 0 runs
// no step), each is clamped at 0 so that their product cannot turn positive.
//
// mode=compiler leaves the nest as written and asks Triton to flatten it
// (tl.range(..., flatten=True) on the outer loop, Triton 3.3 and later); the measurement
// decides between the two.
//
// Entry point: makeFlattenLoopsPass(). Recognition in FlattenLoopsPass::nest (the chain of
// loops around the first dot that is at least two loops deep) and ::pureBetween (the
// statements between them).
#include <fmt/format.h>

#include <cctype>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "transform/pass_context.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {

// A pointer set between the loops and advanced by a fixed step at every step of the innermost
// loop (Triton's tutorial form: `p = base + ...` then `p += BLOCK_K * stride` after the load).
// Flattened, it is set at every step to its value there: the start plus the steps of the
// innermost loop taken since it was set, times the step (in 64 bits: that product can pass
// 2^31 where the original sum of 64-bit pointers did not).
struct Advance {
  const Node* init = nullptr;     // `p = X` between the loops
  const Node* advance = nullptr;  // `p += D` at the top of the innermost body
  size_t level = 0;               // the loop whose body holds init
};

// One loop of the nest: `for VAR in range(LO, HI, STEP)` (or tl.range / tl.static_range).
struct Level {
  const Node* loop = nullptr;
  const Node* call = nullptr;  // the range call
  std::string var;
  std::string lo = "0", hi, step = "1";  // source texts
  const Node* hi_node = nullptr;
  const Node* lo_node = nullptr;
  const Node* step_node = nullptr;
  bool keywords = false;  // tl.range(..., num_stages=...) options
  std::string fn;         // "range", "tl.range", "static_range"
};

// Functions whose calls have an effect beyond the value they return.
bool sideEffecting(const std::string& tl_fn) {
  return tl_fn == "store" || tl_fn.rfind("atomic_", 0) == 0 || tl_fn == "device_print" || tl_fn == "device_assert" ||
         tl_fn == "debug_barrier" || tl_fn == "inline_asm_elementwise" || tl_fn == "print";
}

// Methods on tensors that compute a value and nothing else.
bool pureMethod(const std::string& attr) {
  static const std::set<std::string> kPure = {"to", "reshape", "trans", "broadcast_to", "expand_dims", "permute",
                                              "view", "split", "cast", "__getitem__"};
  return kPure.count(attr) > 0;
}

std::set<std::string> namesRead(const Node& n) {
  std::set<std::string> out;
  walk(n, [&](const Node& x) {
    if (isType(x, "Name") && x.value("ctx", "Load") != "Store") out.insert(x["id"].get<std::string>());
    return true;
  });
  return out;
}

// The names a simple assignment binds, or nullopt when it binds something else (an
// attribute, a subscript) or is not an assignment.
std::optional<std::vector<std::string>> boundNames(const Node& stmt) {
  std::vector<std::string> out;
  auto add = [&](const Node& t) {
    if (isType(t, "Name")) {
      out.push_back(t["id"]);
      return true;
    }
    if (isType(t, "Tuple") || isType(t, "List")) {
      for (const auto& e : t["elts"]) {
        if (!isType(e, "Name")) return false;
        out.push_back(e["id"]);
      }
      return true;
    }
    return false;
  };
  if (isType(stmt, "Assign")) {
    for (const auto& t : stmt["targets"]) {
      if (!add(t)) return std::nullopt;
    }
    return out;
  }
  if (isType(stmt, "AnnAssign") && !stmt["value"].is_null()) {
    if (!add(stmt["target"])) return std::nullopt;
    return out;
  }
  return std::nullopt;
}

std::string joinProduct(const std::vector<std::string>& names, size_t from) {
  std::string out;
  for (size_t i = from; i < names.size(); ++i) out += (out.empty() ? "" : " * ") + names[i];
  return out;
}

bool isAtom(const std::string& s) {
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  }
  return !s.empty();
}

std::string paren(const std::string& s) { return isAtom(s) ? s : "(" + s + ")"; }

// `line` with the indentation `from` (or as much of it as the line has) replaced by `to`.
std::string reindent(std::string_view line, const std::string& from, const std::string& to) {
  size_t ws = 0;
  while (ws < line.size() && (line[ws] == ' ' || line[ws] == '\t')) ++ws;
  if (ws == line.size()) return "";  // blank
  size_t cut = std::min(ws, from.size());
  return to + std::string(line.substr(cut));
}

class FlattenLoopsPass : public Pass {
 public:
  FlattenLoopsPass() {
    info_.name = "flatten-loops";
    info_.summary = "A nest of counted loops around a tl.dot (an implicit-GEMM convolution's filter rows, columns "
                    "and channel blocks) as one loop, so that pipelining spans the whole nest.";
    info_.preconditions = {
        "a tl.dot inside two or more nested `for VAR in range(...)` loops (range, tl.range, tl.static_range); the "
        "innermost loop's tl.range options are kept, outer loops have none and no else clause",
        "each outer loop's body is assignments to names followed by the next loop, nothing after it; the "
        "assignments call nothing with a side effect (no store, atomic, print) and no user function",
        "each name they bind is bound nowhere else in the kernel and read nowhere outside the nest (except a pointer "
        "advanced by a fixed step, p += D, at the top of the innermost body and not read after it there: it is "
        "set to its value at each step); they read the loop variables, names bound before them between the loops, "
        "and names the nest never binds",
        "inner loops' bounds do not change inside the nest; steps are positive literals or constexpr parameters "
        "(a tl.static_assert keeps the latter positive); loop variables are bound only by their loops and read "
        "only inside the nest; no break, continue or return inside",
        "mode=compiler: the outer loop becomes tl.range(..., flatten=True) and Triton flattens the nest itself",
    };
    info_.params = {
        {"mode", PassParamKind::kChoice, "source", false, 0, 0, false, {"source", "compiler"},
         "source: one loop written out in the kernel; compiler: tl.range(..., flatten=True) on the outer loop",
         {"source", "compiler"}},
    };
  }
  const PassInfo& info() const override { return info_; }

  PassOutcome run(const PassContext& ctx, const PassArgs& args) const override {
    std::string why;
    std::vector<Level> levels = nest(ctx, &why);
    if (levels.empty()) return refuse(why);
    if (hasMultilineString(ctx, *levels[0].loop)) {
      return refuse("the loop nest holds a string over several lines: re-indenting it would change it");
    }
    if (args.text("mode") == "compiler") return compilerFlatten(ctx, levels);
    std::vector<Advance> advances;
    if (!pureBetween(ctx, levels, &advances, &why)) return refuse(why);
    return sourceFlatten(ctx, levels, advances);
  }

 private:
  PassInfo info_;

  std::optional<Level> levelOf(const PassContext& ctx, const Node& loop, std::string* why) const {
    Level l;
    l.loop = &loop;
    if (!isType(loop["target"], "Name")) {
      *why = "a loop of the nest binds something else than one name";
      return std::nullopt;
    }
    l.var = loop["target"]["id"];
    if (loop.contains("orelse") && !loop["orelse"].empty()) {
      *why = fmt::format("the loop over '{}' has an else clause", l.var);
      return std::nullopt;
    }
    const Node& it = loop["iter"];
    if (!isType(it, "Call")) {
      *why = fmt::format("the loop over '{}' does not iterate over a range", l.var);
      return std::nullopt;
    }
    std::string tl_fn = ctx.tlFunction(it);
    if (dottedName(it["func"]) == "range") {
      l.fn = "range";
    } else if (tl_fn == "range" || tl_fn == "static_range") {
      l.fn = tl_fn;
    } else {
      *why = fmt::format("the loop over '{}' does not iterate over range, tl.range or tl.static_range", l.var);
      return std::nullopt;
    }
    l.call = &it;
    const Node& a = it["args"];
    if (a.empty() || a.size() > 3) {
      *why = fmt::format("the range of the loop over '{}' has {} arguments", l.var, a.size());
      return std::nullopt;
    }
    for (const auto& x : a) {
      if (isType(x, "Starred")) {
        *why = fmt::format("the range of the loop over '{}' unpacks its arguments", l.var);
        return std::nullopt;
      }
    }
    l.keywords = !it["keywords"].empty();
    l.hi_node = a.size() == 1 ? &a[0] : &a[1];
    l.hi = ctx.slice(*l.hi_node);
    if (a.size() >= 2) {
      l.lo_node = &a[0];
      l.lo = ctx.slice(a[0]);
    }
    if (a.size() == 3) {
      l.step_node = &a[2];
      l.step = ctx.slice(a[2]);
      auto v = intLiteral(a[2]);
      bool constexpr_name = isType(a[2], "Name") && ctx.kernel->param(a[2]["id"].get<std::string>()) &&
                            ctx.kernel->param(a[2]["id"].get<std::string>())->is_constexpr;
      if (!(v && *v > 0) && !constexpr_name) {
        *why = fmt::format("the step of the loop over '{}' ({}) is neither a positive literal nor a constexpr "
                           "parameter: its trip count cannot be written",
                           l.var, l.step);
        return std::nullopt;
      }
    }
    return l;
  }

  // The loops around the first dot that sits two loops deep or more, outermost first, as far
  // out as they chain (each the last statement of the one around it). Empty and `why` when
  // there is none.
  std::vector<Level> nest(const PassContext& ctx, std::string* why) const {
    // The loops enclosing each dot.
    std::vector<const Node*> stack;
    std::vector<std::vector<const Node*>> chains;
    std::function<void(const Node&)> visit = [&](const Node& n) {
      if (n.is_array()) {
        for (const auto& x : n) visit(x);
        return;
      }
      if (!n.is_object()) return;
      if (isType(n, "FunctionDef") && &n != ctx.kernel->def) return;
      if (isType(n, "Lambda")) return;
      bool loop = isType(n, "For") || isType(n, "While");
      if (loop) stack.push_back(&n);
      if (ctx.isTlCall(n, "dot") && stack.size() >= 2) chains.push_back(stack);
      for (const auto& [k, v] : n.items()) {
        if (k != "_p") visit(v);
      }
      if (loop) stack.pop_back();
    };
    visit(ctx.body());
    if (chains.empty()) {
      *why = "no tl.dot inside two or more nested loops";
      return {};
    }
    std::string first_why;
    for (const auto& chain : chains) {
      std::vector<Level> out;
      std::string w;
      // From the innermost outwards while the loops chain.
      for (size_t i = chain.size(); i-- > 0;) {
        const Node& loop = *chain[i];
        if (!isType(loop, "For")) {
          w = "a while loop around the dot";
          break;
        }
        auto l = levelOf(ctx, loop, &w);
        if (!l) break;
        if (!out.empty()) {
          const Node& body = loop["body"];
          if (&body[body.size() - 1] != out.front().loop) {
            w = fmt::format("the loop over '{}' does more after the loop over '{}'", l->var, out.front().var);
            break;
          }
          if (l->keywords) {
            w = fmt::format("the outer loop over '{}' has tl.range options", l->var);
            break;
          }
        }
        out.insert(out.begin(), *l);
      }
      if (out.size() >= 2) return out;
      if (first_why.empty()) first_why = w.empty() ? "the loops around the dot do not nest as a chain" : w;
    }
    *why = first_why;
    return {};
  }

  // The statements of each outer loop before the next loop.
  static std::vector<const Node*> between(const Level& l) {
    std::vector<const Node*> out;
    const Node& body = (*l.loop)["body"];
    for (size_t i = 0; i + 1 < body.size(); ++i) out.push_back(&body[i]);
    return out;
  }

  // `stmt` is alone on its lines in `body` (no `;` neighbour), so whole lines can replace it.
  static bool aloneOnLines(const Node& body, const Node& stmt) {
    auto p = nodePos(stmt);
    if (!p) return false;
    for (const auto& o : body) {
      if (&o == &stmt) continue;
      auto q = nodePos(o);
      if (!q || (q->line <= p->end_line && q->end_line >= p->line)) return false;
    }
    return true;
  }

  // Is the pure expression `e` free of calls with effects (a description of the first one, else "")?
  static std::string effectIn(const PassContext& ctx, const Node& e) {
    std::string bad;
    walk(e, [&](const Node& x) {
      if (!bad.empty()) return false;
      if (isType(x, "Lambda") || isType(x, "NamedExpr")) bad = "a lambda or := expression";
      if (!isType(x, "Call")) return true;
      std::string fn = ctx.tlFunction(x);
      if (!fn.empty()) {
        if (sideEffecting(fn)) bad = "tl." + fn;
        return true;
      }
      if (isType(x["func"], "Attribute") && pureMethod(x["func"]["attr"])) return true;
      bad = "a call to " + ctx.slice(x["func"]);
      return true;
    });
    return bad;
  }

  // `p = X` between the loops (level `level`) whose only other binding is `p += D` at the top of
  // the innermost body, D fixed in the nest, p not read after it in that body: an Advance.
  static std::optional<Advance> advanceOf(const PassContext& ctx, const std::vector<Level>& levels, size_t level,
                                          const Node& init, const std::string& name,
                                          const std::map<std::string, int>& in_nest) {
    if (!isType(init, "Assign") || init["targets"].size() != 1 || !isType(init["targets"][0], "Name")) {
      return std::nullopt;
    }
    if (!aloneOnLines((*levels[level].loop)["body"], init)) return std::nullopt;
    const Node& inner = (*levels.back().loop)["body"];
    for (size_t i = 0; i < inner.size(); ++i) {
      const Node& st = inner[i];
      if (!isType(st, "AugAssign") || !isType(st["target"], "Name") || st["target"]["id"] != name) continue;
      if (!isType(st["op"], "Add") || !effectIn(ctx, st["value"]).empty() || !aloneOnLines(inner, st)) {
        return std::nullopt;
      }
      for (const auto& n : namesRead(st["value"])) {
        if (in_nest.count(n)) return std::nullopt;
      }
      for (size_t j = i + 1; j < inner.size(); ++j) {
        if (mentionsName(inner[j], name)) return std::nullopt;
      }
      return Advance{&init, &st, level};
    }
    return std::nullopt;
  }

  bool pureBetween(const PassContext& ctx, const std::vector<Level>& levels, std::vector<Advance>* advances,
                   std::string* why) const {
    const Node& outer = *levels[0].loop;
    std::map<std::string, int> in_nest = storeCounts(outer);
    std::map<std::string, int> in_body = storeCounts(ctx.body());
    auto count = [](const std::map<std::string, int>& m, const std::string& k) {
      auto it = m.find(k);
      return it == m.end() ? 0 : it->second;
    };
    // Names read outside the nest.
    std::set<std::string> read_outside;
    walk(ctx.body(), [&](const Node& x) {
      if (&x == &outer) return false;
      if (isType(x, "Name")) read_outside.insert(x["id"].get<std::string>());
      return true;
    });
    for (const auto& l : levels) {
      if (count(in_body, l.var) != 1) {
        *why = fmt::format("the loop variable '{}' is also bound elsewhere in the kernel", l.var);
        return false;
      }
      if (read_outside.count(l.var)) {
        *why = fmt::format("the loop variable '{}' is read after the nest", l.var);
        return false;
      }
    }
    // Inner bounds are fixed for the whole nest.
    for (size_t i = 1; i < levels.size(); ++i) {
      for (const Node* b : {levels[i].lo_node, levels[i].hi_node, levels[i].step_node}) {
        if (!b) continue;
        for (const auto& n : namesRead(*b)) {
          if (count(in_nest, n)) {
            *why = fmt::format("the bounds of the loop over '{}' change inside the nest ('{}')", levels[i].var, n);
            return false;
          }
        }
        bool call = false;
        walk(*b, [&](const Node& x) {
          if (isType(x, "Call") && ctx.tlFunction(x) != "cdiv") call = true;
          return !call;
        });
        if (call) {
          *why = fmt::format("the bounds of the loop over '{}' call a function", levels[i].var);
          return false;
        }
      }
    }
    bool jump = false;
    walk(outer, [&](const Node& x) {
      if (isType(x, "Break") || isType(x, "Continue") || isType(x, "Return")) jump = true;
      return !jump && !isType(x, "FunctionDef") && !isType(x, "Lambda");
    });
    if (jump) {
      *why = "a break, continue or return inside the nest";
      return false;
    }
    std::set<std::string> bound;  // loop variables and names bound so far between the loops
    for (size_t i = 0; i + 1 < levels.size(); ++i) {
      bound.insert(levels[i].var);
      for (const Node* s : between(levels[i])) {
        int line = nodePos(*s) ? nodePos(*s)->line : 0;
        if (isType(*s, "Pass")) continue;
        if (isType(*s, "Expr") && isType((*s)["value"], "Constant")) continue;
        if (isType(*s, "Expr") && ctx.isTlCall((*s)["value"], "static_assert")) continue;
        auto names = boundNames(*s);
        if (!names) {
          *why = fmt::format("line {}: between the loops, a statement other than an assignment to names", line);
          return false;
        }
        std::string bad = effectIn(ctx, (*s)["value"]);
        if (!bad.empty()) {
          *why = fmt::format("line {}: between the loops, {} (it would run at every inner step)", line, bad);
          return false;
        }
        for (const auto& n : namesRead((*s)["value"])) {
          if (bound.count(n) || !count(in_nest, n)) continue;
          *why = fmt::format("line {}: between the loops, '{}' is read while the nest changes it", line, n);
          return false;
        }
        for (const auto& n : *names) {
          if (count(in_body, n) == 2 && count(in_nest, n) == 2) {
            if (auto adv = advanceOf(ctx, levels, i, *s, n, in_nest)) {
              if (read_outside.count(n)) {
                *why = fmt::format("line {}: '{}' is bound between the loops and read after the nest", line, n);
                return false;
              }
              advances->push_back(*adv);
              bound.insert(n);
              continue;
            }
          }
          if (count(in_body, n) != 1) {
            *why = fmt::format("line {}: '{}' is bound between the loops and elsewhere too (state carried across "
                               "steps)",
                               line, n);
            return false;
          }
          if (read_outside.count(n)) {
            *why = fmt::format("line {}: '{}' is bound between the loops and read after the nest", line, n);
            return false;
          }
          bound.insert(n);
        }
      }
    }
    return true;
  }

  // The last line of a loop's header (where its range call ends).
  static int headerEnd(const Level& l) { return nodePos(*l.call)->end_line; }

  PassOutcome compilerFlatten(const PassContext& ctx, const std::vector<Level>& levels) const {
    const Level& l0 = levels[0];
    if (l0.fn == "static_range") return refuse("the outer loop is a tl.static_range: Triton flattens tl.range loops");
    if (l0.keywords) return refuse("the outer loop already has tl.range options");
    SourceEditor ed(ctx.text().text());
    std::string args;
    for (const auto& a : (*l0.call)["args"]) args += (args.empty() ? "" : ", ") + ctx.slice(a);
    ed.replace(ctx.range(*l0.call), fmt::format("{}.range({}, flatten=True)", ctx.tl(), args));
    PassOutcome out;
    out.applied = true;
    out.source = ed.apply();
    out.notes.push_back(fmt::format("the nest of {} loops from the loop over '{}' is flattened by Triton "
                                    "(tl.range(..., flatten=True))",
                                    levels.size(), l0.var));
    return out;
  }

  PassOutcome sourceFlatten(const PassContext& ctx, const std::vector<Level>& levels,
                            const std::vector<Advance>& advances) const {
    const SourceText& text = ctx.text();
    const Node& outer = *levels[0].loop;
    auto p0 = nodePos(outer);
    for (const auto& l : levels) {
      if (nodePos((*l.loop)["body"][0])->line <= headerEnd(l)) {
        return refuse(fmt::format("the body of the loop over '{}' starts on its header line", l.var));
      }
    }
    const std::string base = text.indentOf(p0->line);
    const std::string inner_indent = base + ctx.indentUnit();
    const std::string tl = ctx.tl();

    // Trip counts: literals when the bounds are, else expressions (clamped at 0 when two or
    // more could be negative).
    std::vector<std::string> counts(levels.size());
    std::vector<bool> literal(levels.size(), false);
    int unknown = 0;
    for (size_t i = 0; i < levels.size(); ++i) {
      const Level& l = levels[i];
      auto lo = l.lo_node ? intLiteral(*l.lo_node) : std::optional<int64_t>(0);
      auto hi = intLiteral(*l.hi_node);
      auto st = l.step_node ? intLiteral(*l.step_node) : std::optional<int64_t>(1);
      if (lo && hi && st) {
        int64_t n = *hi > *lo ? (*hi - *lo + *st - 1) / *st : 0;
        counts[i] = std::to_string(n);
        literal[i] = true;
        continue;
      }
      ++unknown;
      std::string span = (lo && *lo == 0) ? l.hi : fmt::format("{} - {}", l.hi, paren(l.lo));
      counts[i] = (st && *st == 1) ? span : fmt::format("{}.cdiv({}, {})", tl, span, l.step);
    }
    std::vector<std::string> lines;
    std::vector<std::string> names(levels.size());
    std::string flat = ctx.freshName("flat");
    for (size_t i = 0; i < levels.size(); ++i) {
      if (literal[i]) {
        names[i] = counts[i];
        continue;
      }
      names[i] = ctx.freshName(levels[i].var + "_count");
      std::string value = unknown >= 2 ? fmt::format("{}.maximum({}, 0)", tl, counts[i]) : counts[i];
      lines.push_back(fmt::format("{}{} = {}", base, names[i], value));
    }
    for (const auto& l : levels) {
      if (l.step_node && !intLiteral(*l.step_node)) {
        lines.push_back(fmt::format("{}{}.static_assert({} > 0)", base, tl, l.step));
      }
    }
    std::string total = joinProduct(names, 0);
    const Level& inner = levels.back();
    std::string header;
    if (inner.fn == "range" && !inner.keywords) {
      header = fmt::format("for {} in range({}):", flat, total);
    } else {
      std::string kw;
      for (const auto& k : (*inner.call)["keywords"]) kw += ", " + ctx.slice(k);
      header = fmt::format("for {} in {}.range(0, {}{}):", flat, tl, total, kw);
    }
    std::string vars;
    for (const auto& l : levels) vars += (vars.empty() ? "" : ", ") + l.var;
    lines.push_back(fmt::format("{}# flatten-loops: the loops over {} as one loop (pipelined across the nest)", base,
                                vars));
    lines.push_back(base + header);
    // Advanced pointers: each set to its value at this step, its advance gone.
    std::map<int, std::string> replaced;  // first line -> new text (the other lines of the statement go)
    std::set<int> dropped;
    for (const auto& a : advances) {
      auto ip = nodePos(*a.init);
      const Node& init_value = (*a.init)["value"];
      std::string name = (*a.init)["targets"][0]["id"];
      std::string below = joinProduct(names, a.level + 1);
      std::string x = ctx.slice(init_value);
      std::string steps = fmt::format("({} % {}).to({}.int64) * {}", flat, paren(below), tl,
                                      paren(ctx.slice((*a.advance)["value"])));
      // `X + steps` reads as (X) + steps when X binds at least as tightly as +.
      static const std::set<std::string> kTight = {"Add", "Sub", "Mult", "Div", "FloorDiv", "Mod", "MatMult", "Pow"};
      bool tight = isType(init_value, "Name") || isType(init_value, "Attribute") || isType(init_value, "Call") ||
                   isType(init_value, "Subscript") || isType(init_value, "Constant") ||
                   (isType(init_value, "BinOp") && kTight.count(nodeType(init_value["op"])));
      if (!tight) x = "(" + x + ")";
      std::string one = fmt::format("{}{} = {} + {}", inner_indent, name, x, steps);
      // Past 100 columns: the steps on a line of their own, inside the parentheses.
      if (one.size() > 100 && x.find('\n') == std::string::npos) {
        one = fmt::format("{}{} = ({}\n{}{}+ {})", inner_indent, name, x, inner_indent,
                          std::string(name.size() + 4, ' '), steps);
      }
      replaced[ip->line] = one;
      for (int l = ip->line + 1; l <= ip->end_line; ++l) dropped.insert(l);
      auto ap = nodePos(*a.advance);
      for (int l = ap->line; l <= ap->end_line; ++l) dropped.insert(l);
    }
    auto region = [&](int first, int last, const std::string& from) {
      for (int ln = first; ln <= last; ++ln) {
        if (dropped.count(ln)) continue;
        if (auto it = replaced.find(ln); it != replaced.end()) {
          lines.push_back(it->second);
          continue;
        }
        std::string t = reindent(text.line(ln), from, inner_indent);
        lines.push_back(t);
      }
    };
    for (size_t i = 0; i < levels.size(); ++i) {
      const Level& l = levels[i];
      std::string idx;
      std::string below = joinProduct(names, i + 1);
      if (i == 0) {
        idx = fmt::format("{} // {}", flat, paren(below));
      } else if (i + 1 == levels.size()) {
        idx = fmt::format("{} % {}", flat, names[i]);
      } else {
        idx = fmt::format("{} // {} % {}", flat, paren(below), names[i]);
      }
      std::string value = idx;
      if (l.step != "1") value = fmt::format("{} * {}", paren(idx), paren(l.step));
      if (l.lo != "0") value = fmt::format("{} + {}", paren(l.lo), value);
      lines.push_back(fmt::format("{}{} = {}", inner_indent, l.var, value));
      const Node& body = (*l.loop)["body"];
      std::string from = text.indentOf(nodePos(body[0])->line);
      int first = headerEnd(l) + 1;
      int last = i + 1 < levels.size() ? nodePos(*levels[i + 1].loop)->line - 1 : nodePos(*l.loop)->end_line;
      region(first, last, from);
    }
    std::string replacement;
    for (const auto& l : lines) replacement += l + "\n";
    SourceEditor ed(text.text());
    ed.replace(ctx.lineRange(p0->line, p0->end_line), replacement);
    PassOutcome out;
    out.applied = true;
    out.source = ed.apply();
    out.notes.push_back(fmt::format("the loops over {} are one loop of {} steps; the statements between them run "
                                    "at every step",
                                    vars, total));
    return out;
  }
};

}  // namespace

std::unique_ptr<Pass> makeFlattenLoopsPass() { return std::make_unique<FlattenLoopsPass>(); }

}  // namespace tf

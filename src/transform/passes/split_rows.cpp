// split-rows: a row kernel (one program per row) whose loops walk the row's columns is run
// by SPLIT programs per row, each on a chunk of the columns, in stages: a few long rows
// then fill the GPU (4 rows of 4M values keep 4 of 132 SMs busy as written).
//
// The loops that carry a running value from one step to the next (a sum, a maximum or
// minimum, a sum of exponentials rescaled as the maximum grows) are reductions: stage k runs
// reduction loop k over this program's chunk and stores its partial values to a scratch in
// fp64 (exact for the fp32, fp16, bf16 and int32 values it holds); every later stage loads
// the row's SPLIT partials and combines them (sums added, maxima taken, the rescaled sums
// brought to the combined maximum with the loop's own rescaling factor) where the loop was.
// The last stage also walks its chunk of every loop that carries nothing (the loops that
// write) and runs the statements after the loops; with no such loop it runs once per row.
//
//   row = tl.program_id(0)                        row = tl.program_id(0)
//   m = -inf; s = 0                               part = tl.program_id(1); ...
//   for c in range(0, n, B):              ->      m = -inf; s = 0
//       x = load(c)                               if STAGE == 0:
//       m_new = max(m, max(x))                        for c in range(lo, min(lo + chunk, n), B): <as written>
//       s = s * exp(m - m_new) + sum(exp(x - m_new))  store(parts + ..., m); store(parts + ..., s)
//       m = m_new                                 else:
//   for c in range(0, n, B):                          m = max(m_parts); s = sum(s_parts * exp(m_parts - m))
//       store(c, exp(load(c) - m) / s)                for c in range(lo, min(lo + chunk, n), B): <as written>
//
// The kernel gets the scratch pointer and two constexprs (SPLIT, STAGE); the launcher
// allocates the scratch and launches once per stage on the grid with a SPLIT axis added.
// Chunks are whole multiples of the loop's step, so each program's steps are exactly steps of
// the loop as written and the chunks cover the loop once.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "transform/pass_context.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {

enum class Kind { kSum, kMax, kMin, kRescaled };

// The tl reduction that combines partial values of a kind (a rescaled sum is summed too).
const char* reduction(Kind k) { return k == Kind::kMax ? "max" : k == Kind::kMin ? "min" : "sum"; }

std::string opType(const Node& n) { return n.contains("op") && n.at("op").is_object() ? nodeType(n.at("op")) : ""; }

std::string squeeze(std::string s) {
  s.erase(std::remove_if(s.begin(), s.end(), [](char c) { return c == ' ' || c == '\n' || c == '\\'; }), s.end());
  return s;
}

// The types a running value may have (the scratch holds them exactly in fp64).
const std::set<std::string> kScalarTypes = {"float32", "float16", "bfloat16", "float64", "int32", "int16", "int8"};

bool isNumber(const Node& n) {
  return isType(n, "Constant") && (n.value("vt", "") == "int" || n.value("vt", "") == "float");
}
bool isZero(const Node& n) { return isNumber(n) && n["value"].get<double>() == 0.0; }

// float("-inf") or -float("inf")
bool isMinusInf(const Node& n) {
  auto floatOf = [](const Node& c) -> std::optional<std::string> {
    if (!isType(c, "Call") || dottedName(c["func"]) != "float" || c["args"].size() != 1) return std::nullopt;
    return strLiteral(c["args"][0]);
  };
  if (auto s = floatOf(n)) return *s == "-inf";
  if (isType(n, "UnaryOp") && opType(n) == "USub") {
    if (auto s = floatOf(n["operand"])) return *s == "inf";
  }
  return false;
}

// What a name read inside a loop body refers to.
struct Ref {
  enum Type { kOuter, kLoopVar, kOld, kNew, kLocal } type = kOuter;
  std::string name;
  size_t def = 0;  // kLocal: the statement that bound it
};

struct State {
  std::string name;
  Kind kind = Kind::kSum;
  bool vector = false;
  std::string dtype;            // "float32", ...
  size_t update = 0;            // its statement in the loop body
  std::string max_of;           // kRescaled: the maximum it is rescaled by
  const Node* rescale = nullptr;  // kRescaled: the argument of the factor's exp
  std::string exp_fn;           // kRescaled: "exp" or "exp2"
  int slot = 0;                 // its place among the scratch's values per program
  std::string combined;         // the name holding the combined value in later stages
};

// A loop body's name bindings: what a name read at a statement refers to.
struct Body {
  const PassContext* ctx = nullptr;
  const Node* stmts = nullptr;
  std::string var;
  std::map<std::string, std::vector<size_t>> defs;  // name -> statements binding it
  std::set<std::string> carried;
  std::map<std::string, size_t> update;             // carried name -> its statement
  std::map<std::string, std::string> new_max_local;  // "m_new@3" -> m

  Ref resolve(const std::string& name, size_t at) const {
    Ref r;
    r.name = name;
    auto it = defs.find(name);
    std::optional<size_t> d;
    if (it != defs.end()) {
      for (size_t i : it->second) {
        if (i < at) d = i;
      }
    }
    // The loop variable, until the body binds it again (start = tl.multiple_of(start, B)).
    if (name == var && !d) {
      r.type = Ref::kLoopVar;
      return r;
    }
    if (it == defs.end()) return r;  // kOuter
    if (!d) {
      r.type = Ref::kOld;
      return r;
    }
    if (carried.count(name) && update.at(name) == *d) {
      r.type = Ref::kNew;
      return r;
    }
    auto nm = new_max_local.find(fmt::format("{}@{}", name, *d));
    if (nm != new_max_local.end()) {
      r.type = Ref::kNew;
      r.name = nm->second;
      return r;
    }
    r.type = Ref::kLocal;
    r.def = *d;
    return r;
  }
  const Node& valueOf(size_t i) const { return (*stmts)[i]["value"]; }
};

struct RowLoop {
  const Node* node = nullptr;
  size_t index = 0;  // among the kernel body's statements
  std::vector<State> states;
  Body body;         // its bindings, with the maxima's new-value names
  bool reduces() const { return !states.empty(); }
};

// Linear forms in the maximum's old value (O) and its new one (Z: "new", or "safe:<c>" for
// tl.where(new == -inf, c, new)): each symbol's coefficient as a sign and factors.
struct Coef {
  int sign = 1;
  std::multiset<std::string> factors;
  bool operator==(const Coef& o) const { return sign == o.sign && factors == o.factors; }
};
struct Lin {
  std::map<std::string, Coef> syms;
  bool rest = false;
};

class SplitRowsPass : public Pass {
 public:
  SplitRowsPass() {
    info_.name = "split-rows";
    info_.summary = "Run each row of a row kernel on SPLIT programs, each on a chunk of the columns: stage k reduces "
                    "its chunk of reduction loop k to partial values, later stages combine the row's partials, the "
                    "last walks its chunk of the writing loops (few long rows).";
    info_.preconditions = {
        "the loops over the row are range(start, end, step) loops at the top of the kernel body (no loop nested "
        "elsewhere, no while, no return), the step a constexpr or a positive literal",
        "a loop carries running values (a reduction loop) or nothing (a writing loop); every running value is a "
        "sum from zero (s += e, s = s + e), a maximum or minimum (m = tl.maximum(m, e), directly or through "
        "one name), or a sum of exponentials rescaled as a scalar maximum grows (s = s * tl.exp(m - z) + t, exp2 "
        "too, with z the new maximum or tl.where(new == -inf, c, new), t's exponentials taken relative to z)",
        "a running row value (a vector) is read after its loop only reduced the same way (tl.sum(acc, axis=0) for "
        "a sum); names a loop binds are not read after it (its running values apart)",
        "the reduction loops come before the writing loops, and nothing before the last reduction loop stores",
        "the grid has fewer than 3 axes, none of them read META, and the kernel does not use the next axis; each "
        "launch is a statement of its own passing no *args or **kwargs",
    };
    info_.params = {
        {"split", PassParamKind::kInt, "16", false, 2, 1024, true, {}, "programs per row (a power of two)"},
    };
    info_.params[0].search = {"4", "16", "64"};
  }
  const PassInfo& info() const override { return info_; }

  PassOutcome run(const PassContext& ctx, const PassArgs& args) const override {
    const Kernel& k = *ctx.kernel;
    const Node& body = ctx.body();
    std::string tl = ctx.tl();
    int64_t split = args.integer("split");  // a power of two: validateArgs checked it
    if (ctx.hasReturn()) return refuse(fmt::format("{} returns early", k.name));

    // The statements, the row loops among them, and no other loop anywhere.
    size_t first = 0;
    if (!body.empty() && isType(body[0], "Expr") && isType(body[0]["value"], "Constant")) first = 1;
    std::vector<RowLoop> loops;
    std::string why;
    for (size_t i = first; i < body.size(); ++i) {
      const Node& s = body[i];
      bool nested = false;
      walk(s, [&](const Node& n) {
        if (&n != &s && (isType(n, "For") || isType(n, "While"))) nested = true;
        return !nested;
      });
      if (isType(s, "While")) return refuse(fmt::format("line {}: a while loop", nodePos(s)->line));
      if (isType(s, "For")) {
        if (nested) return refuse(fmt::format("line {}: a loop inside the loop", nodePos(s)->line));
        RowLoop l;
        l.node = &s;
        l.index = i;
        loops.push_back(std::move(l));
      } else if (nested) {
        return refuse(fmt::format("line {}: a loop that is not at the top of the kernel body", nodePos(s)->line));
      }
    }
    if (loops.empty()) return refuse(fmt::format("{} has no loop at the top of its body", k.name));
    for (auto& l : loops) {
      if (!analyzeLoop(ctx, l, &why)) return refuse(why);
    }
    size_t last_reduction = 0;
    int reductions = 0;
    for (size_t j = 0; j < loops.size(); ++j) {
      if (!loops[j].reduces()) continue;
      for (size_t i = 0; i < j; ++i) {
        if (!loops[i].reduces()) {
          return refuse(fmt::format("line {}: a reduction loop after a loop that writes", nodePos(*loops[j].node)->line));
        }
      }
      last_reduction = j;
      ++reductions;
    }
    if (reductions == 0) return refuse(fmt::format("no loop of {} keeps a running value: nothing to reduce in stages", k.name));
    // Nothing stores, or writes atomically anywhere, before the last reduction loop; no atomics at all.
    for (size_t i = first; i < body.size(); ++i) {
      std::string bad;
      walk(body[i], [&](const Node& n) {
        std::string f = ctx.tlFunction(n);
        if (f.rfind("atomic_", 0) == 0 || f == "device_print" || f == "static_print") bad = f;
        if (i < loops[last_reduction].index && f == "store") bad = f;
        return bad.empty();
      });
      if (!bad.empty()) {
        return refuse(fmt::format("line {}: tl.{} {}", nodePos(body[i])->line, bad,
                                  bad == "store" ? "before the last reduction loop (a stage that only reduces would "
                                                   "run it)"
                                                 : "(every program of a row would run it)"));
      }
    }
    if (last_reduction + 1 == loops.size() && loops[last_reduction].index + 1 == body.size()) {
      return refuse("nothing follows the last reduction loop");
    }
    for (size_t i = loops.front().index; i < body.size(); ++i) {
      if (hasMultilineString(ctx, body[i])) {
        return refuse(fmt::format("line {}: a string over several lines (indenting it would change it)",
                                  nodePos(body[i])->line));
      }
    }

    // Running values: their start, their type, how later statements read them.
    TextEdits reads;  // tl.sum(acc, axis=0) after the loop -> the combined name
    int slots = 0;
    for (auto& l : loops) {
      for (auto& st : l.states) {
        st.slot = slots++;
        const Node* init = nullptr;
        for (size_t i = l.index; i-- > first;) {
          if (assignedName(body[i]) == st.name && isType(body[i], "Assign")) {
            init = &body[i]["value"];
            break;
          }
          if (storeCounts(body[i]).count(st.name)) break;
        }
        if (!init) return refuse(fmt::format("'{}' has no start value before its loop at the top of the body", st.name));
        auto shape = startShape(ctx, *init, &st.dtype);
        if (!shape) {
          return refuse(fmt::format("cannot tell the type or shape of '{}' from its start `{}`", st.name, ctx.slice(*init)));
        }
        st.vector = *shape;
        bool type_ok = st.vector ? (st.dtype == "float32" || st.dtype == "int32") : kScalarTypes.count(st.dtype) > 0;
        if (!type_ok) return refuse(fmt::format("'{}' is a {} {}", st.name, st.dtype, st.vector ? "row value" : "scalar"));
        if ((st.kind == Kind::kSum || st.kind == Kind::kRescaled) && !startsAtZero(ctx, *init)) {
          return refuse(fmt::format("the sum '{}' does not start at zero", st.name));
        }
        if (st.kind == Kind::kRescaled) {
          for (const auto& o : l.states) {
            if (o.name == st.max_of && o.vector) {
              return refuse(fmt::format("'{}' is rescaled by '{}', a row value (per-column maxima)", st.name, o.name));
            }
          }
        }
        st.combined = st.name;
        if (st.vector) {
          st.combined = ctx.freshName(st.name + "_total");
          std::string want = reduction(st.kind);
          int names = 0, reduced = 0;
          for (size_t i = l.index + 1; i < body.size(); ++i) {
            if (storeCounts(body[i]).count(st.name)) {
              return refuse(fmt::format("line {}: '{}' is bound again after its loop", nodePos(body[i])->line, st.name));
            }
            walk(body[i], [&](const Node& n) {
              if (isType(n, "Name") && n["id"] == st.name && n["ctx"] == "Load") ++names;
              if (ctx.isTlCall(n, want) && !n["args"].empty() && isType(n["args"][0], "Name") &&
                  n["args"][0]["id"] == st.name && reducesWholeRow(n)) {
                ++reduced;
                reads.push_back({ctx.range(n), st.combined});
              }
              return true;
            });
          }
          if (names != reduced) {
            return refuse(fmt::format("the row value '{}' is read after its loop other than as tl.{}({}, axis=0)",
                                      st.name, want, st.name));
          }
        }
      }
    }

    // The grids and launches.
    if (ctx.sites.empty()) return refuse(fmt::format("no launch of {} in this file", k.name));
    int dims = -1;
    std::map<const LaunchSite*, std::vector<const Node*>> axes_of;
    std::map<const LaunchSite*, const Node*> stmt_of;
    for (const LaunchSite* site : ctx.sites) {
      auto g = gridOf(ctx, *site, &why);
      if (!g) return refuse(why);
      if (std::string why; hidesArguments(*ctx.ir, *site, k, &why)) return refuse(why);
      if (site->function.empty()) return refuse(fmt::format("{} is launched at module level", k.name));
      int d = static_cast<int>(g->axes.size());
      if (dims >= 0 && d != dims) return refuse("the launches' grids have different numbers of axes");
      dims = d;
      for (const Node* a : g->axes) {
        if (!g->lambda_arg.empty() && mentionsName(*a, g->lambda_arg)) {
          return refuse(fmt::format("the grid reads {}: the scratch is sized before the launch", g->lambda_arg));
        }
        axes_of[site].push_back(a);
      }
      const FunctionInfo& fn = ctx.ir->functions.at(site->function);
      walk(fn.def->at("body"), [&](const Node& n) {
        if (isType(n, "Expr") && &n["value"] == site->call) stmt_of[site] = &n;
        return !stmt_of.count(site);
      });
      if (!stmt_of.count(site)) return refuse("a launch is not a statement of its own (each stage is launched after it)");
      int line = nodePos(*stmt_of[site])->line;
      if (ctx.text().offset(line, 0) + ctx.text().indentOf(line).size() != ctx.range(*stmt_of[site]).begin) {
        return refuse("a launch shares its line with another statement");
      }
    }
    if (dims >= 3) return refuse("the grid has 3 axes already");
    bool axis_used = false;
    walk(body, [&](const Node& n) {
      if (ctx.isTlCall(n, "program_id") || ctx.isTlCall(n, "num_programs")) {
        const Node* a = n["args"].empty() ? keywordArg(n, "axis") : &n["args"][0];
        if (!a || !intLiteral(*a) || *intLiteral(*a) >= dims) axis_used = true;
      }
      return true;
    });
    if (axis_used) return refuse(fmt::format("the kernel reads a program-id axis past the grid's {}", dims));
    std::string device_param = devicePointer(ctx);
    if (device_param.empty()) return refuse("no pointer parameter to take the scratch's device from");
    std::string torch = torchAlias(ctx);
    if (torch.empty()) return refuse("the module does not import torch (the launcher allocates the scratch with it)");

    // The kernel.
    SourceEditor ed(ctx.text().text());
    std::string parts = ctx.freshName("split_parts");
    std::string split_c = ctx.freshName("SPLIT_ROWS");
    std::string stage_c = ctx.freshName("SPLIT_STAGE");
    std::string part = ctx.freshName("part");
    std::string part_base = ctx.freshName("part_base");
    std::string part_ids = ctx.freshName("part_ids");
    addKernelParam(ctx, ed, parts, "");
    addKernelParam(ctx, ed, split_c, ctx.constexprAnnotation());
    addKernelParam(ctx, ed, stage_c, ctx.constexprAnnotation());
    std::string indent = ctx.bodyIndent(), u = ctx.indentUnit();
    std::string row = dims == 1 ? fmt::format("{}.program_id(0)", tl)
                                : fmt::format("({}.program_id(0) + {}.program_id(1) * {}.num_programs(0))", tl, tl, tl);
    std::vector<std::string> prologue = {
        fmt::format("# split-rows: {} programs per row, a chunk of the columns each; stage k reduces its chunk of",
                    split_c),
        "# reduction loop k to partial values, later stages combine the row's partials",
        fmt::format("{} = {}.program_id({})", part, tl, dims),
        fmt::format("{} = {} * {}", part_base, row, split_c),
        fmt::format("{} = {} + {}.arange(0, {})", part_ids, part_base, tl, split_c)};
    ed.insert(ctx.text().offset(nodePos(body[first])->line, 0), joinLines(prologue, indent));

    std::vector<Range> covered;  // rewritten as a whole: their slices take `reads`
    for (const auto& l : loops) {
      covered.push_back(l.reduces() ? ctx.range(*l.node) : ctx.range((*l.node)["iter"]));
    }
    int stage = 0;
    std::vector<std::string> chunk_names;
    auto chunked = [&](const RowLoop& l, std::vector<std::string>* before) {
      const Node& iter = (*l.node)["iter"];
      const Node& ra = iter["args"];
      std::string start = ra.size() >= 2 ? sliceWith(ctx, ra[0], reads) : "0";
      std::string end = sliceWith(ctx, ra.size() >= 2 ? ra[1] : ra[0], reads);
      std::string step = ra.size() == 3 ? ctx.slice(ra[2]) : "1";
      std::string chunk = ctx.freshName("chunk"), lo = ctx.freshName("chunk_lo");
      for (int i = 2; std::find(chunk_names.begin(), chunk_names.end(), chunk) != chunk_names.end(); ++i) {
        chunk = ctx.freshName(fmt::format("chunk_{}", i));
        lo = ctx.freshName(fmt::format("chunk_lo_{}", i));
      }
      chunk_names.push_back(chunk);
      std::string span = start == "0" ? end : fmt::format("{} - {}", atomText(ctx, ra.size() >= 2 ? ra[1] : ra[0], end),
                                                           atomText(ctx, ra[0], start));
      before->push_back(step == "1" ? fmt::format("{} = {}.cdiv({}, {})", chunk, tl, span, split_c)
                                    : fmt::format("{} = {}.cdiv({}.cdiv({}, {}), {}) * {}", chunk, tl, tl, span, split_c,
                                                  step, step));
      before->push_back(start == "0" ? fmt::format("{} = {} * {}", lo, part, chunk)
                                     : fmt::format("{} = {} + {} * {}", lo, atomText(ctx, ra[0], start), part, chunk));
      std::string kws;
      for (const auto& kw : iter["keywords"]) kws += ", " + ctx.slice(kw);
      return fmt::format("{}({}, {}.minimum({} + {}, {}), {}{})", ctx.slice(iter["func"]), lo, tl, lo, chunk, end, step,
                         kws);
    };
    for (const auto& l : loops) {
      const Node& loop = *l.node;
      if (!l.reduces()) {
        // A writing loop of the last stage: its chunk.
        std::vector<std::string> before;
        auto range = chunked(l, &before);
        Range head = {ctx.text().offset(nodePos(loop)->line, 0), ctx.range(loop["iter"]).end};
        std::string lindent = ctx.text().indentOf(nodePos(loop)->line);
        std::string for_text(ctx.text().slice(Range{ctx.range(loop).begin, ctx.range(loop["iter"]).begin}));
        ed.replace(head, joinLines(before, lindent) + lindent + for_text + range);
        continue;
      }
      std::vector<std::string> before;
      auto range = chunked(l, &before);
      TextEdits te = reads;
      te.push_back({ctx.range(loop["iter"]), range});
      std::string loop_text = indentFollowingLines(sliceWith(ctx, loop, te), u);
      std::vector<std::string> lines = {fmt::format("if {} == {}:", stage_c, stage)};
      for (const auto& b : before) lines.push_back(u + b);
      lines.push_back(u + loop_text);
      for (const auto& st : l.states) {
        std::string value = st.name;
        if (st.vector) {
          value = fmt::format("{}.{}({}, axis=0)", tl,
                              reduction(st.kind), st.name);
        }
        lines.push_back(u + fmt::format("{}.store({} + ({} + {}) * {} + {}, {}.to({}.float64))", tl, parts, part_base,
                                        part, slots, st.slot, value, tl));
      }
      lines.push_back("else:");
      // Maxima and plain sums first: the rescaled sums read the combined maxima.
      for (int pass = 0; pass < 2; ++pass) {
        for (const auto& st : l.states) {
          if ((st.kind == Kind::kRescaled) != (pass == 1)) continue;
          std::string p = partsName(ctx, st);
          lines.push_back(u + fmt::format("{} = {}.load({} + {} * {} + {}).to({}.{})", p, tl, parts, part_ids, slots,
                                          st.slot, tl, st.dtype));
          if (st.kind == Kind::kRescaled) {
            const State* m = nullptr;
            for (const auto& o : l.states) if (o.name == st.max_of) m = &o;
            std::string factor = render(l.body, *st.rescale, st.update, m->name, partsName(ctx, *m));
            lines.push_back(u + fmt::format("{} = {}.sum({} * {}.{}({}), axis=0)", st.combined, tl, p, tl, st.exp_fn,
                                            factor));
          } else {
            lines.push_back(u + fmt::format("{} = {}.{}({}, axis=0)", st.combined, tl,
                                            reduction(st.kind), p));
          }
        }
      }
      ed.replace(ctx.lineRange(loop), joinLines(lines, ctx.text().indentOf(nodePos(loop)->line)));
      // Everything after the loop belongs to the later stages.
      int last = nodePos(body[body.size() - 1])->end_line;
      ed.indent(ctx.lineRange(nodePos(loop)->end_line + 1, last), u);
      ++stage;
    }
    for (const auto& r : reads) {
      bool inside = false;
      for (const Range& w : covered) {
        if (r.first.begin >= w.begin && r.first.end <= w.end) inside = true;
      }
      if (!inside) ed.replace(r.first, r.second);
    }

    // The launchers: the scratch, then one launch per stage.
    bool writes_chunks = last_reduction + 1 < loops.size();
    PassOutcome out;
    for (const LaunchSite* site : ctx.sites) {
      const FunctionInfo& fn = ctx.ir->functions.at(site->function);
      auto freshLocal = [&](const std::string& base) {
        std::string n = base;
        for (int i = 2; fn.assignments.count(n) || std::find(fn.params.begin(), fn.params.end(), n) != fn.params.end();
             ++i) {
          n = fmt::format("{}_{}", base, i);
        }
        return n;
      };
      std::string split_v = freshLocal("split_rows"), parts_v = freshLocal("split_parts");
      const Node* dev = launchArg(*site, device_param);
      if (!dev) return refuse(fmt::format("a launch does not pass {}", device_param));
      std::string rows;
      std::vector<std::string> axes;
      for (const Node* a : axes_of[site]) {
        axes.push_back(ctx.slice(*a));
        rows += atomText(ctx, *a, axes.back()) + " * ";
      }
      const Node& stmt = *stmt_of[site];
      int line = nodePos(stmt)->line;
      std::string lindent = ctx.text().indentOf(line);
      std::vector<std::string> lines = {
          fmt::format("{} = {}", split_v, split),
          fmt::format("{} = {}.empty({}{} * {}, dtype={}.float64, device={}.device)", parts_v, torch, rows, split_v, slots,
                      torch, atomText(ctx, *dev, ctx.slice(*dev)))};
      // The new arguments go after the kernel's, before the launch options (num_warps=...),
      // else right after the last argument (a trailing comma stays after them).
      size_t close = ctx.range(*site->call).end - 1;
      bool before_options = false;
      bool any = false;
      for (const char* key : {"args", "keywords"}) {
        for (const auto& a : site->call->at(key)) {
          if (!any || ctx.range(a).end > close) close = ctx.range(a).end;
          any = true;
        }
      }
      for (const auto& kw : site->call->at("keywords")) {
        if (kw["arg"].is_string() && site->options.count(kw["arg"].get<std::string>())) {
          close = ctx.range(kw).begin;
          before_options = true;
          break;
        }
      }
      for (int s = 0; s <= stage; ++s) {
        std::vector<std::string> grid = axes;
        grid.push_back(s < stage || writes_chunks ? split_v : "1");
        std::string added = fmt::format("{}={}, {}={}, {}={}", parts, parts_v, split_c, split_v, stage_c, s);
        TextEdits te = {{ctx.range(*site->grid), gridText(grid, "")},
                        {Range{close, close}, before_options ? added + ", " : any ? ", " + added : added}};
        lines.push_back(sliceWith(ctx, stmt, te));
      }
      // The statement's own indentation precedes its range and its newline follows it.
      std::string text = joinLines(lines, lindent).substr(lindent.size());
      text.pop_back();
      ed.replace(ctx.range(stmt), text);
    }
    out.param_types[parts] = "*fp64";
    out.applied = true;
    try {
      out.source = ed.apply();
    } catch (const std::logic_error& e) {
      return refuse(fmt::format("the rewrites of {} overlap ({})", k.name, e.what()));
    }
    out.notes.push_back(fmt::format("{} stage(s) per launch: {} reduction loop(s), then the writes; {} partial value(s) "
                                    "per program in an fp64 scratch",
                                    stage + 1, stage, slots));
    return out;
  }

 private:
  static std::string partsName(const PassContext& ctx, const State& st) { return ctx.freshName(st.name + "_parts"); }

  static bool reducesWholeRow(const Node& call) {
    if (call["args"].size() > 2) return false;
    const Node* axis = call["args"].size() == 2 ? &call["args"][1] : keywordArg(call, "axis");
    for (const auto& kw : call["keywords"]) {
      if (!kw["arg"].is_string() || kw["arg"] != "axis") return false;
    }
    return !axis || (intLiteral(*axis) && *intLiteral(*axis) == 0) ||
           (isType(*axis, "Constant") && (*axis)["value"].is_null());
  }

  // Is the start a row value (true) or a scalar (false)? nullopt when unknown; `dtype` its type.
  static std::optional<bool> startShape(const PassContext& ctx, const Node& init, std::string* dtype) {
    if (isNumber(init)) {
      *dtype = init["vt"] == "int" ? "int32" : "float32";
      return false;
    }
    if (isMinusInf(init) || (isType(init, "Call") && dottedName(init["func"]) == "float")) {
      *dtype = "float32";
      return false;
    }
    std::string f = ctx.tlFunction(init);
    if (f == "zeros" || f == "full") {
      const Node* dt = keywordArg(init, "dtype");
      size_t pos = f == "zeros" ? 1 : 2;
      if (!dt && init["args"].size() > pos) dt = &init["args"][pos];
      if (!dt || !isType(*dt, "Attribute")) return std::nullopt;
      *dtype = (*dt)["attr"].get<std::string>();
      const Node* shape = init["args"].empty() ? keywordArg(init, "shape") : &init["args"][0];
      if (!shape || !(isType(*shape, "Tuple") || isType(*shape, "List"))) return std::nullopt;
      if ((*shape)["elts"].size() == 1) return true;
      if ((*shape)["elts"].empty()) return false;
      return std::nullopt;
    }
    if ((f == "sum" || f == "max" || f == "min") && !init["args"].empty() && reducesWholeRow(init)) {
      std::string inner;
      auto s = startShape(ctx, init["args"][0], &inner);
      if (!s || !*s) return std::nullopt;
      *dtype = inner;
      return false;
    }
    return std::nullopt;
  }

  static bool startsAtZero(const PassContext& ctx, const Node& init) {
    if (isNumber(init)) return isZero(init);
    std::string f = ctx.tlFunction(init);
    if (f == "zeros") return true;
    if (f == "full") {
      const Node* v = init["args"].size() > 1 ? &init["args"][1] : keywordArg(init, "value");
      return v && isZero(*v);
    }
    if (f == "sum" && !init["args"].empty()) return startsAtZero(ctx, init["args"][0]);
    return false;
  }

  // The first runtime parameter the kernel loads or stores through.
  static std::string devicePointer(const PassContext& ctx) {
    for (const auto& p : ctx.kernel->params) {
      if (p.is_constexpr) continue;
      auto sig = ctx.signature.find(p.name);
      if (sig != ctx.signature.end() && sig->second.is_string() && sig->second.get<std::string>().rfind("*", 0) == 0) {
        return p.name;
      }
      std::set<std::string> d = ctx.derivedFrom(p.name);
      d.insert(p.name);
      bool used = false;
      walk(ctx.body(), [&](const Node& n) {
        std::string f = ctx.tlFunction(n);
        if ((f == "load" || f == "store") && !n["args"].empty()) {
          forEachName(n["args"][0], [&](const Node& x) {
            if (d.count(x["id"].get<std::string>())) used = true;
          });
        }
        return !used;
      });
      if (used && (sig == ctx.signature.end() || !sig->second.is_string())) return p.name;
    }
    return "";
  }

  // ---- One loop: its running values -----------------------------------------------------

  struct Closure {
    std::set<std::string> old_, new_;
    bool row = false;  // reaches the loop variable or a load
  };

  static void closure(const Body& b, const Node& e, size_t at, Closure* c, int depth = 0) {
    if (depth > 64) {
      c->row = true;
      return;
    }
    walk(e, [&](const Node& n) {
      if (b.ctx->isTlCall(n, "load")) c->row = true;
      if (isType(n, "Name") && n["ctx"] == "Load") {
        Ref r = b.resolve(n["id"].get<std::string>(), at);
        if (r.type == Ref::kLoopVar) c->row = true;
        if (r.type == Ref::kOld) c->old_.insert(r.name);
        if (r.type == Ref::kNew) c->new_.insert(r.name);
        if (r.type == Ref::kLocal) closure(b, b.valueOf(r.def), r.def, c, depth + 1);
      }
      return true;
    });
  }
  static bool free(const Body& b, const Node& e, size_t at) {
    Closure c;
    closure(b, e, at, &c);
    return c.old_.empty() && c.new_.empty();
  }

  bool analyzeLoop(const PassContext& ctx, RowLoop& l, std::string* why) const {
    const Node& loop = *l.node;
    int line = nodePos(loop)->line;
    auto fail = [&](std::string w) {
      *why = std::move(w);
      return false;
    };
    const Node& iter = loop["iter"];
    std::string rf = isType(iter, "Call") ? dottedName(iter["func"]) : "";
    if (!(rf == "range" || ctx.isTlCall(iter, "range")) || !isType(loop["target"], "Name") || !loop["orelse"].empty()) {
      return fail(fmt::format("line {}: the loop is not `for i in range(...)` (or tl.range)", line));
    }
    const Node& ra = iter["args"];
    if (ra.empty() || ra.size() > 3) return fail(fmt::format("line {}: the loop's range has no bounds", line));
    for (const auto& kw : iter["keywords"]) {
      if (kw["arg"].is_string() && (kw["arg"] == "step" || kw["arg"] == "start" || kw["arg"] == "end")) {
        return fail(fmt::format("line {}: the range passes {}= by keyword", line, kw["arg"].get<std::string>()));
      }
    }
    if (ra.size() == 3) {
      const Node& st = ra[2];
      bool ok = (intLiteral(st) && *intLiteral(st) > 0);
      if (isType(st, "Name")) {
        const Param* p = ctx.kernel->param(st["id"].get<std::string>());
        ok = p && p->is_constexpr;
      }
      if (!ok) return fail(fmt::format("line {}: the loop's step `{}` is not a constexpr or a positive literal", line,
                                       ctx.slice(st)));
    }
    Body& b = l.body;
    b.ctx = &ctx;
    b.stmts = &loop["body"];
    b.var = loop["target"]["id"].get<std::string>();
    const Node& stmts = loop["body"];
    for (size_t i = 0; i < stmts.size(); ++i) {
      const Node& s = stmts[i];
      if (isType(s, "Expr") && ctx.isTlCall(s["value"], "store")) continue;
      if (isType(s, "Pass")) continue;
      std::string t = assignedName(s);
      if (t.empty() || !(isType(s, "Assign") || isType(s, "AugAssign"))) {
        return fail(fmt::format("line {}: a statement other than `name = ...` or tl.store in the loop",
                                nodePos(s)->line));
      }
      b.defs[t].push_back(i);
    }
    // Running values: read before they are bound in a step.
    for (size_t i = 0; i < stmts.size(); ++i) {
      const Node& s = stmts[i];
      auto readAt = [&](const std::string& name) {
        if (name == b.var) return;  // a step's own value, bound again: not carried
        auto it = b.defs.find(name);
        if (it == b.defs.end()) return;
        bool bound_before = false;
        for (size_t d : it->second) bound_before = bound_before || d < i;
        if (!bound_before) b.carried.insert(name);
      };
      if (isType(s, "Pass")) continue;
      if (isType(s, "AugAssign")) readAt(assignedName(s));
      walk(s["value"], [&](const Node& n) {
        if (isType(n, "Name") && n["ctx"] == "Load") readAt(n["id"].get<std::string>());
        return true;
      });
    }
    for (const auto& c : b.carried) {
      if (b.defs[c].size() != 1) {
        return fail(fmt::format("line {}: the running value '{}' is bound twice in the loop", line, c));
      }
      b.update[c] = b.defs[c][0];
    }
    // Names bound in the loop and read after it hold the last step's values.
    const Node& body = ctx.body();
    for (const auto& [name, d] : b.defs) {
      if (b.carried.count(name)) continue;
      if (readAfter(body, l.index + 1, name)) {
        return fail(fmt::format("line {}: '{}' is bound in the loop and read after it", line, name));
      }
    }
    if (readAfter(body, l.index + 1, b.var)) {
      return fail(fmt::format("line {}: the loop variable '{}' is read after the loop", line, b.var));
    }
    bool stores = false;
    for (const auto& s : stmts) stores = stores || isType(s, "Expr");
    if (b.carried.empty()) return true;  // a writing loop
    if (stores) return fail(fmt::format("line {}: the loop both keeps running values and stores", line));

    // Sums, maxima and minima first (the rescaled sums refer to a maximum).
    std::vector<std::string> rescaled;
    for (const auto& c : b.carried) {
      size_t u = b.update[c];
      const Node& s = stmts[u];
      const Node& v = s["value"];
      State st;
      st.name = c;
      st.update = u;
      auto isOld = [&](const Node& n) {
        return isType(n, "Name") && n["ctx"] == "Load" && n["id"] == c && b.resolve(c, u).type == Ref::kOld;
      };
      if (isType(s, "AugAssign")) {
        if (opType(s) != "Add") return fail(fmt::format("line {}: '{}' is updated with an operator other than +=", nodePos(s)->line, c));
        if (!free(b, v, u)) return fail(fmt::format("line {}: what is added to '{}' reads a running value", nodePos(s)->line, c));
        st.kind = Kind::kSum;
        l.states.push_back(st);
        continue;
      }
      if (isType(v, "BinOp") && opType(v) == "Add") {
        const Node* other = isOld(v["left"]) ? &v["right"] : isOld(v["right"]) ? &v["left"] : nullptr;
        if (other) {
          if (!free(b, *other, u)) {
            return fail(fmt::format("line {}: what is added to '{}' reads a running value", nodePos(s)->line, c));
          }
          st.kind = Kind::kSum;
          l.states.push_back(st);
          continue;
        }
        rescaled.push_back(c);
        continue;
      }
      auto minmax = [&](const Node& call, const std::string& self) -> std::optional<Kind> {
        std::string f = ctx.tlFunction(call);
        if ((f != "maximum" && f != "minimum") || call["args"].size() != 2 || !call["keywords"].empty()) return std::nullopt;
        for (int side = 0; side < 2; ++side) {
          const Node& me = call["args"][side];
          if (isType(me, "Name") && me["id"] == self && b.resolve(self, u).type == Ref::kOld &&
              free(b, call["args"][1 - side], u)) {
            return f == "maximum" ? Kind::kMax : Kind::kMin;
          }
        }
        return std::nullopt;
      };
      if (auto kind = minmax(v, c)) {
        st.kind = *kind;
        l.states.push_back(st);
        continue;
      }
      if (isType(v, "Name")) {
        Ref r = b.resolve(v["id"].get<std::string>(), u);
        if (r.type == Ref::kLocal) {
          if (auto kind = minmax(b.valueOf(r.def), c)) {
            st.kind = *kind;
            l.states.push_back(st);
            b.new_max_local[fmt::format("{}@{}", r.name, r.def)] = c;
            continue;
          }
        }
      }
      return fail(fmt::format("line {}: the running value '{}' is neither a sum, a maximum or minimum, nor a sum "
                              "rescaled by a maximum: its partial values cannot be combined",
                              nodePos(s)->line, c));
    }
    for (const auto& c : rescaled) {
      State st;
      if (!rescaledSum(ctx, b, l, c, &st, why)) return false;
      l.states.push_back(st);
    }
    std::sort(l.states.begin(), l.states.end(), [&](const State& a, const State& c) { return a.update < c.update; });
    return true;
  }

  // s = s * EXP(A) + T: A = k*(old m) - k*z, T a sum of terms w * EXP(v - k*z) (exp2 too).
  bool rescaledSum(const PassContext& ctx, const Body& b, const RowLoop& l, const std::string& c, State* st,
                   std::string* why) const {
    size_t u = b.update.at(c);
    const Node& s = (*b.stmts)[u];
    int line = nodePos(s)->line;
    auto fail = [&](const std::string& w) {
      *why = fmt::format("line {}: {}", line, w);
      return false;
    };
    const Node& v = s["value"];
    const Node* scaled = nullptr;
    const Node* term = nullptr;
    const Node* factor = nullptr;
    for (int side = 0; side < 2 && !scaled; ++side) {
      const Node& x = v[side == 0 ? "left" : "right"];
      if (!isType(x, "BinOp") || opType(x) != "Mult") continue;
      for (int f = 0; f < 2; ++f) {
        const Node& me = x[f == 0 ? "left" : "right"];
        if (isType(me, "Name") && me["id"] == c && b.resolve(c, u).type == Ref::kOld) {
          scaled = &x;
          factor = &x[f == 0 ? "right" : "left"];
          term = &v[side == 0 ? "right" : "left"];
        }
      }
    }
    std::string not_combinable = fmt::format(
        "the running value '{}' is neither a sum, a maximum or minimum, nor a sum rescaled by a maximum: its partial "
        "values cannot be combined", c);
    if (!scaled) return fail(not_combinable);
    std::string fn = ctx.tlFunction(*factor);
    if ((fn != "exp" && fn != "exp2") || (*factor)["args"].size() != 1) return fail(not_combinable);
    const Node& a = (*factor)["args"][0];
    Closure ca, ct;
    closure(b, a, u, &ca);
    closure(b, *term, u, &ct);
    if (ca.row || ca.old_.size() != 1 || ca.new_.size() > 1 || (!ca.new_.empty() && *ca.new_.begin() != *ca.old_.begin())) {
      return fail(fmt::format("the factor rescaling '{}' is not taken of one maximum's old and new values", c));
    }
    std::string m = *ca.old_.begin();
    bool is_max = false;
    for (const auto& o : l.states) is_max = is_max || (o.name == m && o.kind == Kind::kMax);
    if (!is_max) return fail(fmt::format("'{}' is rescaled by '{}', which is not a running maximum", c, m));
    if (!ct.old_.empty() || ct.new_.size() != 1 || *ct.new_.begin() != m) {
      return fail(fmt::format("what is added to '{}' is not taken relative to the new maximum of '{}'", c, m));
    }
    // The forms: A = k*O - k*Z, each of T's exponentials reads Z as -k*Z.
    auto la = lin(b, a, u, m);
    if (!la || la->rest || la->syms.size() != 2 || !la->syms.count("O")) {
      return fail(fmt::format("the rescaling factor of '{}' is not exp(k * ({} - z))", c, m));
    }
    std::string zsym;
    Coef kz;
    for (const auto& [sym, coef] : la->syms) {
      if (sym != "O") {
        zsym = sym;
        kz = coef;
      }
    }
    Coef ko = la->syms.at("O");
    kz.sign = -kz.sign;
    if (!(ko == kz)) return fail(fmt::format("the rescaling factor of '{}' is not exp(k * ({} - z))", c, m));
    Coef want = ko;
    want.sign = -want.sign;
    if (!terms(ctx, b, *term, u, fn, zsym, want, m)) {
      return fail(fmt::format("what is added to '{}' is not a sum of {}(x - z) terms with the rescaling's z", c, fn));
    }
    st->name = c;
    st->kind = Kind::kRescaled;
    st->update = u;
    st->max_of = m;
    st->rescale = &a;
    st->exp_fn = fn;
    return true;
  }

  // The linear form of `e` in the maximum m's old value and its new one.
  static std::optional<Lin> lin(const Body& b, const Node& e, size_t at, const std::string& m, int depth = 0) {
    if (depth > 64) return std::nullopt;
    const PassContext& ctx = *b.ctx;
    auto restOnly = [&]() -> std::optional<Lin> {
      Closure c;
      closure(b, e, at, &c);
      if (!c.old_.empty() || !c.new_.empty()) return std::nullopt;
      Lin l;
      l.rest = true;
      return l;
    };
    if (isType(e, "Name") && e["ctx"] == "Load") {
      Ref r = b.resolve(e["id"].get<std::string>(), at);
      Lin l;
      if (r.type == Ref::kOld && r.name == m) {
        l.syms["O"] = Coef{};
        return l;
      }
      if (r.type == Ref::kNew && r.name == m) {
        l.syms["Z:new"] = Coef{};
        return l;
      }
      if (r.type == Ref::kLocal) {
        const Node& dv = b.valueOf(r.def);
        if (auto c = safeConstant(b, dv, r.def, m)) {
          l.syms["Z:safe:" + *c] = Coef{};
          return l;
        }
        return lin(b, dv, r.def, m, depth + 1);
      }
      return restOnly();
    }
    std::string op = opType(e);
    if (isType(e, "UnaryOp") && op == "USub") {
      auto x = lin(b, e["operand"], at, m, depth + 1);
      if (x) for (auto& [s, c] : x->syms) c.sign = -c.sign;
      return x;
    }
    if (isType(e, "BinOp") && (op == "Add" || op == "Sub")) {
      auto x = lin(b, e["left"], at, m, depth + 1), y = lin(b, e["right"], at, m, depth + 1);
      if (!x || !y) return std::nullopt;
      for (auto [s, c] : y->syms) {
        if (x->syms.count(s)) return std::nullopt;
        if (op == "Sub") c.sign = -c.sign;
        x->syms[s] = c;
      }
      x->rest = x->rest || y->rest;
      return x;
    }
    if (isType(e, "BinOp") && (op == "Mult" || op == "Div")) {
      auto x = lin(b, e["left"], at, m, depth + 1), y = lin(b, e["right"], at, m, depth + 1);
      if (!x || !y) return std::nullopt;
      if (op == "Div") {
        if (!y->syms.empty()) return std::nullopt;
        for (auto& [s, c] : x->syms) c.factors.insert("/" + squeeze(ctx.slice(e["right"])));
        return x;
      }
      if (!x->syms.empty() && !y->syms.empty()) return std::nullopt;
      Lin& v = x->syms.empty() ? *y : *x;
      const Node& k = x->syms.empty() ? e["left"] : e["right"];
      for (auto& [s, c] : v.syms) c.factors.insert(squeeze(ctx.slice(k)));
      return v;
    }
    return restOnly();
  }

  // tl.where(new == -inf, c, new) (or new != -inf / new > -inf with the branches swapped):
  // the constant's text, for a number c.
  static std::optional<std::string> safeConstant(const Body& b, const Node& e, size_t at, const std::string& m) {
    if (!b.ctx->isTlCall(e, "where") || e["args"].size() != 3) return std::nullopt;
    const Node& cond = e["args"][0];
    auto isNew = [&](const Node& n) {
      if (!isType(n, "Name")) return false;
      Ref r = b.resolve(n["id"].get<std::string>(), at);
      return r.type == Ref::kNew && r.name == m;
    };
    if (!isType(cond, "Compare") || cond["ops"].size() != 1 || !isNew(cond["left"]) || !isMinusInf(cond["comparators"][0])) {
      return std::nullopt;
    }
    std::string o = nodeType(cond["ops"][0]);
    const Node* konst = nullptr;
    const Node* same = nullptr;
    if (o == "Eq") konst = &e["args"][1], same = &e["args"][2];
    else if (o == "NotEq" || o == "Gt") konst = &e["args"][2], same = &e["args"][1];
    else return std::nullopt;
    bool number = isNumber(*konst) || (isType(*konst, "UnaryOp") && opType(*konst) == "USub" && isNumber((*konst)["operand"]));
    if (!number || !isNew(*same)) return std::nullopt;
    return squeeze(b.ctx->slice(*konst));
  }

  // Is `e` a sum of terms w * FN(v - k*z) (weights and v free of the maximum)?
  static bool terms(const PassContext& ctx, const Body& b, const Node& e, size_t at, const std::string& fn,
                    const std::string& zsym, const Coef& kz, const std::string& m, int depth = 0) {
    if (depth > 64) return false;
    auto rec = [&](const Node& x, size_t a2) { return terms(ctx, b, x, a2, fn, zsym, kz, m, depth + 1); };
    std::string f = ctx.tlFunction(e);
    if (f == fn && e["args"].size() == 1) {
      auto l = lin(b, e["args"][0], at, m);
      return l && l->syms.size() == 1 && l->syms.count(zsym) && l->syms.at(zsym) == kz;
    }
    if (f == "sum" && !e["args"].empty() && reducesWholeRow(e)) return rec(e["args"][0], at);
    if (f == "where" && e["args"].size() == 3) {
      if (!free(b, e["args"][0], at)) return false;
      return (rec(e["args"][1], at) && isZero(e["args"][2])) || (isZero(e["args"][1]) && rec(e["args"][2], at));
    }
    if (isType(e, "Call") && isType(e["func"], "Attribute") && e["func"]["attr"] == "to") return rec(e["func"]["value"], at);
    std::string op = opType(e);
    if (isType(e, "BinOp") && (op == "Add" || op == "Sub")) return rec(e["left"], at) && rec(e["right"], at);
    if (isType(e, "BinOp") && op == "Mult") {
      if (free(b, e["left"], at)) return rec(e["right"], at);
      if (free(b, e["right"], at)) return rec(e["left"], at);
      return false;
    }
    if (isType(e, "BinOp") && op == "Div") return free(b, e["right"], at) && rec(e["left"], at);
    if (isType(e, "Name") && e["ctx"] == "Load") {
      Ref r = b.resolve(e["id"].get<std::string>(), at);
      return r.type == Ref::kLocal && rec(b.valueOf(r.def), r.def);
    }
    return false;
  }

  // The rescaling factor's argument for the combine: the maximum's old value is the row's
  // partial maxima, its new one the combined maximum (the maximum's own name by then).
  static std::string render(const Body& b, const Node& e, size_t at, const std::string& m, const std::string& m_parts) {
    TextEdits te;
    walk(e, [&](const Node& n) {
      if (!isType(n, "Name") || n["ctx"] != "Load") return true;
      Ref r = b.resolve(n["id"].get<std::string>(), at);
      if (r.type == Ref::kOld) te.push_back({b.ctx->range(n), m_parts});
      else if (r.type == Ref::kNew) te.push_back({b.ctx->range(n), m});
      else if (r.type == Ref::kLocal) {
        te.push_back({b.ctx->range(n), "(" + render(b, b.valueOf(r.def), r.def, m, m_parts) + ")"});
      }
      return true;
    });
    return sliceWith(*b.ctx, e, te);
  }

  // Is `name` read after statement `from` of `stmts` before it is bound there for sure?
  static bool readAfter(const Node& stmts, size_t from, const std::string& name) {
    for (size_t i = from; i < stmts.size(); ++i) {
      const Node& s = stmts[i];
      if (isType(s, "For")) {
        if (mentionsName(s["iter"], name)) return true;
        bool bound = isType(s["target"], "Name") && s["target"]["id"] == name;
        if (!bound && readAfter(s["body"], 0, name)) return true;
        continue;  // a loop may not run: what it binds is not bound for sure after it
      }
      bool read = false;
      walk(s, [&](const Node& n) {
        if (isType(n, "Name") && n["id"] == name && n["ctx"] == "Load") read = true;
        return !read;
      });
      if (read || (isType(s, "AugAssign") && assignedName(s) == name)) return true;
      if (isType(s, "Assign") && assignedName(s) == name) return false;
    }
    return false;
  }

  PassInfo info_;
};

}  // namespace

std::unique_ptr<Pass> makeSplitRowsPass() { return std::make_unique<SplitRowsPass>(); }

}  // namespace tf

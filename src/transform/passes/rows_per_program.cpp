// rows-per-program: a row-wise kernel launched with one program per row handles ROWS
// consecutive rows per program instead, so that short rows do not pay a whole program each
// (launch and scheduling cost, too little work per program to hide memory latency).
//
//   mode=loop   `row = tl.program_id(0)` becomes a loop over this program's rows with the
//               same name, bounded by the row count; the body moves into the loop (`stages`
//               pipelines its loads). Works for any body without `return`.
//   mode=block  the program takes its rows as one [ROWS, BLOCK] tile: `row` becomes a column
//               of row indices (tl.arange(0, ROWS)[:, None]), so row values broadcast to 2-D;
//               reductions and scans over a row run along axis 1 (reductions keep the
//               dimension: argmax and tl.reduce too), every load and store of row data also
//               masks `row < n_rows`, a value a loop carries that becomes per-row in it starts
//               per-row (0.0 -> tl.full([ROWS, 1], 0.0, tl.float32)), and a read of memory the
//               program stored first waits at a barrier (a row's values now span warps).
//               Loops and `if`s are kept when no row decides them (row_block.h).
//
// The row count is the grid written in the kernel's terms, or a new `n_rows` parameter.
// Launcher: `rows_per_program = R` before the grid, grid axis 0 becomes cdiv(rows, rows_per_program);
// a 2-D or 3-D grid keeps its other axes (mode=loop: each program loops over consecutive axis-0
// ids, its other ids unchanged).
#include <fmt/format.h>

#include <map>

#include "transform/kernel_normalize.h"
#include "transform/pass_context.h"
#include "transform/passes/passes.h"
#include "transform/row_block.h"

namespace tf {
namespace {

// tl.program_id calls per literal axis; key -1 counts calls with a computed axis.
std::map<int, int> programIdCallsByAxis(const PassContext& ctx) {
  std::map<int, int> out;
  walk(*ctx.kernel->def, [&](const Node& n) {
    if (ctx.isTlCall(n, "program_id")) ++out[programIdAxis(n)];
    return true;
  });
  return out;
}

class RowsPerProgramPass : public Pass {
 public:
  RowsPerProgramPass() {
    info_.name = "rows-per-program";
    info_.summary = "Short rows: each program handles ROWS_PER_PROGRAM consecutive rows in a loop, instead of one.";
    info_.preconditions = {
        "one program per row along grid axis 0: the kernel binds `row = tl.program_id(0)` at the top of its body, "
        "reads tl.program_id(0) nowhere else (nor tl.num_programs), and never assigns the row variable again; "
        "other grid axes (a 2-D or 3-D grid) are kept, with mode=loop",
        "the body has no `return` (it would end the program, not the row) but a bare one ending it (dropped)",
        "every launch's grid is a tuple (or a lambda returning one) with the axes the kernel reads; axis 0 "
        "becomes cdiv(rows, ROWS_PER_PROGRAM)",
        "the row count is expressible with the kernel's parameters, or the grid is a plain tuple (then it is "
        "passed as n_rows)",
        "mode=block: every value is a scalar or a 1-D vector per row; loops and ifs are not decided by a row's "
        "values; reductions and scans run over the whole row; row loads and stores pass a keyword mask or none; "
        "no call the analysis does not know takes a row's value; rows a power of two",
    };
    info_.params = {
        {"rows", PassParamKind::kInt, "4", false, 2, 1024, false, {}, "rows per program (ROWS_PER_PROGRAM)"},
        {"stages", PassParamKind::kInt, "0", false, 0, 8, false, {},
         "mode=loop: pipeline the row loop's loads: tl.range(..., num_stages=stages) (0: a plain range)"},
        {"mode", PassParamKind::kChoice, "loop", false, 0, 0, false, {"loop", "block"},
         "a loop over the rows, or the rows as one 2-D tile"},
    };
    for (auto& p : info_.params) {
      if (p.name == "rows") p.search = {"2", "4", "8", "16"};
    }
  }
  const PassInfo& info() const override { return info_; }

  PassOutcome run(const PassContext& ctx, const PassArgs& args) const override {
    const Kernel& k = *ctx.kernel;
    // The rows are grid axis 0: its id bound once at the top of the body and read nowhere
    // else. Other axes (heads, column blocks of a 2-D or 3-D grid) stay as they are: each
    // program loops over consecutive axis-0 ids with its other ids unchanged.
    std::vector<PidVar> pids = ctx.pidVars();
    const PidVar* p0 = nullptr;
    for (const auto& p : pids) {
      if (p.axis == 0 && !p0) p0 = &p;
    }
    std::map<int, int> calls = programIdCallsByAxis(ctx);
    if (!p0 || calls.count(-1) || calls[0] != 1) {
      return refuse(fmt::format("{} is not launched one program per row: it does not bind tl.program_id(0) once, "
                                "alone, at the top of its body",
                                k.name));
    }
    const PidVar& pv = *p0;
    int dims = calls.rbegin()->first + 1;
    if (ctx.numProgramsCalls() != 0) return refuse("the kernel calls tl.num_programs; the loop would change its meaning");
    if (dims > 1 && args.text("mode") == "block") {
      return refuse(fmt::format("mode=block: the kernel reads {} grid axes (mode=loop takes them)", dims));
    }
    if (ctx.hasReturn(true)) return refuse("the kernel body has a `return`: in a loop over rows it would end the program");
    // A bare `return` that ends the body does nothing: it is dropped (inside the loop it would
    // end the program after the first row).
    const Node* trailing = ctx.trailingBareReturn();
    int assigns = 0;
    walk(ctx.body(), [&](const Node& n) {
      if (isType(n, "Name") && n["id"] == pv.name && n["ctx"] == "Store") ++assigns;
      return true;
    });
    if (assigns != 1) return refuse(fmt::format("'{}' is assigned again in the body", pv.name));
    for (const auto& [p, u] : ctx.facts.params) {
      // A tile the programs step by along the rows (pid * BLOCK); a constexpr row stride
      // (pid * K) is fine, and so is a tile another axis steps by.
      if ((dims == 1 ? u.pid_scaled : u.pid_axes.count(0) > 0) && u.tile_extent) {
        return refuse(fmt::format("programs step by {} ({} * {}): the kernel tiles a dimension, it is not one row "
                                  "per program",
                                  p, pv.name, p));
      }
    }
    if (ctx.sites.empty()) return refuse(fmt::format("no launch of {} in this file", k.name));
    const Node& body = ctx.body();
    int index = ctx.bodyIndex(pv.stmt);
    int statements = static_cast<int>(body.size()) - (trailing ? 1 : 0);
    if (index + 1 >= statements) return refuse("nothing follows the program id");
    bool block = args.text("mode") == "block";
    if (!block && hasMultilineString(ctx, body)) {
      return refuse("the body holds a multi-line string that indenting would change");
    }

    std::vector<TunableSet> sets = kernelTunables(ctx);
    std::string why;
    auto rows_expr = gridAxisInKernel(ctx, sets, 0, &why);
    PassOutcome out;
    std::string n_rows;
    if (rows_expr) {
      n_rows = *rows_expr;
    } else {
      n_rows = ctx.freshName("n_rows");
      out.param_types[n_rows] = "i32";
    }
    std::string rpp = ctx.freshName("ROWS_PER_PROGRAM");
    std::string tl = ctx.tl();
    SourceEditor ed(ctx.text().text());
    Range pid_lines = ctx.lineRange(*pv.stmt);
    if (block) {
      int64_t rows = args.integer("rows");
      if ((rows & (rows - 1)) != 0) return refuse(fmt::format("mode=block: rows={} is not a power of two", rows));
      if (!blockRows(ctx, ed, pv, rpp, n_rows, &why)) return refuse("mode=block: " + why);
    } else {
      std::string first = ctx.freshName("first_row");
      int64_t stages = args.integer("stages");
      std::string range_fn = stages > 0 ? tl + ".range" : "range";
      std::string extra = stages > 0 ? fmt::format(", num_stages={}", stages) : "";
      LoopEntryValues entry = loopEntryValues(ctx, index + 1);
      std::vector<std::string> lines = {
          fmt::format("# rows-per-program: each program handles {} consecutive rows", rpp),
          fmt::format("{} = {}.program_id(0) * {}", first, tl, rpp),
      };
      lines.insert(lines.end(), entry.saved.begin(), entry.saved.end());
      lines.push_back(
          fmt::format("for {} in {}({}, min({} + {}, {}){}):", pv.name, range_fn, first, first, rpp, n_rows, extra));
      for (const auto& r : entry.reset) lines.push_back(ctx.indentUnit() + r);
      ed.replace(pid_lines, joinLines(lines, ctx.bodyIndent()));
      auto last = nodePos(body[static_cast<size_t>(statements - 1)]);
      Range looped = {pid_lines.end, ctx.lineRange(last->line, last->end_line).end};
      ed.indent(looped, ctx.indentUnit());
      if (trailing) ed.replace({looped.end, ctx.lineRange(*trailing).end}, "");
    }
    addKernelParam(ctx, ed, rpp, ctx.constexprAnnotation());
    if (!rows_expr) addKernelParam(ctx, ed, n_rows, "");

    std::set<std::string> fn_done;
    std::set<const Node*> grids_done;
    for (const LaunchSite* site : ctx.sites) {
      if (std::string why; hidesArguments(*ctx.ir, *site, k, &why)) return refuse(why);
      if (site->function.empty()) return refuse(fmt::format("{} is launched at module level", k.name));
      auto g = gridOf(ctx, *site, &why);
      if (!g) return refuse(why);
      if (static_cast<int>(g->axes.size()) < dims) {
        return refuse(fmt::format("a grid has {} axes; the kernel reads {}", g->axes.size(), dims));
      }
      if (!rows_expr && g->lambda && mentionsName(*g->axes[0], g->lambda_arg)) {
        return refuse(fmt::format("the row count depends on {} (a lambda grid)", g->lambda_arg));
      }
      const FunctionInfo& fn = ctx.ir->functions.at(site->function);
      std::string var = "rows_per_program";
      for (int i = 2; fn.assignments.count(var); ++i) var = fmt::format("rows_per_program_{}", i);
      if (fn_done.insert(site->function).second) {
        const Node* anchor = g->assign_stmt ? g->assign_stmt : site->call;
        int line = nodePos(*anchor)->line;
        ed.insert(ctx.text().offset(line, 0),
                  fmt::format("{}{} = {}\n", ctx.text().indentOf(line), var, args.text("rows")));
      }
      if (grids_done.insert(g->expr).second) {
        std::vector<std::string> axes = {fmt::format("{}.cdiv({}, {})", ctx.triton(), ctx.slice(*g->axes[0]), var)};
        for (size_t a = 1; a < g->axes.size(); ++a) axes.push_back(ctx.slice(*g->axes[a]));
        ed.replace(ctx.range(*g->expr), gridTextFor(*g, axes, g->lambda_arg));
      }
      addLaunchKeyword(ctx, ed, *site, rpp, var);
      if (!rows_expr) addLaunchKeyword(ctx, ed, *site, n_rows, ctx.slice(*g->axes[0]));
    }
    out.applied = true;
    out.source = ed.apply();
    return out;
  }

 private:
  // The rows as one tile: `row` a column of row indices, reductions and scans along the row
  // (axis 1, reductions keeping the dimension), the row mask on every load and store of row
  // data, loop-carried values widened to the per-row shape, and a barrier before a read of
  // memory the program wrote (src/transform/row_block.h).
  static bool blockRows(const PassContext& ctx, SourceEditor& ed, const PidVar& pv, const std::string& rpp,
                        const std::string& n_rows, std::string* why) {
    std::optional<RowBlockPlan> plan = planRowBlock(ctx, pv.name, rpp, why);
    if (!plan) return false;
    std::string tl = ctx.tl();
    std::vector<std::string> lines = {
        fmt::format("# rows-per-program: this program takes {} rows as one tile, a row per tile row", rpp),
        fmt::format("{} = {}.program_id(0) * {} + {}.arange(0, {})[:, None]", pv.name, tl, rpp, tl, rpp)};
    ed.replace(ctx.lineRange(*pv.stmt), joinLines(lines, ctx.bodyIndent()));
    auto alongRow = [&](const Node& call, const std::string& extra) {
      if (const Node* axis = keywordArg(call, "axis")) {
        ed.replace(ctx.range(*axis), "1");
        if (!extra.empty()) addCallKeyword(ctx, ed, call, extra);
      } else if (call["args"].size() > 1) {
        ed.replace(ctx.range(call["args"][1]), "1");
        if (!extra.empty()) addCallKeyword(ctx, ed, call, extra);
      } else {
        addCallKeyword(ctx, ed, call, extra.empty() ? "axis=1" : "axis=1, " + extra);
      }
    };
    for (const Node* r : plan->reductions) alongRow(*r, "keep_dims=True");
    for (const Node* s : plan->scans) alongRow(*s, "");
    std::string row_mask = fmt::format("{} < {}", pv.name, n_rows);
    for (const Node* n : plan->row_access) {
      if (const Node* mask = keywordArg(*n, "mask")) {
        ed.replace(ctx.range(*mask), fmt::format("{} & ({})", atomText(ctx, *mask, ctx.slice(*mask)), row_mask));
      } else {
        addCallKeyword(ctx, ed, *n, "mask=" + row_mask);
      }
    }
    for (const auto& [node, text] : plan->inits) ed.replace(ctx.range(*node), text);
    for (const Node* s : plan->barriers) {
      int line = nodePos(*s)->line;
      std::string indent = ctx.text().indentOf(line);
      ed.insert(ctx.text().offset(line, 0),
                fmt::format("{}# rows-per-program: the tile's rows span warps; what the program stored is read "
                            "back below\n{}{}.debug_barrier()\n",
                            indent, indent, tl));
    }
    return true;
  }

  PassInfo info_;
};

}  // namespace

std::unique_ptr<Pass> makeRowsPerProgramPass() { return std::make_unique<RowsPerProgramPass>(); }

}  // namespace tf

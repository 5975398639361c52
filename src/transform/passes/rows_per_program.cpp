// rows-per-program: a row-wise kernel launched with one program per row handles ROWS
// consecutive rows per program instead, looping over them, so that short rows do not pay a
// whole program each (launch and scheduling cost, too little work per program to hide
// memory latency; `stages` pipelines the loop's loads).
//
// Kernel: `row = tl.program_id(0)` becomes a loop over this program's rows with the same
// name, bounded by the row count; the rest of the body moves into the loop. The row count
// is the grid written in the kernel's terms, or a new `n_rows` parameter. Launcher:
// `rows_per_program = R` before the grid, the grid becomes cdiv(rows, rows_per_program).
#include <fmt/format.h>

#include "transform/pass_context.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {

class RowsPerProgramPass : public Pass {
 public:
  RowsPerProgramPass() {
    info_.name = "rows-per-program";
    info_.summary = "Short rows: each program handles ROWS_PER_PROGRAM consecutive rows in a loop, instead of one.";
    info_.preconditions = {
        "a 1-D grid of one program per row: the kernel binds `row = tl.program_id(0)` at the top of its body, "
        "calls tl.program_id nowhere else (nor tl.num_programs), and never assigns the row variable again",
        "the body has no `return` (it would end the program, not the row)",
        "every launch's grid is a 1-tuple (or a lambda returning one)",
        "the row count is expressible with the kernel's parameters, or the grid is a plain tuple (then it is "
        "passed as n_rows)",
    };
    info_.params = {
        {"rows", ParamKind::kInt, "4", false, 2, 1024, false, {}, "rows per program (ROWS_PER_PROGRAM)"},
        {"stages", ParamKind::kInt, "0", false, 0, 8, false, {},
         "pipeline the row loop's loads: tl.range(..., num_stages=stages) (0: a plain range)"},
    };
  }
  const PassInfo& info() const override { return info_; }

  PassOutcome run(const PassContext& ctx, const PassArgs& args) const override {
    const Kernel& k = *ctx.kernel;
    std::vector<PidVar> pids = ctx.pidVars();
    if (pids.size() != 1 || pids[0].axis != 0 || ctx.programIdCalls() != 1) {
      return refuse(fmt::format("{} is not launched one program per row: it does not bind tl.program_id(0) once, "
                                "alone, at the top of its body",
                                k.name));
    }
    const PidVar& pv = pids[0];
    if (ctx.numProgramsCalls() != 0) return refuse("the kernel calls tl.num_programs; the loop would change its meaning");
    if (ctx.hasReturn()) return refuse("the kernel body has a `return`: in a loop over rows it would end the program");
    int assigns = 0;
    walk(ctx.body(), [&](const Node& n) {
      if (isType(n, "Name") && n["id"] == pv.name && n["ctx"] == "Store") ++assigns;
      return true;
    });
    if (assigns != 1) return refuse(fmt::format("'{}' is assigned again in the body", pv.name));
    for (const auto& [p, u] : ctx.facts.params) {
      if (u.pid_scaled) {
        return refuse(fmt::format("programs step by {} ({} * {}): the kernel tiles a dimension, it is not one row "
                                  "per program",
                                  p, pv.name, p));
      }
    }
    if (ctx.sites.empty()) return refuse(fmt::format("no launch of {} in this file", k.name));
    const Node& body = ctx.body();
    int index = ctx.bodyIndex(pv.stmt);
    if (index + 1 >= static_cast<int>(body.size())) return refuse("nothing follows the program id");
    if (hasMultilineString(ctx, body)) return refuse("the body holds a multi-line string that indenting would change");

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
    std::string first = ctx.freshName("first_row");
    std::string tl = ctx.tl();
    int64_t stages = args.integer("stages");
    std::string range_fn = stages > 0 ? tl + ".range" : "range";
    std::string extra = stages > 0 ? fmt::format(", num_stages={}", stages) : "";
    std::vector<std::string> lines = {
        fmt::format("# rows-per-program: each program handles {} consecutive rows", rpp),
        fmt::format("{} = {}.program_id(0) * {}", first, tl, rpp),
        fmt::format("for {} in {}({}, min({} + {}, {}){}):", pv.name, range_fn, first, first, rpp, n_rows, extra),
    };
    SourceEditor ed(ctx.text().text());
    Range pid_lines = ctx.lineRange(*pv.stmt);
    ed.replace(pid_lines, joinLines(lines, ctx.bodyIndent()));
    auto last = nodePos(body.back());
    ed.indent({pid_lines.end, ctx.lineRange(last->line, last->end_line).end}, ctx.indentUnit());
    addKernelParam(ctx, ed, rpp, ctx.constexprAnnotation());
    if (!rows_expr) addKernelParam(ctx, ed, n_rows, "");

    std::set<std::string> fn_done;
    std::set<const Node*> grids_done;
    for (const LaunchSite* site : ctx.sites) {
      if (site->has_starred) return refuse(fmt::format("a launch of {} passes *args / **kwargs", k.name));
      if (site->function.empty()) return refuse(fmt::format("{} is launched at module level", k.name));
      auto g = gridOf(ctx, *site, &why);
      if (!g) return refuse(why);
      if (g->axes.size() != 1) return refuse(fmt::format("a grid has {} axes, not 1", g->axes.size()));
      if (!rows_expr && g->lambda) return refuse("the row count depends on META (a lambda grid)");
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
        ed.replace(ctx.range(*g->expr),
                   gridText({fmt::format("{}.cdiv({}, {})", ctx.triton(), ctx.slice(*g->axes[0]), var)}, g->lambda_arg));
      }
      addLaunchKeyword(ctx, ed, *site, rpp, var);
      if (!rows_expr) addLaunchKeyword(ctx, ed, *site, n_rows, ctx.slice(*g->axes[0]));
    }
    out.applied = true;
    out.source = ed.apply();
    return out;
  }

 private:
  PassInfo info_;
};

}  // namespace

std::unique_ptr<Pass> makeRowsPerProgramPass() { return std::make_unique<RowsPerProgramPass>(); }

}  // namespace tf

// grouped-order: a 2-D grid of output tiles becomes a 1-D grid whose programs are ordered
// in groups of GROUP_M tile rows ("swizzled"), so that programs resident at the same time
// read the same rows of A and columns of B, which then come from L2 rather than HBM.
//
// Kernel: the two `pid_x = tl.program_id(axis)` statements become the grouped computation
// of the same two names; nothing else in the body changes. Launcher: the grid (A, B) becomes
// (A * B,), and grid literals that repeat a tile size read META[...] (the grid becomes a
// lambda) so that retiling keeps it right; GROUP_M is passed at every launch.
#include <fmt/format.h>

#include "transform/pass_context.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {

class GroupedOrderPass : public Pass {
 public:
  GroupedOrderPass() {
    info_.name = "grouped-order";
    info_.summary = "Grouped (swizzled) program order for 2-D tiled kernels: a 1-D grid walked in groups of "
                    "GROUP_M tile rows, for L2 reuse.";
    info_.preconditions = {
        "the kernel binds `pid_m = tl.program_id(0)` and `pid_n = tl.program_id(1)` at the top of its body and "
        "calls tl.program_id nowhere else (and not tl.num_programs)",
        "each of the two program ids steps by one constexpr tile size (pid_m * BLOCK_M)",
        "the sizes the two axes span are kernel parameters, found from the grid (triton.cdiv(M, ...)) or the "
        "masks (offs_m < M), or given as m= / n=",
        "every launch's grid is a 2-tuple (or a lambda returning one)",
    };
    info_.params = {
        {"group", PassParamKind::kInt, "8", false, 1, 64, false, {}, "tile rows per group (GROUP_M)"},
        {"m", PassParamKind::kNames, "", false, 0, 0, false, {}, "the kernel parameter axis 0 spans (default: inferred)"},
        {"n", PassParamKind::kNames, "", false, 0, 0, false, {}, "the kernel parameter axis 1 spans (default: inferred)"},
    };
    for (auto& p : info_.params) {
      if (p.name == "group") p.search = {"4", "8", "16"};
    }
  }
  const PassInfo& info() const override { return info_; }

  PassOutcome run(const PassContext& ctx, const PassArgs& args) const override {
    const Kernel& k = *ctx.kernel;
    std::vector<PidVar> pids = ctx.pidVars();
    const PidVar* pm = nullptr;
    const PidVar* pn = nullptr;
    for (const auto& p : pids) {
      if (p.axis == 0 && !pm) pm = &p;
      else if (p.axis == 1 && !pn) pn = &p;
    }
    if (!pm || !pn) {
      return refuse(fmt::format("{} does not bind both tl.program_id(0) and tl.program_id(1) at the top of its body "
                                "(grouped order needs a 2-D grid of tiles)",
                                k.name));
    }
    if (ctx.programIdCalls() != 2 || ctx.numProgramsCalls() != 0) {
      return refuse("the kernel calls tl.program_id / tl.num_programs elsewhere too; the new order would not reach them");
    }
    std::string tile_m = axisTile(ctx, 0), tile_n = axisTile(ctx, 1);
    if (tile_m.empty() || tile_n.empty()) {
      return refuse(fmt::format("{} does not step by a single constexpr tile size ({} * BLOCK)",
                                tile_m.empty() ? pm->name : pn->name, tile_m.empty() ? pm->name : pn->name));
    }
    std::string m = args.has("m") ? args.names("m")[0] : axisExtent(ctx, 0);
    std::string n = args.has("n") ? args.names("n")[0] : axisExtent(ctx, 1);
    for (const auto& [axis, name] : {std::pair{"0", m}, std::pair{"1", n}}) {
      if (name.empty()) {
        return refuse(fmt::format("cannot tell which kernel parameter grid axis {} spans; give {}=PARAM", axis,
                                  std::string(axis) == "0" ? "m" : "n"));
      }
      const Param* p = k.param(name);
      if (!p || p->is_constexpr) return refuse(fmt::format("'{}' is not a runtime parameter of {}", name, k.name));
    }
    if (ctx.sites.empty()) return refuse(fmt::format("no launch of {} in this file", k.name));
    Range lm = ctx.lineRange(*pm->stmt), ln = ctx.lineRange(*pn->stmt);
    if (lm.begin < ln.end && ln.begin < lm.end) return refuse("the two program ids are bound on one line");

    SourceEditor ed(ctx.text().text());
    std::string group = ctx.freshName("GROUP_M");
    std::string pid = ctx.freshName("pid"), num_m = ctx.freshName("num_pid_m"), num_n = ctx.freshName("num_pid_n"),
                in_group = ctx.freshName("num_pid_in_group"), group_id = ctx.freshName("group_id"),
                first_m = ctx.freshName("first_pid_m"), size_m = ctx.freshName("group_size_m");
    std::string tl = ctx.tl();
    std::vector<std::string> lines = {
        fmt::format("# grouped-order: one program per output tile on a 1-D grid, walked in groups of {}", group),
        "# tile rows so that programs running together share tiles of the inputs in L2",
        fmt::format("{} = {}.program_id(0)", pid, tl),
        fmt::format("{} = {}.cdiv({}, {})", num_m, tl, m, tile_m),
        fmt::format("{} = {}.cdiv({}, {})", num_n, tl, n, tile_n),
        fmt::format("{} = {} * {}", in_group, group, num_n),
        fmt::format("{} = {} // {}", group_id, pid, in_group),
        fmt::format("{} = {} * {}", first_m, group_id, group),
        fmt::format("{} = min({} - {}, {})", size_m, num_m, first_m, group),
        fmt::format("{} = {} + (({} % {}) % {})", pm->name, first_m, pid, in_group, size_m),
        fmt::format("{} = ({} % {}) // {}", pn->name, pid, in_group, size_m),
    };
    const Node* first = ctx.bodyIndex(pm->stmt) < ctx.bodyIndex(pn->stmt) ? pm->stmt : pn->stmt;
    const Node* second = first == pm->stmt ? pn->stmt : pm->stmt;
    ed.replace(ctx.lineRange(*first), joinLines(lines, ctx.bodyIndent()));
    ed.replace(ctx.lineRange(*second), "");
    addKernelParam(ctx, ed, group, ctx.constexprAnnotation());

    std::vector<TunableSet> sets = kernelTunables(ctx);
    std::set<const Node*> grids_done;
    for (const LaunchSite* site : ctx.sites) {
      if (std::string why; hidesArguments(*ctx.ir, *site, k, &why)) return refuse(why);
      std::string why;
      auto g = gridOf(ctx, *site, &why);
      if (!g) return refuse(why);
      if (g->axes.size() != 2) return refuse(fmt::format("a grid has {} axes, not 2", g->axes.size()));
      if (grids_done.insert(g->expr).second) {
        std::string meta = g->lambda ? g->lambda_arg : "META";
        TextEdits mirrors = metaMirrors(ctx, sets, *site, {tile_m, tile_n}, meta);
        std::string a = atomText(ctx, *g->axes[0], sliceWith(ctx, *g->axes[0], mirrors));
        std::string b = atomText(ctx, *g->axes[1], sliceWith(ctx, *g->axes[1], mirrors));
        bool lambda = g->lambda || !mirrors.empty();
        ed.replace(ctx.range(*g->expr), gridTextFor(*g, {a + " * " + b}, lambda ? meta : ""));
      }
      addLaunchKeyword(ctx, ed, *site, group, args.text("group"));
    }
    PassOutcome out;
    out.applied = true;
    out.source = ed.apply();
    return out;
  }

 private:
  PassInfo info_;
};

}  // namespace

std::unique_ptr<Pass> makeGroupedOrderPass() { return std::make_unique<GroupedOrderPass>(); }

}  // namespace tf

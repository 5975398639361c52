// persistent: a grid of about the number of SMs (times `programs_per_sm`), each program
// looping over the tiles the original grid had one program for.
//
// Kernel: from the program-id statement on, the body moves into
//   for tile_id in range(tl.program_id(0), <tiles>, tl.num_programs(0)):
// (a 1-D kernel loops with its own pid name; a 2-D one recomputes pid_m / pid_n from tile_id,
// row-major). <tiles> is the original grid written in the kernel's terms (its parameters),
// or, failing that, a new `num_tiles` parameter the launcher passes. Launcher: the SM count
// is read once before the grid, and the grid becomes (min(num_sms, <tiles>),).
// `flatten=1` / `warp_specialize=1` write the tile loop as tl.range(..., flatten=True,
// warp_specialize=True). Tensor descriptors that read only the kernel's parameters (what
// tensor-cores makes) move above the tile loop: made once per program, not once per tile.
#include <fmt/format.h>

#include "transform/pass_context.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {

class PersistentPass : public Pass {
 public:
  PersistentPass() {
    info_.name = "persistent";
    info_.summary = "A grid of about one program per SM (times occupancy), each program looping over the tiles.";
    info_.preconditions = {
        "the kernel binds its program ids at the top of its body: `pid = tl.program_id(0)` (1-D) or "
        "`pid_m = tl.program_id(0)` and `pid_n = tl.program_id(1)` (2-D), and calls tl.program_id nowhere else "
        "(nor tl.num_programs)",
        "the body has no `return` (it would end the program, not the tile)",
        "every launch's grid is a tuple (or a lambda returning one) with one axis per program id",
        "the tile count is expressible with the kernel's parameters, or the grid is a plain tuple (then it is "
        "passed as num_tiles)",
    };
    info_.params = {
        {"programs_per_sm", PassParamKind::kInt, "1", false, 1, 32, false, {}, "programs per SM (occupancy)"},
        {"flatten", PassParamKind::kInt, "0", false, 0, 1, false, {},
         "1: tl.range(..., flatten=True), so the compiler pipelines across tiles"},
        {"warp_specialize", PassParamKind::kInt, "0", false, 0, 1, false, {},
         "1: tl.range(..., warp_specialize=True), producer and consumer warps (Hopper and later)"},
    };
    // Measured on the H200 (fp16 8192x4096x4096, persistent over TMA descriptors, 128x256x64):
    // 0.4076 ms as a plain loop, 0.4015 ms flattened and warp-specialized (cuBLAS 0.3962).
    // Whether either pays depends on the kernel: the loop measures them.
    for (auto& p : info_.params) {
      if (p.name == "programs_per_sm") p.search = {"1", "2", "4"};
      if (p.name == "flatten" || p.name == "warp_specialize") p.search = {"0", "1"};
    }
  }
  const PassInfo& info() const override { return info_; }

  PassOutcome run(const PassContext& ctx, const PassArgs& args) const override {
    const Kernel& k = *ctx.kernel;
    std::vector<PidVar> pids = ctx.pidVars();
    const PidVar* p0 = nullptr;
    const PidVar* p1 = nullptr;
    for (const auto& p : pids) {
      if (p.axis == 0 && !p0) p0 = &p;
      else if (p.axis == 1 && !p1) p1 = &p;
    }
    int dims = p1 ? 2 : 1;
    if (!p0 || ctx.programIdCalls() != dims || (pids.size() != static_cast<size_t>(dims))) {
      return refuse(fmt::format("{} does not bind its program ids (tl.program_id(0)[, tl.program_id(1)]) once each at "
                                "the top of its body and nowhere else",
                                k.name));
    }
    if (ctx.numProgramsCalls() != 0) return refuse("the kernel calls tl.num_programs; the loop would change its meaning");
    if (ctx.hasReturn()) return refuse("the kernel body has a `return`: in a loop over tiles it would end the program");
    if (ctx.sites.empty()) return refuse(fmt::format("no launch of {} in this file", k.name));
    const Node* first = p0->stmt;
    const Node* second = p1 ? p1->stmt : nullptr;
    if (second && ctx.bodyIndex(second) < ctx.bodyIndex(first)) std::swap(first, second);
    const Node& body = ctx.body();
    int first_index = ctx.bodyIndex(first);
    if (first_index + 1 >= static_cast<int>(body.size())) return refuse("nothing follows the program id");
    if (hasMultilineString(ctx, body)) return refuse("the body holds a multi-line string that indenting would change");

    std::vector<TunableSet> sets = kernelTunables(ctx);
    std::vector<std::string> tiles;
    bool tiles_param = false;
    for (int axis = 0; axis < dims; ++axis) {
      std::string why;
      auto t = gridAxisInKernel(ctx, sets, axis, &why);
      if (!t && dims == 2) {
        std::string extent = axisExtent(ctx, axis), tile = axisTile(ctx, axis);
        if (!extent.empty() && !tile.empty()) t = fmt::format("{}.cdiv({}, {})", ctx.tl(), extent, tile);
      }
      if (!t && dims == 1) {
        tiles_param = true;
        t = ctx.freshName("num_tiles");
      }
      if (!t) return refuse(why);
      tiles.push_back(*t);
    }
    std::string tl = ctx.tl();
    bool flatten = args.integer("flatten") != 0, ws = args.integer("warp_specialize") != 0;
    std::string range_open = flatten || ws ? tl + ".range(" : "range(";
    std::string range_close = std::string(flatten ? ", flatten=True" : "") + (ws ? ", warp_specialize=True" : "") + ")";
    std::string u = ctx.indentUnit();
    int ppsm = static_cast<int>(args.integer("programs_per_sm"));
    SourceEditor ed(ctx.text().text());
    std::string hoisted = hoistDescriptors(ctx, ed, first_index);
    std::vector<std::string> lines = {
        fmt::format("# persistent: about {} per SM; each loops over tiles, stepping by the grid size",
                    ppsm == 1 ? "one program" : fmt::format("{} programs", ppsm))};
    LoopEntryValues entry = loopEntryValues(ctx, first_index + 1);
    lines.insert(lines.end(), entry.saved.begin(), entry.saved.end());
    if (dims == 1) {
      lines.push_back(fmt::format("for {} in {}{}.program_id(0), {}, {}.num_programs(0){}:", p0->name, range_open, tl,
                                  tiles[0], tl, range_close));
    } else {
      std::string nm = ctx.freshName("num_pid_m"), nn = ctx.freshName("num_pid_n"), tid = ctx.freshName("tile_id");
      lines.push_back(fmt::format("{} = {}", nm, tiles[0]));
      lines.push_back(fmt::format("{} = {}", nn, tiles[1]));
      lines.push_back(fmt::format("for {} in {}{}.program_id(0), {} * {}, {}.num_programs(0){}:", tid, range_open, tl,
                                  nm, nn, tl, range_close));
      lines.push_back(fmt::format("{}{} = {} // {}", u, p0->name, tid, nn));
      lines.push_back(fmt::format("{}{} = {} % {}", u, p1->name, tid, nn));
    }
    for (const auto& r : entry.reset) lines.push_back(u + r);
    Range first_lines = ctx.lineRange(*first);
    ed.replace(first_lines, hoisted + joinLines(lines, ctx.bodyIndent()));
    if (second) ed.replace(ctx.lineRange(*second), "");
    auto last = nodePos(body.back());
    ed.indent({first_lines.end, ctx.lineRange(last->line, last->end_line).end}, u);
    PassOutcome out;
    if (tiles_param) {
      addKernelParam(ctx, ed, tiles[0], "");
      out.param_types[tiles[0]] = "i32";
    }

    // Launchers: the SM count once per function, then the grid.
    std::set<std::string> sms_done;
    std::set<const Node*> grids_done;
    std::map<std::string, std::string> sms_name;
    for (const LaunchSite* site : ctx.sites) {
      if (std::string why; hidesArguments(*ctx.ir, *site, k, &why)) return refuse(why);
      if (site->function.empty()) return refuse(fmt::format("{} is launched at module level", k.name));
      std::string why;
      auto g = gridOf(ctx, *site, &why);
      if (!g) return refuse(why);
      if (g->axes.size() != static_cast<size_t>(dims)) {
        return refuse(fmt::format("a grid has {} axes but the kernel uses {} program ids", g->axes.size(), dims));
      }
      if (tiles_param && g->lambda) {
        return refuse("the tile count depends on META (a lambda grid) and cannot be written with the kernel's "
                      "parameters");
      }
      const FunctionInfo& fn = ctx.ir->functions.at(site->function);
      if (!sms_name.count(site->function)) {
        std::string name = "num_sms";
        for (int i = 2; fn.assignments.count(name) || std::find(fn.params.begin(), fn.params.end(), name) != fn.params.end(); ++i) {
          name = fmt::format("num_sms_{}", i);
        }
        sms_name[site->function] = name;
        // Before the statement that builds the grid (or launches with it inline).
        const Node* anchor = g->assign_stmt ? g->assign_stmt : site->call;
        int line = nodePos(*anchor)->line;
        ed.insert(ctx.text().offset(line, 0),
                  fmt::format("{}{} = {}\n", ctx.text().indentOf(line), name, smCountExpression(ctx)));
      }
      std::string total;
      for (const Node* a : g->axes) {
        total += (total.empty() ? "" : " * ") + (g->axes.size() == 1 ? ctx.slice(*a) : atomText(ctx, *a, ctx.slice(*a)));
      }
      if (grids_done.insert(g->expr).second) {
        std::string sms = sms_name[site->function];
        if (ppsm > 1) sms = fmt::format("{} * {}", sms, ppsm);
        ed.replace(ctx.range(*g->expr), gridTextFor(*g, {fmt::format("min({}, {})", sms, total)}, g->lambda_arg));
      }
      if (tiles_param) addLaunchKeyword(ctx, ed, *site, tiles[0], ctx.slice(*g->axes[0]));
    }
    out.applied = true;
    out.source = ed.apply();
    return out;
  }

 private:
  // Removes the top-level `x = tl.make_tensor_descriptor(...)` statements after the program ids
  // whose arguments are kernel parameters (with the comment lines right above them) and
  // returns their text, to go above the tile loop.
  static std::string hoistDescriptors(const PassContext& ctx, SourceEditor& ed, int first_index) {
    const Node& body = ctx.body();
    std::string out;
    for (size_t i = static_cast<size_t>(first_index) + 1; i < body.size(); ++i) {
      const Node& s = body[i];
      if (!isType(s, "Assign") || s["targets"].size() != 1 || !isType(s["targets"][0], "Name")) continue;
      // A descriptor, or two chosen by a constexpr flag (tensor-cores' B_K_MAJOR).
      const Node& v = s["value"];
      bool made = ctx.isTlCall(v, "make_tensor_descriptor") ||
                  (isType(v, "IfExp") && ctx.isTlCall(v["body"], "make_tensor_descriptor") &&
                   ctx.isTlCall(v["orelse"], "make_tensor_descriptor"));
      if (!made) continue;
      bool params = true;
      auto reads = [&](const Node& e) {
        forEachName(e, [&](const Node& n) { params = params && ctx.kernel->param(n["id"].get<std::string>()); });
      };
      auto callReads = [&](const Node& call) {
        for (const auto& a : call["args"]) reads(a);
        for (const auto& kw : call["keywords"]) reads(kw["value"]);
      };
      if (isType(v, "IfExp")) {
        reads(v["test"]);
        callReads(v["body"]);
        callReads(v["orelse"]);
      } else {
        callReads(v);
      }
      std::string name = s["targets"][0]["id"].get<std::string>();
      int binds = 0;
      walk(body, [&](const Node& n) {
        if (isType(n, "Name") && n["id"] == name && n["ctx"] == "Store") ++binds;
        return true;
      });
      if (!params || binds != 1) continue;
      int from = nodePos(s)->line;
      int prev_end = nodePos(body[i - 1])->end_line;
      auto comment = [&](int line) {
        std::string_view l = ctx.text().line(line);
        size_t c = l.find_first_not_of(" \t");
        return c != std::string_view::npos && l[c] == '#';
      };
      while (from - 1 > prev_end && comment(from - 1)) --from;
      Range r = ctx.lineRange(from, nodePos(s)->end_line);
      out += std::string(ctx.text().text().substr(r.begin, r.end - r.begin));
      ed.replace(r, "");
    }
    return out;
  }

  PassInfo info_;
};

}  // namespace

std::unique_ptr<Pass> makePersistentPass() { return std::make_unique<PersistentPass>(); }

}  // namespace tf

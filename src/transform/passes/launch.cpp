// launch: the launch options num_warps, num_stages, num_ctas and maxnreg, written at every
// launch of the kernel (replacing the value as written, or added to the call). An autotuned
// kernel's configs hold its options: num_ctas and maxnreg are written into each config of a
// literal list (num_warps and num_stages there are the search's, through the autotune pass).
#include <fmt/format.h>

#include "transform/pass_context.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {

class LaunchPass : public Pass {
 public:
  LaunchPass() {
    info_.name = "launch";
    info_.summary = "Set the launch options num_warps, num_stages, num_ctas, maxnreg at every launch of the kernel.";
    info_.preconditions = {
        "the kernel is launched in this file and is not autotuned (its configs hold the options: use autotune); "
        "an autotuned kernel with a literal config list takes num_ctas and maxnreg in each config",
        "num_stages: the kernel has a loop that loads (software pipelining has something to overlap)",
        "an option set through a variable is written where the variable is bound once, or at the launch",
    };
    info_.params = {
        {"num_warps", PassParamKind::kInt, "", false, 1, 32, true, {}, "warps per program"},
        {"num_stages", PassParamKind::kInt, "", false, 1, 8, false, {}, "software pipelining stages"},
        {"num_ctas", PassParamKind::kInt, "", false, 1, 8, true, {}, "programs per cluster (sm_90)"},
        {"maxnreg", PassParamKind::kInt, "", false, 16, 255, false, {}, "register limit per thread"},
    };
  }
  const PassInfo& info() const override { return info_; }

  PassOutcome run(const PassContext& ctx, const PassArgs& args) const override {
    if (args.all().empty()) return refuse("launch needs at least one of num_warps, num_stages, num_ctas, maxnreg");
    if (ctx.sites.empty()) return refuse(fmt::format("no launch of {} in this file", ctx.kernel->name));
    if (ctx.kernel->autotune) return intoConfigs(ctx, args);
    SourceEditor ed(ctx.text().text());
    std::vector<TunableSet> sets = kernelTunables(ctx);
    for (const char* option : {"num_warps", "num_stages"}) {
      if (!args.has(option)) continue;
      int64_t value = args.integer(option);
      int found = 0;
      for (const auto& set : sets) {
        for (const auto& t : set.items) {
          if (t.param != option) continue;
          ++found;
          if (!t.tunable) return refuse(fmt::format("{}: {}", option, t.note));
          setTunable(ed, t, value);
        }
      }
      if (found == 0) return refuse(fmt::format("{}: no launch of {} inside a function", option, ctx.kernel->name));
    }
    for (const char* option : {"num_ctas", "maxnreg"}) {
      if (!args.has(option)) continue;
      std::string value = args.text(option);
      for (const LaunchSite* site : ctx.sites) {
        auto it = site->options.find(option);
        if (it != site->options.end()) {
          ed.replace(ctx.range(*it->second.expr), value);
        } else if (unpackedKeys(*ctx.ir, *site).count(option)) {
          return refuse(fmt::format("{}: set through a dict the launch unpacks (**kwargs): added at the launch, it "
                                    "would be given twice",
                                    option));
        } else {
          addLaunchKeyword(ctx, ed, *site, option, value);
        }
      }
    }
    PassOutcome out;
    out.applied = true;
    out.source = ed.apply();
    if (out.source == ctx.text().text()) return refuse("the options given are the options as written");
    return out;
  }

 private:
  // num_ctas / maxnreg written into each triton.Config of an autotuned kernel's literal list.
  static PassOutcome intoConfigs(const PassContext& ctx, const PassArgs& args) {
    const AutotuneInfo& at = *ctx.kernel->autotune;
    if (args.has("num_warps") || args.has("num_stages")) {
      return refuse(fmt::format("{} is autotuned: its configs set num_warps and num_stages (use the autotune pass)",
                                ctx.kernel->name));
    }
    const char* what = args.has("num_ctas") ? "num_ctas" : "maxnreg";
    if (at.configs && isType(*at.configs, "Name")) {
      return refuse(fmt::format("{}'s configs are the module's list {}, which other kernels may share: {} is not "
                                "written into it",
                                ctx.kernel->name, (*at.configs)["id"].get<std::string>(), what));
    }
    if (!at.configsWrittenHere()) {
      return refuse(fmt::format("{} is autotuned with configs that are not a literal list of triton.Config: no list "
                                "to write {} into",
                                ctx.kernel->name, what));
    }
    SourceEditor ed(ctx.text().text());
    for (const auto& config : (*at.configs)["elts"]) {
      for (const char* option : {"num_ctas", "maxnreg"}) {
        if (!args.has(option)) continue;
        std::string value = args.text(option);
        if (const Node* given = keywordArg(config, option)) ed.replace(ctx.range(*given), value);
        else addCallKeyword(ctx, ed, config, fmt::format("{}={}", option, value));
      }
    }
    PassOutcome out;
    out.applied = true;
    out.source = ed.apply();
    if (out.source == ctx.text().text()) return refuse("the options given are the options as written");
    out.notes.push_back(fmt::format("written into each of {}'s {} autotune config(s)", ctx.kernel->name,
                                    (*at.configs)["elts"].size()));
    return out;
  }

  PassInfo info_;
};

}  // namespace

std::unique_ptr<Pass> makeLaunchPass() { return std::make_unique<LaunchPass>(); }

}  // namespace tf

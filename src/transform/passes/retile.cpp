// retile: new values for constexpr tile / block sizes, written where the launcher writes
// them (a literal, a launcher variable, a module constant, the kernel's default), with the
// grid literals that repeat them, so that the grid keeps covering the problem.
#include <fmt/format.h>

#include "transform/pass_context.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {

class RetilePass : public Pass {
 public:
  RetilePass() {
    info_.name = "retile";
    info_.summary = "Change constexpr tile / block sizes, keeping the grid and the launcher consistent.";
    info_.preconditions = {
        "the kernel is launched in this file, and each named parameter is a tile or block size the launcher "
        "writes in one place (a literal, a variable, a module constant or the kernel's default)",
        "the parameter is not chosen by @triton.autotune (use the autotune pass)",
        "a tile extent (tl.arange, a tile shape) stays a power of two; a dot tile stays >= 16",
        "a block that spans a whole dimension (no loop or program steps by it) does not shrink",
    };
    info_.extra_keys = true;
    info_.extra_keys_help = "PARAM=VALUE for each constexpr parameter to change (e.g. BLOCK_M=128,BLOCK_N=64)";
  }
  const PassInfo& info() const override { return info_; }

  PassOutcome run(const PassContext& ctx, const PassArgs& args) const override {
    if (args.all().empty()) return refuse("retile needs at least one PARAM=VALUE");
    if (ctx.sites.empty()) return refuse(fmt::format("no launch of {} in this file", ctx.kernel->name));
    std::vector<TunableSet> sets = kernelTunables(ctx);
    if (sets.empty()) return refuse(fmt::format("{} is only launched at module level", ctx.kernel->name));
    SourceEditor ed(ctx.text().text());
    std::vector<std::string> notes;
    for (const auto& [param, text] : args.all()) {
      const Param* p = ctx.kernel->param(param);
      if (!p || !p->is_constexpr) {
        return refuse(fmt::format("'{}' is not a constexpr parameter of {}", param, ctx.kernel->name));
      }
      int64_t value = 0;
      try {
        value = std::stoll(text);
      } catch (...) {
        return refuse(fmt::format("{}={} is not an integer", param, text));
      }
      if (value < 1) return refuse(fmt::format("{}={} must be positive", param, value));
      auto u = ctx.facts.params.find(param);
      bool extent = u != ctx.facts.params.end() && u->second.tile_extent;
      if (extent && (value & (value - 1)) != 0) {
        return refuse(fmt::format("{} is a tile extent (tl.arange, a tile shape): {} is not a power of two", param, value));
      }
      if (u != ctx.facts.params.end() && !u->second.dot_role.empty() && value < 16) {
        return refuse(fmt::format("{} is a tl.dot {} tile: it must be at least 16", param, u->second.dot_role));
      }
      int found = 0;
      for (const auto& set : sets) {
        for (const auto& t : set.items) {
          if (t.param != param) continue;
          ++found;
          if (t.origin == TunableOrigin::kAutotune) {
            return refuse(fmt::format("{} is chosen by @triton.autotune; use the autotune pass", param));
          }
          if (!t.tunable) return refuse(fmt::format("{} cannot be retiled: {}", param, t.note));
          if (t.covers_dimension && t.value && value < *t.value) {
            return refuse(fmt::format("{} spans a whole dimension (no loop or program steps by it): {} < {} would "
                                      "leave part of it out (the column-loop pass makes it a loop)",
                                      param, value, *t.value));
          }
          setTunable(ed, t, value);
        }
      }
      if (found == 0) return refuse(fmt::format("{} is not a tunable of the launches of {}", param, ctx.kernel->name));
    }
    PassOutcome out;
    out.applied = true;
    out.source = ed.apply();
    if (out.source == ctx.text().text()) return refuse("the values given are the values as written");
    out.notes = std::move(notes);
    return out;
  }

 private:
  PassInfo info_;
};

}  // namespace

std::unique_ptr<Pass> makeRetilePass() { return std::make_unique<RetilePass>(); }

}  // namespace tf

// vectorize: more elements per thread for 1-D kernels, so that each thread moves whole
// 16-byte vectors and has several loads in flight.
//
// The elements a thread handles are BLOCK / (32 * num_warps). An elementwise kernel (its
// programs step by BLOCK) gets BLOCK = elems * 32 * num_warps; a row-wise kernel whose BLOCK
// spans the row (it cannot change) gets num_warps = BLOCK // (32 * elems), clamped to 1..16,
// written as an expression of the launcher's BLOCK.
#include <fmt/format.h>

#include "transform/pass_context.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {

class VectorizePass : public Pass {
 public:
  VectorizePass() {
    info_.name = "vectorize";
    info_.summary = "More elements per thread for elementwise and row-wise kernels: BLOCK (elementwise) or "
                    "num_warps (row-wise) so that each thread handles `elems` consecutive elements.";
    info_.preconditions = {
        "a 1-D kernel: one constexpr block size, used as tl.arange(0, BLOCK); no tl.dot",
        "elementwise (programs step by BLOCK): BLOCK and num_warps are tunables the launcher writes (not "
        "autotuned); row-wise (BLOCK spans the row): num_warps is not autotuned",
    };
    info_.params = {
        {"elems", PassParamKind::kInt, "", false, 1, 64, true, {},
         "elements per thread (default: 16 bytes' worth from the signature's pointer types, else 4)"},
    };
  }
  const PassInfo& info() const override { return info_; }

  PassOutcome run(const PassContext& ctx, const PassArgs& args) const override {
    const Kernel& k = *ctx.kernel;
    if (!ctx.facts.dots.empty()) return refuse("the kernel has a tl.dot: vectorize handles 1-D kernels");
    std::string block;
    for (const auto& [p, u] : ctx.facts.params) {
      if (!u.tile_extent) continue;
      if (!block.empty()) return refuse("more than one constexpr tile extent: vectorize handles 1-D kernels");
      block = p;
    }
    if (block.empty()) return refuse(fmt::format("{} has no constexpr block (tl.arange(0, BLOCK))", k.name));
    if (k.autotune) return refuse(fmt::format("{} is autotuned: its configs set BLOCK and num_warps", k.name));
    if (ctx.sites.empty()) return refuse(fmt::format("no launch of {} in this file", k.name));
    int64_t elems = args.has("elems") ? args.integer("elems") : defaultElems(ctx);
    const ParamUsage& u = ctx.facts.params.at(block);
    bool elementwise = u.pid_scaled && !u.loop_stepped;
    bool rowwise = !u.pid_scaled && !u.loop_stepped;
    if (!elementwise && !rowwise) return refuse(fmt::format("a loop steps by {}: neither elementwise nor one row per block", block));

    SourceEditor ed(ctx.text().text());
    PassOutcome out;
    std::vector<TunableSet> sets = kernelTunables(ctx);
    for (const auto& set : sets) {
      const Tunable* tb = nullptr;
      const Tunable* tw = nullptr;
      for (const auto& t : set.items) {
        if (t.param == block && t.id.find('#') == std::string::npos) tb = &t;
        if (t.param == "num_warps" && t.id.find('#') == std::string::npos) tw = &t;
      }
      if (!tb || !tw) return refuse("the launch's BLOCK or num_warps was not found");
      if (elementwise) {
        if (!tb->tunable) return refuse(fmt::format("{}: {}", block, tb->note));
        if (!tw->value) return refuse("num_warps is not a literal the block size can follow");
        int64_t value = elems * 32 * *tw->value;
        if (tb->value && *tb->value == value) return refuse(fmt::format("{} is {} already", block, value));
        setTunable(ed, *tb, value);
        out.notes.push_back(fmt::format("{} = {} elements x 32 threads x {} warps = {}", block, elems, *tw->value, value));
      } else {
        if (!tw->tunable) return refuse(fmt::format("num_warps: {}", tw->note));
        const LaunchSite& site = ctx.ir->launches[static_cast<size_t>(tb->site < 0 ? tw->site : tb->site)];
        const Node* arg = launchArg(site, block);
        std::string btext = arg ? ctx.slice(*arg) : (tb->value ? std::to_string(*tb->value) : "");
        if (btext.empty()) return refuse(fmt::format("the launch does not pass {}", block));
        std::string expr = fmt::format("max(1, min(16, {} // {}))", atomText(ctx, arg ? *arg : Node(), btext), 32 * elems);
        if (tb->value) {
          int64_t w = std::max<int64_t>(1, std::min<int64_t>(16, *tb->value / (32 * elems)));
          expr = std::to_string(w);
        }
        if (tw->origin == TunableOrigin::kAbsentOption) {
          ed.insert(tw->target.begin, tw->insert_prefix + expr);
        } else {
          ed.replace(tw->target, expr);
        }
        out.notes.push_back(fmt::format("num_warps follows {}: {} elements per thread", block, elems));
      }
    }
    out.applied = true;
    out.source = ed.apply();
    if (out.source == ctx.text().text()) return refuse("nothing to change");
    return out;
  }

 private:
  // 16 bytes of the widest element the kernel loads or stores (by the signature), else 4.
  static int64_t defaultElems(const PassContext& ctx) {
    int bytes = 0;
    for (const auto& [p, v] : ctx.signature) {
      if (!v.is_string()) continue;
      std::string t = v.get<std::string>();
      if (t.rfind("*", 0) != 0) continue;
      int b = t.find("64") != std::string::npos ? 8 : t.find("32") != std::string::npos ? 4
            : t.find("16") != std::string::npos ? 2 : t.find("8") != std::string::npos ? 1 : 4;
      bytes = std::max(bytes, b);
    }
    return bytes == 0 ? 4 : 16 / bytes;
  }

  PassInfo info_;
};

}  // namespace

std::unique_ptr<Pass> makeVectorizePass() { return std::make_unique<VectorizePass>(); }

}  // namespace tf

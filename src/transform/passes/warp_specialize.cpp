// warp-specialize: each loop whose body holds a tl.dot fed by tensor-descriptor loads becomes
// tl.range(..., warp_specialize=True): Triton splits the loop between producer warps, which
// issue the TMA loads, and consumer warps, which run the MMAs, so that the loads of the next
// steps overlap the math of this one without the software pipeliner's registers (Hopper and
// later; Triton 3.4 and later). The launches get num_warps=4 (`num_warps` parameter): the
// warp groups Triton adds are sized from it, and with other counts it adds none.
//
//   for k0 in range(0, K, BLOCK_K):              for k0 in tl.range(0, K, BLOCK_K, warp_specialize=True):
//       a = a_desc.load([off_m, k0])      ->         a = a_desc.load([off_m, k0])
//       b = b_desc.load([k0, off_n])                 b = b_desc.load([k0, off_n])
//       acc += tl.dot(a, b)                          acc += tl.dot(a, b)
//
// Why it is exact: the option changes how the compiler schedules the loop, never what an
// iteration computes nor the order of the accumulation.
//
// Compiled for sm_90 with Triton 3.6 on the CPU (2026-12-05): a matmul's K loop over
// descriptors at 4 warps becomes 12 warps with setmaxnreg (the groups are there); at 8 warps it
// compiles to 8 warps without them. The same loop over pointers (tl.load) fails to compile at 4
// warps (PassManager::run failed; Triton 3.4's crash of triton-lang/triton#9728), and so does an
// attention loop over descriptors with its two dots. Both are refused unless `force=1`: a
// pointer loop gets descriptor loads from tensor-cores first, and the loop proposes this pass
// on the base that move makes. Loops already given warp_specialize, tl.static_range loops and
// loops inside another warp-specialized loop are left as written.
#include <fmt/format.h>

#include "transform/pass_context.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {

// What a loop's body does, not counting the bodies of functions defined in it.
struct LoopBody {
  int dots = 0;              // tl.dot / tl.dot_scaled directly in the body (not in an inner loop)
  int descriptor_loads = 0;  // desc.load(...), tl.load_tensor_descriptor(...), anywhere inside
  int pointer_loads = 0;     // tl.load(...), anywhere inside
};

class WarpSpecializePass : public Pass {
 public:
  WarpSpecializePass() {
    info_.name = "warp-specialize";
    info_.summary = "A loop around a tl.dot fed by tensor descriptors as tl.range(..., warp_specialize=True): "
                    "producer warps load, consumer warps multiply (Hopper and later)";
    info_.preconditions = {
        "a loop over range(...) or tl.range(...) holds a tl.dot in its own body (not only in an inner loop)",
        "the loop's loads go through tensor descriptors (desc.load, tl.load_tensor_descriptor), and it holds one "
        "dot: a loop that loads through pointers, or holds two dots (attention), is refused unless force=1 (Triton "
        "3.6 fails to compile either warp-specialized for sm_90)",
        "the loop and the loops around it give no warp_specialize of their own",
    };
    info_.params = {
        {"num_warps", PassParamKind::kInt, "4", false, 0, 32, false, {},
         "num_warps written at the kernel's launches (0: as written); warp specialization sizes its groups from 4"},
        {"force", PassParamKind::kInt, "0", false, 0, 1, false, {},
         "1: also a loop that loads through pointers or holds two dots (Triton 3.6 fails to compile them for sm_90)"},
    };
  }
  const PassInfo& info() const override { return info_; }

  PassOutcome run(const PassContext& ctx, const PassArgs& args) const override {
    const bool force = args.integer("force") != 0;
    SourceEditor ed(ctx.text().text());
    int rewritten = 0, with_pointers = 0, two_dots = 0, static_loops = 0, authored = 0, no_descriptor = 0;
    std::vector<int> lines;
    // `inside_ws`: a loop around this one is (or becomes) warp-specialized.
    std::function<void(const Node&, bool)> visit = [&](const Node& stmts, bool inside_ws) {
      for (const auto& st : stmts) {
        if (isType(st, "FunctionDef") || isType(st, "Lambda")) continue;
        bool ws_here = false;
        if (isType(st, "For") && isRangeCall(ctx, st["iter"])) {
          const Node& iter = st["iter"];
          const Node* given = keywordArg(iter, "warp_specialize");
          LoopBody b = bodyOf(ctx, st);
          if (given) {
            ws_here = true;
            if (b.dots > 0) ++authored;
          } else if (b.dots > 0 && !inside_ws) {
            if (ctx.isTlCall(iter, "static_range")) {
              ++static_loops;
            } else if (b.pointer_loads > 0 && !force) {
              ++with_pointers;
            } else if (b.dots > 1 && !force) {
              ++two_dots;
            } else if (b.descriptor_loads == 0 && !force) {
              ++no_descriptor;
            } else {
              if (!ctx.isTlCall(iter, "range")) ed.replace(ctx.range(iter["func"]), ctx.tl() + ".range");
              addCallKeyword(ctx, ed, iter, "warp_specialize=True");
              lines.push_back(nodePos(st)->line);
              ++rewritten;
              ws_here = true;
            }
          }
        }
        for (const char* key : {"body", "orelse", "handlers", "finalbody"}) {
          if (st.contains(key) && st[key].is_array()) visit(st[key], inside_ws || ws_here);
        }
      }
    };
    visit(ctx.body(), false);
    const std::string& name = ctx.kernel->name;
    if (rewritten == 0) {
      if (with_pointers > 0) {
        return refuse(fmt::format("{}'s loop around tl.dot loads through pointers (tl.load): Triton 3.6 fails to "
                                  "compile it warp-specialized for sm_90; descriptor loads first (tensor-cores), or "
                                  "force=1",
                                  name));
      }
      if (two_dots > 0) {
        return refuse(fmt::format("{}'s loop holds two dots (attention): Triton 3.6 fails to compile it "
                                  "warp-specialized for sm_90; force=1 tries it",
                                  name));
      }
      if (no_descriptor > 0) {
        return refuse(fmt::format("{}'s loop around tl.dot loads nothing through tensor descriptors (nothing for "
                                  "producer warps to issue)",
                                  name));
      }
      if (authored > 0) return refuse(fmt::format("{}'s loop around tl.dot gives warp_specialize already", name));
      if (static_loops > 0) {
        return refuse(fmt::format("{}'s loop around tl.dot is a tl.static_range (unrolled: no loop to specialize)",
                                  name));
      }
      return refuse(fmt::format("{} has no loop with a tl.dot in its own body", name));
    }
    PassOutcome out;
    std::string at;
    for (int l : lines) at += (at.empty() ? "" : ", ") + std::to_string(l);
    out.notes.push_back(fmt::format("{} loop(s) warp-specialized (line {})", rewritten, at));
    int64_t warps = args.integer("num_warps");
    if (warps > 0) setWarps(ctx, ed, warps, &out.notes);
    out.source = ed.apply();
    out.applied = true;
    return out;
  }

 private:
  static LoopBody bodyOf(const PassContext& ctx, const Node& loop) {
    LoopBody b;
    for (const auto& st : loop["body"]) {
      // The dot must be the loop's own (an inner loop is a loop of its own); loads count anywhere.
      walk(st, [&](const Node& n) {
        if (isType(n, "For") || isType(n, "While") || isType(n, "FunctionDef") || isType(n, "Lambda")) return false;
        if (ctx.isTlCall(n, "dot") || ctx.isTlCall(n, "dot_scaled")) ++b.dots;
        return true;
      });
      walk(st, [&](const Node& n) {
        if (isType(n, "FunctionDef") || isType(n, "Lambda")) return false;
        if (!isType(n, "Call")) return true;
        std::string fn = ctx.tlFunction(n);
        if (fn == "load") ++b.pointer_loads;
        else if (fn == "load_tensor_descriptor" || fn == "_experimental_descriptor_load") ++b.descriptor_loads;
        else if (fn.empty() && isType(n["func"], "Attribute") && n["func"]["attr"] == "load") ++b.descriptor_loads;
        return true;
      });
    }
    return b;
  }

  // num_warps at every launch (as the launch pass writes it); an autotuned kernel keeps its
  // configs' warps.
  static void setWarps(const PassContext& ctx, SourceEditor& ed, int64_t warps, std::vector<std::string>* notes) {
    if (ctx.kernel->autotune) {
      notes->push_back("autotuned: the configs' num_warps stay (warp specialization sizes its groups from 4)");
      return;
    }
    if (ctx.sites.empty()) {
      notes->push_back(fmt::format("no launch of {} in this file: num_warps as written", ctx.kernel->name));
      return;
    }
    for (const auto& set : kernelTunables(ctx)) {
      for (const auto& t : set.items) {
        if (t.param != "num_warps") continue;
        if (!t.tunable) {
          notes->push_back(fmt::format("num_warps as written ({})", t.note));
          continue;
        }
        // An absent option at Triton's default is that value already.
        if (t.origin == TunableOrigin::kAbsentOption && t.value == warps) continue;
        setTunable(ed, t, warps);
      }
    }
  }

  PassInfo info_;
};

}  // namespace

std::unique_ptr<Pass> makeWarpSpecializePass() { return std::make_unique<WarpSpecializePass>(); }

}  // namespace tf

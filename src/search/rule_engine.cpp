// The built-in reasoning engine: rules from findings to parameter regions and passes.
//
// Findings come from the diagnosis when one ran (src/diagnose/), and from what the loop
// measured itself: the compiled facts of the best variant (register spills reported by
// the worker). Each rule names the finding it answers; docs/engine.md has the table.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "diagnose/vocabulary.h"
#include "search/engine.h"

namespace tf {
namespace {

struct Current {
  std::map<TunableRole, std::vector<std::pair<std::string, int64_t>>> by_role;   // role -> (tunable id, value)
  int64_t get(TunableRole r) const {
    auto it = by_role.find(r);
    return it == by_role.end() || it->second.empty() ? 0 : it->second.front().second;
  }
};

class RuleEngine final : public ReasoningEngine {
 public:
  std::string name() const override { return "rules"; }

  EngineOutput propose(const EngineInput& in) override {
    EngineOutput out;
    if (!in.space || !in.tunables || !in.best) return out;
    std::vector<EngineFinding> findings;
    for (const auto& d : in.diagnosis) {
      if (auto kind = findingOf(d.bottleneck)) {
        EngineFinding b;
        b.kind = *kind;
        b.kernel = d.kernel;
        b.source = "diagnosis";
        b.severity = 0.5;
        b.summary = fmt::format("{} is {}", d.kernel, toString(*kind));
        findings.push_back(b);
      }
      for (const auto& f : d.findings) findings.push_back(f);
    }
    // Measured: spills in the compiled best variant.
    for (const auto& k : in.best_kernels) {
      if (!k.is_object()) continue;
      int spills = k.contains("spills") && k["spills"].is_number() ? k["spills"].get<int>() : 0;
      if (spills > 0 && !hasKind(findings, FindingKind::kRegisterSpills, k.value("name", ""))) {
        EngineFinding f;
        f.kind = FindingKind::kRegisterSpills;
        f.kernel = k.value("name", "");
        f.source = "measurement";
        f.severity = std::min(1.0, 0.3 + spills / 256.0);
        f.summary = fmt::format("{} spills {} registers in the best variant", f.kernel, spills);
        f.evidence = {{"spills", spills}, {"registers", k.value("registers", nlohmann::json(nullptr))}};
        findings.push_back(f);
        out.findings.push_back(f);
      }
    }
    // Row-wise kernels: a block that spans the whole row (no loop over it) and holds few
    // values is one short row per program.
    for (const auto& [kernel, row] : rowBlocks(in)) {
      if (row <= 0 || row > kNarrowRow || hasKind(findings, FindingKind::kNarrowRows, kernel)) continue;
      EngineFinding f;
      f.kind = FindingKind::kNarrowRows;
      f.kernel = kernel;
      f.source = "static";
      f.severity = 0.5;
      f.summary = fmt::format("{} handles one row of {} values per program", kernel, row);
      f.evidence = {{"row_block", row}};
      f.suggestions = {PassName::kRowsPerProgram};
      findings.push_back(f);
      out.findings.push_back(f);
    }
    for (const auto& f : findings) rules(in, f, &out);
    // Regions share at most half a round: the strategy keeps the rest.
    double total = 0;
    for (const auto& p : out.proposals) if (p.kind == Proposal::Kind::kRegion) total += p.share;
    if (total > 0.5) {
      for (auto& p : out.proposals) if (p.kind == Proposal::Kind::kRegion) p.share *= 0.5 / total;
    }
    return out;
  }

 private:
  // A row of at most this many values is short: rows-per-program (the H200: 4.38x on short
  // rows, docs/transforms-h200.md).
  static constexpr int64_t kNarrowRow = 512;

  // Per kernel, the largest block that spans a whole row (as the best configuration runs it).
  static std::map<std::string, int64_t> rowBlocks(const EngineInput& in) {
    std::map<std::string, int64_t> out;
    for (const auto& t : in.tunables->items) {
      if (!t.covers_dimension || t.role != TunableRole::kBlock) continue;
      int64_t v = in.space->resolvedValue(*in.best, t);
      out[t.kernel] = std::max(out[t.kernel], v);
    }
    return out;
  }

  static bool hasKind(const std::vector<EngineFinding>& fs, FindingKind kind, const std::string& kernel) {
    for (const auto& f : fs) if (f.kind == kind && (f.kernel.empty() || f.kernel == kernel)) return true;
    return false;
  }

  Current currentOf(const EngineInput& in, const std::string& kernel) const {
    Current c;
    for (const auto& d : in.space->dims()) {
      const Tunable& t = *d.tunable;
      if (!kernel.empty() && t.kernel != kernel) continue;
      c.by_role[t.role].emplace_back(t.id, in.space->resolvedValue(*in.best, t));
    }
    return c;
  }

  // A region over the dimensions of `roles`: each keeps the values `keep(value, current)` accepts.
  Region regionOf(const EngineInput& in, const Current& cur, std::initializer_list<TunableRole> roles,
                  const std::function<bool(int64_t, int64_t)>& keep) const {
    Region r;
    for (TunableRole role : roles) {
      auto it = cur.by_role.find(role);
      if (it == cur.by_role.end()) continue;
      for (const auto& [id, now] : it->second) {
        if (now <= 0) continue;
        std::vector<int64_t> vals = valuesWhere(*in.space, id, [&](int64_t v) { return keep(v, now); });
        if (!vals.empty()) r[id] = vals;
      }
    }
    return r;
  }

  static void addRegion(EngineOutput* out, const EngineFinding& f, Region region, const std::string& why) {
    if (region.empty()) return;
    Proposal p;
    p.kind = Proposal::Kind::kRegion;
    p.region = std::move(region);
    p.findings = {findingRef(f)};
    p.share = 0.1 + 0.3 * std::clamp(f.severity, 0.0, 1.0);
    p.rationale = why;
    out->proposals.push_back(std::move(p));
  }

  // How a proposal cites a finding that has no id yet ("kind@kernel"; the loop resolves it).
  static std::string findingRef(const EngineFinding& f) {
    return f.id.empty() ? std::string(toString(f.kind)) + "@" + f.kernel : f.id;
  }

  static void addPass(const EngineInput& in, EngineOutput* out, const EngineFinding& f, PassName pass,
                      const std::string& why, nlohmann::json params = nlohmann::json::object()) {
    // retile, launch and autotune are parameter moves: the search's regions make them.
    if (isParameterMove(pass)) return;
    // Only passes the loop can apply now (none switched off).
    if (std::find(in.passes.begin(), in.passes.end(), pass) == in.passes.end()) return;
    Proposal p;
    p.kind = Proposal::Kind::kPass;
    p.pass = pass;
    // The two-stage reduction sums the K splits in fp32: safe whatever the output's type
    // (atomic adds into an fp16 output round every partial sum; measured on the H200, the
    // example matmul failed verification that way).
    p.params = std::move(params);
    if (pass == PassName::kSplitK) p.params = {{"mode", "two-stage"}};
    // A K-major operand suits other tiles and warps than the layout the search tuned for
    // (the H200's tf32 GEMM: 64x128, 2 warps N-contiguous; 128x256, 8 warps K-major).
    p.retune = pass == PassName::kRelayout;
    p.kernel = f.kernel;
    p.findings = {findingRef(f)};
    p.rationale = why;
    for (const auto& q : out->proposals) {
      // One proposal per pass (the first finding's parameters); tensor-cores holds independent
      // rewrites (loads=, accumulate=), each its own proposal, so that one's refusal never
      // drops the other.
      const bool distinct = p.pass == PassName::kTensorCores && q.params != p.params;
      if (q.kind == Proposal::Kind::kPass && q.pass == p.pass && q.kernel == f.kernel && !distinct) return;
    }
    out->proposals.push_back(std::move(p));
  }

  void rules(const EngineInput& in, const EngineFinding& f, EngineOutput* out) const {
    Current cur = currentOf(in, f.kernel);
    bool dots = false, loop_dots = false, nested_dots = false;
    int dots_in_loops = 0;
    for (const auto& [k, facts] : in.tunables->facts) {
      if (!f.kernel.empty() && k != f.kernel) continue;
      dots = dots || !facts.dots.empty();
      for (const auto& d : facts.dots) {
        loop_dots = loop_dots || d.in_loop;
        nested_dots = nested_dots || d.loop_depth >= 2;
        dots_in_loops += d.in_loop ? 1 : 0;
      }
    }
    // Measured on the H200 (causal attention, B=4 H=32 S=2048 D=128 fp16): splitting the key
    // loop at the diagonal 1.10x. The pass recognizes the causal mask itself and refuses
    // without a measurement elsewhere (matmuls), so every kernel with a dot in a loop may try it.
    auto causalSplit = [&] {
      if (loop_dots) {
        addPass(in, out, f, PassName::kCausalSplit, "a causal mask in the key loop: blocks below the diagonal skip it");
      }
    };
    using R = TunableRole;
    using K = FindingKind;
    const K k = f.kind;
    const Limiter limiter = f.limiter.value_or(Limiter::kUnknown);
    if (k == K::kRegisterSpills || (k == K::kLowOccupancy && limiter == Limiter::kRegisters)) {
      // Fewer live values per thread: smaller tiles, fewer stages, more warps to share them.
      Region r = regionOf(in, cur, {R::kTileM, R::kTileN, R::kBlock, R::kNumStages},
                          [](int64_t v, int64_t now) { return v <= now; });
      Region w = regionOf(in, cur, {R::kNumWarps}, [](int64_t v, int64_t now) { return v >= now; });
      r.insert(w.begin(), w.end());
      addRegion(out, f, r, "fewer registers per thread: tiles and stages no larger, warps no fewer");
      // A block that must span the whole row cannot shrink: walk the row in chunks instead.
      if (k == K::kRegisterSpills && rowBlocks(in).count(f.kernel)) {
        addPass(in, out, f, PassName::kColumnLoop, "the row does not fit in registers: walk it in chunks",
                columnLoopParams(in, cur, f.kernel));
      }
    } else if (k == K::kLowOccupancy && limiter == Limiter::kSharedMemory) {
      addRegion(out, f,
                regionOf(in, cur, {R::kNumStages, R::kTileK}, [](int64_t v, int64_t now) { return v < now; }),
                "less shared memory per program: fewer stages, a shorter K tile");
    } else if (k == K::kLowOccupancy || k == K::kSmallGrid || k == K::kTailEffect) {
      // More, smaller programs fill the SMs (and even out the last wave).
      addRegion(out, f,
                regionOf(in, cur, {R::kTileM, R::kTileN, R::kBlock}, [](int64_t v, int64_t now) { return v < now; }),
                "more programs: smaller tiles");
      // Fewer programs than SMs and loops without a dot: few long rows. Measured on the H200
      // (softmax fp16 by hand, scripts/gpu/row_split_probe.py): 4 x 4M 29.6x, 16 x 1M 8.0x,
      // 64 x 256K 2.4x over one program per row, best at 512 to 1,024 programs; the pass
      // refuses where no loop keeps a running value it can combine.
      if (k == K::kSmallGrid && !dots && loopsOf(in, f.kernel) >= 1) {
        addPass(in, out, f, PassName::kSplitRows, "few rows for the SMs: each row's columns shared by several programs",
                splitRowsParams(f));
      }
    } else if (k == K::kNoTensorCores) {
      Region r = regionOf(in, cur, {R::kTileM}, [](int64_t v, int64_t) { return v >= 64; });
      Region w = regionOf(in, cur, {R::kNumWarps}, [](int64_t v, int64_t) { return v == 4 || v == 8; });
      r.insert(w.begin(), w.end());
      addRegion(out, f, r, "tensor-core (wgmma) tiles: 64 rows or more per warp group of 4 warps");
      addPass(in, out, f, PassName::kTensorCores, "the dot did not use tensor cores");
    } else if (k == K::kLatencyBound || k == K::kLongStalls) {
      Region r = regionOf(in, cur, {R::kNumStages}, [](int64_t v, int64_t now) { return v > now; });
      if (r.empty()) r = regionOf(in, cur, {R::kNumWarps}, [](int64_t v, int64_t now) { return v > now; });
      addRegion(out, f, r, "more memory operations in flight: deeper pipelining or more warps");
      if (k == K::kLatencyBound) causalSplit();
    } else if (k == K::kMemoryBound) {
      if (dots) {
        addRegion(out, f,
                  regionOf(in, cur, {R::kTileM, R::kTileN}, [](int64_t v, int64_t now) { return v >= now; }),
                  "more reuse of each loaded element: larger output tiles");
      } else {
        Region r = regionOf(in, cur, {R::kBlock}, [](int64_t v, int64_t now) { return v >= now; });
        Region w = regionOf(in, cur, {R::kNumWarps}, [](int64_t v, int64_t) { return v >= 4 && v <= 8; });
        r.insert(w.begin(), w.end());
        addRegion(out, f, r, "wider accesses and more bytes in flight: larger blocks, 4 to 8 warps");
      }
    } else if (k == K::kComputeBound && dots) {
      Region r = regionOf(in, cur, {R::kTileM, R::kTileN}, [](int64_t v, int64_t) { return v >= 64; });
      Region w = regionOf(in, cur, {R::kNumWarps}, [](int64_t v, int64_t) { return v == 4 || v == 8; });
      r.insert(w.begin(), w.end());
      addRegion(out, f, r, "full tensor-core tiles: 64 or more in M and N, 4 or 8 warps");
      // Measured on the H200 (docs/transforms-h200.md, 8192^3 fp16): a grouped program order
      // 1.11x and TMA descriptor loads 1.19x on a tuned 128x128 matmul. Both are tried on the
      // best configuration, and kept only when the measurement says so.
      addPass(in, out, f, PassName::kGroupedOrder,
              "grouped program order: neighbouring programs share A and B tiles in L2");
      addPass(in, out, f, PassName::kTensorCores, "TMA descriptor loads feed the tensor cores with fewer instructions",
              {{"loads", "descriptor"}});
      // `acc += tl.dot(a, b)` over fp8 or int8 operands: Triton 3.6 does not fold the add into
      // the MMA, so every step waits for its MMA and adds in registers (compiled for sm_90: a
      // wgmma wait of 0 and 128 adds per step; folded, a wait of 1 and none, as the Gluon kernel
      // that reached 0.93 of cuBLAS on the H200 has). The pass refuses 16-bit and tf32 dots.
      addPass(in, out, f, PassName::kTensorCores, "the accumulation folded into the dot: the MMAs chain without a wait",
              {{"accumulate", "dot"}});
      // Measured on the H200 (fp16 8192x4096x4096): the tuned grouped kernel 0.4268 ms; persistent
      // over TMA descriptors 0.4076 ms, warp-specialized 0.4015 ms (cuBLAS 0.3962). Proposed
      // after the descriptor loads: when they win, the next base gets it on top of them.
      addPass(in, out, f, PassName::kPersistent, "one program per SM looping over tiles overlaps a tile's epilogue "
              "with the next tile's loads", persistentParams(true));
      // The dot's own loop warp-specialized: producer warps issue the TMA loads, consumer
      // warps the MMAs. The pass refuses a loop that loads through pointers, so this pays on
      // the base the descriptor loads make. Not yet measured on the H200 outside the
      // persistent tile loop: kept only when the measurement says so.
      addPass(in, out, f, PassName::kWarpSpecialize,
              "producer warps issue the TMA loads, consumer warps the MMAs: the loads overlap the math");
      // (gluon-gemm: proposed below for every loop dot whose time goes to the dot or its loads.)
      causalSplit();
    } else if (k == K::kComputeBound) {
      // Without a dot the math is elementwise: more independent work per program and more
      // warps to hide the pipes' latency.
      Region r = regionOf(in, cur, {R::kBlock}, [](int64_t v, int64_t now) { return v >= now; });
      Region w = regionOf(in, cur, {R::kNumWarps}, [](int64_t v, int64_t now) { return v >= now; });
      r.insert(w.begin(), w.end());
      addRegion(out, f, r, "more independent work per program, more warps");
    } else if (k == K::kSharedBankConflicts) {
      // Conflicts follow the shape of what is staged in shared memory (dot tiles, or the
      // blocks a layout conversion moves) and how warps read it: try other shapes and warps.
      addRegion(out, f,
                regionOf(in, cur, {R::kTileK, R::kTileN, R::kBlock, R::kNumWarps},
                         [](int64_t v, int64_t now) { return v != now; }),
                "other shapes in shared memory: a different K, N or block size, other warps");
    } else if (k == K::kNarrowRows) {
      // As one 2-D tile first (the rows' reductions run side by side), then as a loop (for
      // bodies the tile form refuses); rows so that a program holds about 1K and 4K values.
      int64_t row = f.evidence.value("row_block", int64_t{0});
      auto rowsFor = [&](int64_t values) { return std::clamp<int64_t>(row > 0 ? values / row : 4, 2, 64); };
      nlohmann::json rows = nlohmann::json::array({rowsFor(1024)});
      if (rowsFor(4096) != rowsFor(1024)) rows.push_back(rowsFor(4096));
      addPass(in, out, f, PassName::kRowsPerProgram, "several short rows per program",
              {{"mode", {"block", "loop"}}, {"rows", rows}});
    } else if (k == K::kUncoalescedAccess) {
      addPass(in, out, f, PassName::kMemoryHints, "tell the compiler the offsets are contiguous and aligned");
    } else if (k == K::kLauncherGlue) {
      // The launcher's torch ops: an absolute maximum taken before the kernel (a quantizer's
      // scale) reads its input once as an infinity norm instead of twice and a copy.
      addPass(in, out, f, PassName::kLauncherGlue, "torch glue outside the kernel: the absolute maximum as one "
              "infinity-norm reduction (no copy of the absolute values)");
    } else if (k == K::kPoorL2Reuse) {
      addRegion(out, f, regionOf(in, cur, {R::kGroup}, [](int64_t v, int64_t) { return v >= 4; }),
                "larger program groups reuse tiles in L2");
      if (dots) addPass(in, out, f, PassName::kGroupedOrder, "grouped program order for L2 reuse");
    }
    // Attention's softmax between two dots, whatever bounds it: with the exp's log2(e) folded
    // into the score scale, each score costs one multiplication less (measured on the H200,
    // 128x64 tiles, 8 warps, 3 stages: 0.885 -> 0.651 ms at B=4 H=32 S=2048 D=128 fp16).
    if (dots && callsExp(in, f.kernel)) {
      addPass(in, out, f, PassName::kExp2, "exp2 with log2(e) folded into the score scale: a multiplication less per score");
    }
    // Two dots in a loop with an exp between them: attention's online softmax, which the Gluon
    // attention template (a loader warp, two consumer warp groups in FlashAttention-3's order)
    // ran at 0.89-1.02 of cuDNN attention on an H100 (docs/measurements.md, 2026-12-07). The pass
    // proves the softmax from the source and refuses anything else.
    // The softmax may be written in either base (FlashAttention-2's Triton kernels use exp2),
    // and its keys visited in two loops (the tutorial's helper called before and on the
    // diagonal block: four dots in loops).
    int helper_dots = 0;  // dots in the loops of helpers the kernel calls (the tutorial's _attn_fwd_inner)
    bool helper_exp = false;
    for (const auto& [k, facts] : in.tunables->facts) {
      if (!f.kernel.empty() && k != f.kernel) continue;
      helper_dots += facts.helper_dots_in_loops;
      helper_exp = helper_exp || facts.helper_calls_exp;
    }
    const int attention_dots = dots_in_loops + helper_dots;
    if ((attention_dots == 2 || attention_dots == 4) && (callsExp(in, f.kernel) || callsExp2(in, f.kernel) || helper_exp)) {
      addPass(in, out, f, PassName::kGluonAttention, "attention's online softmax between two dots: the Gluon "
              "attention for Hopper (a TMA loader warp, two consumer warp groups overlapping softmax and wgmma)");
    }
    // A max loop then a sum-of-exp loop over one row (cross-entropy, softmax): one read of
    // the row instead of two.
    if (!dots && callsExp(in, f.kernel) && loopsOf(in, f.kernel) >= 2) {
      addPass(in, out, f, PassName::kOnlineSoftmax, "the max and the sum of exponentials in one loop: one read of the row");
    }
    // Two or more loops over a row without a dot (softmax, layer norm): where a later loop
    // reads the row again, L2 is asked to keep it until then and to drop it (and the
    // output) at the last read (measured on the H200, softmax 8192 x 32000 fp16 in the
    // online form: 0.327 -> 0.279 ms, 77% -> 90% of DRAM). The pass refuses where no loop
    // reads what an earlier one read.
    if (!dots && loopsOf(in, f.kernel) >= 2) {
      addPass(in, out, f, PassName::kEvictionHints, "a row read again by a later loop: keep it in L2 until then");
    }
    // A loop without a dot waits for its own loads at every step (a recurrence's per-step
    // vectors; Triton 3.6 pipelines only loads that feed a dot: compiled for sm_90 with
    // tl.range(..., num_stages=3), such a loop has no async copy): each load issued one step
    // ahead overlaps the previous step's work. Where the time goes to latency or memory. Not
    // yet measured on the H200: kept only when the measurement says so.
    if (!dots && loopsOf(in, f.kernel) >= 1 &&
        (k == K::kLatencyBound || k == K::kLongStalls || k == K::kMemoryBound)) {
      addPass(in, out, f, PassName::kPrefetch, "a loop's loads issued one step ahead: the next step's values arrive "
              "while this step computes");
    }
    // Without a dot, a loop of rank-1 updates acc += a[:, None] * b[None, :] (a direct
    // convolution's channel loop, a GEMM written as outer products) runs its multiply-adds on
    // the CUDA cores: one tl.dot per block of the loop's variable puts them on the tensor cores.
    // Measured on the H200 (the suite's conv2d_direct, 8x64x64x320 3x3 fp16, 60 s): 19.7 ms as
    // written -> 0.147 ms, tuned and flattened in the next rounds. The pass refuses without a
    // measurement where no loop accumulates so.
    if (!dots && loopsOf(in, f.kernel) >= 1) {
      addPass(in, out, f, PassName::kImplicitGemm, "a loop of outer products: one tl.dot per block of its variable");
    }
    // A buffer the kernel fills and the launcher sums whole after the launch (a loss's
    // per-element terms, then torch.sum): the kernel adds each store's sum into one value
    // instead, and the buffer is neither zeroed, written nor read back (three passes over a
    // tensor as large as the input). Proposed whatever the finding where a launcher sums an
    // argument of the launch after it (the launcher's time outside the kernel is not always
    // measured); the pass refuses without a measurement where that tensor is needed otherwise.
    if (launcherReduces(in, f.kernel, false)) {
      addPass(in, out, f, PassName::kFusedSum, "a buffer the launcher only sums: the sum taken by the kernel, the "
              "buffer never written");
    }
    // An output the launcher converts to another dtype after the launch (a dequantization
    // written in float32, returned as bfloat16): allocated in that dtype, the kernel's stores
    // convert as they write, and torch's conversion (a read and a write of the whole output)
    // is gone. Proposed whatever the finding, where a launcher converts an argument.
    if (launcherReduces(in, f.kernel, true)) {
      addPass(in, out, f, PassName::kFusedCast, "an output the launcher converts after the launch: written in its "
              "final dtype");
    }
    // A loop over blocks whose masks compare the block's offsets with the loop's end (the
    // key loop of attention, a row kernel's loops over the columns): the whole blocks without
    // the comparison, the last one as written. Measured on the H200 (the suite's attention as
    // tritonforge hands it back, 128x64 tiles): 0.642 -> 0.594 ms; in the loop, 0.643 -> 0.623 ms
    // at 45 s, 0.615 at 60 s (docs/measurements.md). The pass refuses without a
    // measurement where no loop compares with its own end. Not for a GEMM's single dot: TMA
    // descriptor loads (tensor-cores) take the K tail's bounds into the copy engine, and they
    // need the one K loop the split would make two of.
    if (loopsOf(in, f.kernel) >= 1 && (!dots || dots_in_loops >= 2)) {
      addPass(in, out, f, PassName::kTailSplit, "masks of the last block only: the whole blocks load and select "
              "without comparing");
    }
    // Without a dot, tl.exp(x - row_max) as exp2 of one fused multiply-add: an instruction
    // less per element where the exponentials share the SM with the loads (measured on the
    // H200, softmax 8192 x 32000 fp16, online form: 0.336 -> 0.323 ms, 75% -> 78% of DRAM).
    if (!dots && callsExp(in, f.kernel)) {
      addPass(in, out, f, PassName::kExp2, "exp2 of one fused multiply-add for each exp(x - max): an instruction less per element");
    }
    // A dot two or more loops deep (an implicit-GEMM convolution over filter taps and channel
    // blocks): the pipeliner overlaps loads with dots only within the innermost loop, and
    // drains at every outer step. One loop over the whole nest pipelines across it. Not yet
    // measured on the H200: proposed whatever the finding, kept only when it wins.
    if (nested_dots) {
      addPass(in, out, f, PassName::kFlattenLoops, "the dot's loops as one loop: pipelining across the whole nest");
    }
    // A dot in a loop reading an operand whose K dimension is strided in memory (an NCHW
    // convolution's weights and input, a transposed B): a copy with K innermost, made at the
    // launch. Measured on the H200 (attorch's conv2d, 8x320x64x64 3x3 fp16, the loop's run):
    // 0.514 -> 0.290 ms with both operands relaid, copies included; the suite's fp32 GEMM (B
    // row-major, its column stride taken as 1, now a parameter): 0.687 -> 0.486 ms with the
    // relaid kernel tuned on trial (retune). The pass refuses where no operand's K stride
    // is passed from the launch; at run time a K stride already 1 keeps the tensor as it is.
    // Proposed where the time goes to memory or to the dot (not for spills or occupancy).
    if (loop_dots && (k == K::kUncoalescedAccess || k == K::kLatencyBound || k == K::kLongStalls ||
                      k == K::kComputeBound || k == K::kMemoryBound)) {
      addPass(in, out, f, PassName::kRelayout, "a dot operand read along a strided K dimension: a copy with K innermost");
    }
    // What `tl` cannot express in Triton 3.6: the GEMM lowered to Gluon (a TMA loader warp,
    // an mbarrier ring, async wgmma with one MMA in flight, persistent grouped tiles). By
    // hand on the H200 (fp8 8192x8192x4096, 2026-12-06): 0.97 of torch._scaled_mm, where the
    // best `tl` form reached 0.69. Proposed where the time goes to the dot or to waiting on
    // its loads, not only when compute-bound: on the H100 (2026-12-07) the suite's fp8 GEMM
    // was diagnosed latency-bound, and the search stopped at 0.58 of the vendor without it.
    // The route keeps the kernel as written for calls it does not fit, and the launch's tiles
    // stay the search's to tune.
    if (loop_dots && (k == K::kLatencyBound || k == K::kLongStalls || k == K::kComputeBound ||
                      k == K::kMemoryBound)) {
      addPass(in, out, f, PassName::kGluonGemm,
              "the GEMM lowered to Gluon: a TMA loader warp feeds asynchronous wgmma through an mbarrier ring");
    }
    for (PassName s : f.suggestions) {
      addPass(in, out, f, s, fmt::format("the diagnosis suggests {}", toString(s)),
              s == PassName::kPersistent ? persistentParams(dots) : nlohmann::json::object());
    }
  }

  // Programs per row for split-rows: about 1,024 programs in all (the probe's best), and half that.
  static nlohmann::json splitRowsParams(const EngineFinding& f) {
    int64_t grid = 0;
    for (const char* key : {"launch__grid_size", "launch.grid_blocks"}) {
      if (f.evidence.contains(key) && f.evidence[key].is_number()) grid = f.evidence[key].get<int64_t>();
    }
    if (grid <= 0) return {{"split", {16, 64}}};
    int64_t split = 2;
    while (split < 256 && split * grid < 1024) split *= 2;
    return {{"split", split > 2 ? nlohmann::json::array({split / 2, split}) : nlohmann::json::array({split})}};
  }

  // The chunks column-loop tries: 8, 16, 32 and 64 elements per thread at the warps the kernel
  // launched with (the diagnosis's launch evidence, else the configuration's num_warps, else
  // 4). Measured on the H200 (triton-lang/kernels' cross-entropy, 16 warps, rows of 32000 and
  // 128256 fp32): chunks of 1024, 2048, 4096 and 8192 took 1.68, 1.05, 0.77 and 0.68 ms on the
  // short rows (0.67 as written, one block of 32768): a fixed list of small chunks loses on
  // the rows that fitted, however much it wins on those that spilled.
  static nlohmann::json columnLoopParams(const EngineInput& in, const Current& cur, const std::string& kernel) {
    int64_t warps = 0;
    for (const auto& d : in.diagnosis) {
      if (d.kernel != kernel) continue;
      for (const auto& g : d.findings) {
        const auto& e = g.evidence;
        if (e.is_object() && e.contains("launch.warps") && e["launch.warps"].is_number_integer()) {
          warps = std::max(warps, e["launch.warps"].get<int64_t>());
        }
      }
    }
    if (warps <= 0) warps = cur.get(TunableRole::kNumWarps);
    if (warps <= 0 || (warps & (warps - 1)) != 0) warps = 4;
    // Cases whose row block compiled without spills and cases whose block spilled: rows below
    // the smallest block that spilled can keep the body as written (`fits`).
    std::set<std::string> row_params;
    for (const auto& t : in.tunables->items) {
      if (t.kernel == kernel && t.covers_dimension && t.role == TunableRole::kBlock) row_params.insert(t.param);
    }
    int64_t fits = rowBlockThatSpills(in.case_kernels, kernel, row_params);
    nlohmann::json blocks = nlohmann::json::array();
    for (int64_t per_thread : {32, 16, 64, 8}) {
      int64_t b = std::clamp<int64_t>(per_thread * 32 * warps, 16, 65536);
      if (fits && b >= fits) continue;
      if (std::find(blocks.begin(), blocks.end(), nlohmann::json(b)) == blocks.end()) blocks.push_back(b);
    }
    if (blocks.empty()) fits = 0;
    if (!fits) return {{"block", blocks}};
    // Two chunks, each with the rows that fit kept as written and with every row walked
    // (the loop's four variants of a pass).
    if (blocks.size() > 2) blocks.erase(blocks.begin() + 2, blocks.end());
    return {{"block", blocks}, {"fits", {fits, 0}}};
  }

  // The smallest row block that spilled in some case, when every case whose block was smaller
  // compiled without spills and at least one did (0 otherwise: all spilled, or none did).
  static int64_t rowBlockThatSpills(const nlohmann::json& case_kernels, const std::string& kernel,
                                    const std::set<std::string>& row_params) {
    int64_t max_ok = 0, min_bad = 0;
    for (const auto& kernels : case_kernels) {
      if (!kernels.is_array()) continue;
      for (const auto& k : kernels) {
        if (!k.is_object() || k.value("name", "") != kernel || !k.contains("constexprs")) continue;
        const auto& cx = k["constexprs"];
        for (const auto& p : row_params) {
          if (!cx.contains(p) || !cx[p].is_number_integer()) continue;
          int64_t v = cx[p].get<int64_t>();
          bool spills = k.contains("spills") && k["spills"].is_number() && k["spills"].get<double>() > 0;
          if (spills) min_bad = min_bad ? std::min(min_bad, v) : v;
          else max_ok = std::max(max_ok, v);
        }
      }
    }
    if (max_ok <= 0 || min_bad <= max_ok || (min_bad & (min_bad - 1)) != 0) return 0;
    return min_bad;
  }

  // What a persistent proposal fixes, so that the loop's few variants (kPassVariants) go to
  // what can pay. A dot kernel's tile fills an SM (one program each, measured 128x256 on the
  // H200): flatten and warp_specialize are searched. Without a dot, warp specialization has
  // no loads and MMAs to split between warps, and the tile loop seldom holds a loop to
  // flatten: programs per SM (occupancy) are searched, as before those two existed.
  static nlohmann::json persistentParams(bool dots) {
    if (dots) return {{"programs_per_sm", 1}};
    return {{"flatten", 0}, {"warp_specialize", 0}};
  }

  static int loopsOf(const EngineInput& in, const std::string& kernel) {
    int n = 0;
    for (const auto& [k, facts] : in.tunables->facts) {
      if (kernel.empty() || k == kernel) n = std::max(n, facts.loops);
    }
    return n;
  }

  static bool launcherReduces(const EngineInput& in, const std::string& kernel, bool convert) {
    for (const auto& [k, facts] : in.tunables->facts) {
      if ((kernel.empty() || k == kernel) && (convert ? facts.launcher_converts : facts.launcher_sums)) return true;
    }
    return false;
  }

  static bool anyFact(const EngineInput& in, const std::string& kernel, bool KernelFacts::*fact) {
    for (const auto& [k, facts] : in.tunables->facts) {
      if ((kernel.empty() || k == kernel) && facts.*fact) return true;
    }
    return false;
  }
  static bool callsExp(const EngineInput& in, const std::string& kernel) {
    return anyFact(in, kernel, &KernelFacts::calls_exp);
  }
  static bool callsExp2(const EngineInput& in, const std::string& kernel) {
    return anyFact(in, kernel, &KernelFacts::calls_exp2);
  }
};

}  // namespace

std::unique_ptr<ReasoningEngine> makeRuleEngine() { return std::make_unique<RuleEngine>(); }

}  // namespace tf

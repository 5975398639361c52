// The reasoning engine: the rule engine's findings-to-proposals table, the JSON that
// external engines speak, and an external engine run as a program.
#include <map>
#include <set>
#include <gtest/gtest.h>

#include "diagnose/vocabulary.h"
#include "search/engine.h"
#include "search/engine_round.h"
#include "support/test_support.h"
#include "util/error.h"

namespace tf {
namespace {

TunableSet matmulTunables() {
  TunableSet set;
  auto add = [&](const char* param, TunableRole role, int64_t value) {
    Tunable t;
    t.kernel = "mm";
    t.param = param;
    t.id = std::string("mm.") + param;
    t.role = role;
    t.value = value;
    set.items.push_back(t);
  };
  add("BLOCK_M", TunableRole::kTileM, 32);
  add("BLOCK_N", TunableRole::kTileN, 32);
  add("BLOCK_K", TunableRole::kTileK, 32);
  add("num_warps", TunableRole::kNumWarps, 4);
  add("num_stages", TunableRole::kNumStages, 3);
  set.facts["mm"].dots.push_back(DotFact{"BLOCK_M", "BLOCK_N", "BLOCK_K", nullptr, true});
  return set;
}

class RuleEngineTest : public ::testing::Test {
 protected:
  EngineInput input(std::vector<EngineDiagnosis> d = {}) {
    EngineInput in;
    in.tunables = &set_;
    in.space = &space_;
    in.best = Config{{"mm.BLOCK_M", 128}, {"mm.BLOCK_N", 128}, {"mm.BLOCK_K", 64}, {"mm.num_warps", 4}, {"mm.num_stages", 4}};
    in.best_objective = 0.5;
    in.diagnosis = std::move(d);
    for (PassName p : allPassNames()) in.passes.push_back(toString(p));
    return in;
  }
  static EngineDiagnosis finding(FindingKind kind, std::optional<Limiter> limiter = std::nullopt,
                                 std::vector<PassName> suggestions = {}) {
    EngineFinding f;
    f.id = "F1";
    f.kind = kind;
    f.kernel = "mm";
    f.severity = 0.8;
    f.limiter = limiter;
    f.suggestions = std::move(suggestions);
    return EngineDiagnosis{"mm", Bottleneck::kBalanced, {f}};
  }
  // Does the rule engine propose `pass` for a diagnosis of one finding of `kind`?
  bool proposesPass(FindingKind kind, const std::string& pass) {
    EngineOutput out = rules_->propose(input({finding(kind)}));
    for (const auto& p : out.proposals) {
      if (p.kind == Proposal::Kind::kPass && p.pass == pass) return true;
    }
    return false;
  }
  TunableSet set_ = matmulTunables();
  Space space_{set_, SpaceHints{}};
  std::unique_ptr<ReasoningEngine> rules_ = makeRuleEngine();
};

TEST_F(RuleEngineTest, NothingToActOnProposesNothing) {
  EngineOutput out = rules_->propose(input());
  EXPECT_TRUE(out.findings.empty());
  EXPECT_TRUE(out.proposals.empty());
  EXPECT_EQ(rules_->name(), "rules");
}

TEST_F(RuleEngineTest, SpillsAskForSmallerTilesFewerStagesMoreWarps) {
  EngineOutput out = rules_->propose(input({finding(FindingKind::kRegisterSpills)}));
  ASSERT_EQ(out.proposals.size(), 1u);
  const Proposal& p = out.proposals[0];
  EXPECT_EQ(p.kind, Proposal::Kind::kRegion);
  EXPECT_EQ(p.findings, std::vector<std::string>{"F1"});
  EXPECT_EQ(p.region.at("mm.BLOCK_M"), (std::vector<int64_t>{16, 32, 64, 128}));
  EXPECT_EQ(p.region.at("mm.num_stages"), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(p.region.at("mm.num_warps"), (std::vector<int64_t>{4, 8}));
  EXPECT_FALSE(p.region.count("mm.BLOCK_K"));
  EXPECT_NEAR(p.share, 0.1 + 0.3 * 0.8, 1e-12);
}

TEST_F(RuleEngineTest, MeasuredSpillsBecomeAFindingOfTheEngine) {
  EngineInput in = input();
  in.best_kernels = nlohmann::json::array({{{"name", "mm"}, {"spills", 128}, {"registers", 255}}});
  EngineOutput out = rules_->propose(in);
  ASSERT_EQ(out.findings.size(), 1u);
  EXPECT_EQ(out.findings[0].kind, FindingKind::kRegisterSpills);
  EXPECT_EQ(out.findings[0].source, "measurement");
  EXPECT_EQ(out.findings[0].evidence["spills"], 128);
  ASSERT_EQ(out.proposals.size(), 1u);
  EXPECT_EQ(out.proposals[0].findings, std::vector<std::string>{"register-spills@mm"});
}

TEST_F(RuleEngineTest, EachFindingKindHasItsMove) {
  auto region = [&](const EngineDiagnosis& d, const std::string& id) {
    EngineOutput out = rules_->propose(input({d}));
    for (const auto& p : out.proposals) {
      if (p.kind == Proposal::Kind::kRegion && p.region.count(id)) return p.region.at(id);
    }
    return std::vector<int64_t>{};
  };
  EXPECT_EQ(region(finding(FindingKind::kSmallGrid), "mm.BLOCK_N"), (std::vector<int64_t>{16, 32, 64}));
  // The limiter as the diagnosis writes it reaches the rule (it once did not: "shared memory"
  // against "shared-memory").
  EXPECT_EQ(region(finding(FindingKind::kLowOccupancy, Limiter::kSharedMemory), "mm.num_stages"),
            (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(region(finding(FindingKind::kLongStalls), "mm.num_stages"), (std::vector<int64_t>{5}));
  EXPECT_EQ(region(finding(FindingKind::kNoTensorCores), "mm.num_warps"), (std::vector<int64_t>{4, 8}));
  EngineDiagnosis mem{"mm", Bottleneck::kMemoryBound, {}};
  EXPECT_EQ(region(mem, "mm.BLOCK_M"), (std::vector<int64_t>{128, 256}));
  EngineOutput out = rules_->propose(input({finding(FindingKind::kNoTensorCores)}));
  bool pass = false;
  for (const auto& p : out.proposals) pass |= p.kind == Proposal::Kind::kPass && p.pass == "tensor-cores";
  EXPECT_TRUE(pass);
  out = rules_->propose(input({finding(FindingKind::kTailEffect, std::nullopt, {PassName::kPersistent})}));
  pass = false;
  for (const auto& p : out.proposals) pass |= p.kind == Proposal::Kind::kPass && p.pass == "persistent";
  EXPECT_TRUE(pass);
  // A pass the loop cannot apply now (switched off) is not proposed.
  EngineInput in = input({finding(FindingKind::kTailEffect, std::nullopt, {PassName::kPersistent})});
  in.passes = {"grouped-order"};
  out = rules_->propose(in);
  for (const auto& p : out.proposals) EXPECT_NE(p.pass, "persistent");
}

// Grouped order, TMA descriptor loads, then a persistent kernel (in that order, so that the
// persistent proposal stacks on a descriptor base when the loads win): one program per SM,
// flatten and warp_specialize left to the loop's variants; then the Gluon lowering.
TEST_F(RuleEngineTest, ComputeBoundDotsTryGroupedOrderTmaLoadsPersistentAndWarpSpecialization) {
  EngineDiagnosis d{"mm", Bottleneck::kComputeBound, {}};
  d.findings.push_back(finding(FindingKind::kComputeBound).findings[0]);
  EngineOutput out = rules_->propose(input({d}));
  std::vector<std::string> order;
  std::map<std::string, nlohmann::json> passes;
  std::vector<nlohmann::json> tensor_cores;
  for (const auto& p : out.proposals) {
    if (p.kind != Proposal::Kind::kPass) continue;
    order.push_back(p.pass);
    passes[p.pass] = p.params;
    if (p.pass == "tensor-cores") tensor_cores.push_back(p.params);
    EXPECT_EQ(p.kernel, "mm");
  }
  EXPECT_EQ(order, (std::vector<std::string>{"grouped-order", "tensor-cores", "tensor-cores", "persistent",
                                             "warp-specialize", "causal-split", "relayout", "gluon-gemm"}));
  EXPECT_EQ(passes.at("warp-specialize"), nlohmann::json::object());
  EXPECT_EQ(passes.at("gluon-gemm"), nlohmann::json::object());
  EXPECT_EQ(passes.at("causal-split"), nlohmann::json::object());
  // Two tensor-cores rewrites, each its own proposal (one's refusal never drops the other).
  EXPECT_EQ(tensor_cores, (std::vector<nlohmann::json>{{{"loads", "descriptor"}}, {{"accumulate", "dot"}}}));
  EXPECT_EQ(passes.at("persistent"), (nlohmann::json{{"programs_per_sm", 1}}));
  // Switched off, it is not proposed; the others still are.
  EngineInput in = input({d});
  in.passes = {"grouped-order", "tensor-cores"};
  out = rules_->propose(in);
  for (const auto& p : out.proposals) EXPECT_NE(p.pass, "persistent");
}

// The Gluon lowering is proposed wherever a loop dot's time goes to the dot or to waiting on
// its loads (the H100's fp8 GEMM was diagnosed latency-bound), not for other findings.
TEST_F(RuleEngineTest, GluonGemmIsProposedForLatencyAndMemoryBoundDotsToo) {
  auto proposes = [&](FindingKind k) {
    EngineOutput out = rules_->propose(input({finding(k)}));
    for (const auto& p : out.proposals) {
      if (p.kind == Proposal::Kind::kPass && p.pass == "gluon-gemm") return true;
    }
    return false;
  };
  EXPECT_TRUE(proposes(FindingKind::kLatencyBound));
  EXPECT_TRUE(proposes(FindingKind::kLongStalls));
  EXPECT_TRUE(proposes(FindingKind::kMemoryBound));
  EXPECT_TRUE(proposes(FindingKind::kComputeBound));
  EXPECT_FALSE(proposes(FindingKind::kRegisterSpills));
}

// A persistent proposal for a kernel without a dot searches programs per SM, as before
// flatten and warp_specialize were parameters.
TEST(RuleEnginePersistent, WithoutADotProgramsPerSmAreSearched) {
  TunableSet set;
  Tunable b;
  b.kernel = "add_kernel";
  b.param = "BLOCK";
  b.id = "add_kernel.BLOCK";
  b.role = TunableRole::kBlock;
  b.value = 1024;
  set.items.push_back(b);
  set.facts["add_kernel"] = KernelFacts{};
  Space space(set, SpaceHints{});
  EngineInput in;
  in.tunables = &set;
  in.space = &space;
  in.best = Config{{"add_kernel.BLOCK", 1024}};
  for (PassName p : allPassNames()) in.passes.push_back(toString(p));
  EngineFinding f;
  f.id = "F1";
  f.kind = FindingKind::kTailEffect;
  f.kernel = "add_kernel";
  f.suggestions = {PassName::kPersistent};
  in.diagnosis = {EngineDiagnosis{"add_kernel", Bottleneck::kBalanced, {f}}};
  EngineOutput out = makeRuleEngine()->propose(in);
  int persistent = 0;
  for (const auto& p : out.proposals) {
    if (p.kind != Proposal::Kind::kPass || p.pass != "persistent") continue;
    ++persistent;
    EXPECT_EQ(p.params, (nlohmann::json{{"flatten", 0}, {"warp_specialize", 0}}));
  }
  EXPECT_EQ(persistent, 1);
}

// causal-split is tried on kernels with a dot inside a loop (attention's key loop) that are
// compute- or latency-bound; the pass itself refuses where there is no causal mask.
TEST_F(RuleEngineTest, DotLoopsComputeOrLatencyBoundTryCausalSplit) {
  auto causalSplitFor = [&](FindingKind kind) {
    int n = 0;
    for (const auto& p : rules_->propose(input({finding(kind)})).proposals) {
      if (p.kind == Proposal::Kind::kPass && p.pass == "causal-split") {
        EXPECT_EQ(p.kernel, "mm");
        EXPECT_EQ(p.findings, std::vector<std::string>{"F1"});
        ++n;
      }
    }
    return n;
  };
  EXPECT_EQ(causalSplitFor(FindingKind::kComputeBound), 1);
  EXPECT_EQ(causalSplitFor(FindingKind::kLatencyBound), 1);
  EXPECT_EQ(causalSplitFor(FindingKind::kMemoryBound), 0);
  EXPECT_EQ(causalSplitFor(FindingKind::kLongStalls), 0);
  // A dot outside any loop (one tile product per program) has no key loop to split.
  set_.facts["mm"].dots[0].in_loop = false;
  EXPECT_EQ(causalSplitFor(FindingKind::kComputeBound), 0);
  EXPECT_EQ(causalSplitFor(FindingKind::kLatencyBound), 0);
  // Switched off: not proposed.
  set_.facts["mm"].dots[0].in_loop = true;
  EngineInput in = input({finding(FindingKind::kComputeBound)});
  in.passes = {"grouped-order", "tensor-cores"};
  for (const auto& p : rules_->propose(in).proposals) EXPECT_NE(p.pass, "causal-split");
}

// flatten-loops is tried, whatever the finding, on a kernel whose dot sits two or more loops
// deep (an implicit-GEMM convolution); a dot in one loop has nothing to flatten.
TEST_F(RuleEngineTest, NestedDotLoopsTryFlattenLoops) {
  auto flattenFor = [&](FindingKind kind) {
    int n = 0;
    for (const auto& p : rules_->propose(input({finding(kind)})).proposals) {
      if (p.kind == Proposal::Kind::kPass && p.pass == "flatten-loops") {
        EXPECT_EQ(p.kernel, "mm");
        EXPECT_EQ(p.params, nlohmann::json::object());  // both modes are the loop's variants
        ++n;
      }
    }
    return n;
  };
  EXPECT_EQ(flattenFor(FindingKind::kComputeBound), 0);
  set_.facts["mm"].dots[0].loop_depth = 3;
  EXPECT_EQ(flattenFor(FindingKind::kComputeBound), 1);
  EXPECT_EQ(flattenFor(FindingKind::kMemoryBound), 1);
  EXPECT_EQ(flattenFor(FindingKind::kLatencyBound), 1);
  set_.facts["mm"].dots[0].loop_depth = 1;
  EXPECT_EQ(flattenFor(FindingKind::kComputeBound), 0);
  set_.facts["mm"].dots[0].loop_depth = 2;
  EngineInput in = input({finding(FindingKind::kComputeBound)});
  in.passes = {"grouped-order", "tensor-cores"};
  for (const auto& p : rules_->propose(in).proposals) EXPECT_NE(p.pass, "flatten-loops");
}

// Attention (dots and tl.exp): the exp2 fold is tried whatever bounds the kernel; a row
// kernel's exp (softmax, no dot) too, for the fused multiply-add; a GEMM without an exp never
// gets it.
TEST_F(RuleEngineTest, KernelsWithExpTryTheExp2Fold) {
  auto proposesExp2 = [&](FindingKind kind) {
    EngineOutput out = rules_->propose(input({finding(kind)}));
    for (const auto& p : out.proposals) {
      if (p.kind == Proposal::Kind::kPass && p.pass == "exp2") return true;
    }
    return false;
  };
  EXPECT_FALSE(proposesExp2(FindingKind::kComputeBound));
  set_.facts["mm"].calls_exp = true;
  EXPECT_TRUE(proposesExp2(FindingKind::kComputeBound));
  EXPECT_TRUE(proposesExp2(FindingKind::kLatencyBound));
  EXPECT_TRUE(proposesExp2(FindingKind::kRegisterSpills));
  set_.facts["mm"].dots.clear();
  EXPECT_TRUE(proposesExp2(FindingKind::kMemoryBound));
  EXPECT_TRUE(proposesExp2(FindingKind::kComputeBound));
  set_.facts["mm"].calls_exp = false;
  EXPECT_FALSE(proposesExp2(FindingKind::kMemoryBound));
}

// Two dots in loops with an exponential between them (attention's online softmax) try the
// Gluon attention, in base e or base 2 (triton-lang/kernels' FlashAttention uses tl.math.exp2
// only: the rule once read tl.exp alone and never proposed the route for it).
TEST_F(RuleEngineTest, TwoLoopDotsWithAnExponentialTryGluonAttention) {
  auto proposes = [&](FindingKind kind) {
    for (const auto& p : rules_->propose(input({finding(kind)})).proposals) {
      if (p.kind == Proposal::Kind::kPass && p.pass == "gluon-attention") return true;
    }
    return false;
  };
  set_.facts["mm"].dots[0].in_loop = true;
  set_.facts["mm"].dots.push_back(set_.facts["mm"].dots[0]);
  EXPECT_FALSE(proposes(FindingKind::kLatencyBound));  // no exponential: two GEMMs
  set_.facts["mm"].calls_exp2 = true;
  EXPECT_TRUE(proposes(FindingKind::kLatencyBound));
  EXPECT_TRUE(proposes(FindingKind::kComputeBound));
  set_.facts["mm"].calls_exp2 = false;
  set_.facts["mm"].calls_exp = true;
  EXPECT_TRUE(proposes(FindingKind::kMemoryBound));
  set_.facts["mm"].dots.push_back(set_.facts["mm"].dots[0]);  // the keys in two loops: four dots
  set_.facts["mm"].dots.push_back(set_.facts["mm"].dots[0]);
  EXPECT_TRUE(proposes(FindingKind::kLatencyBound));
  set_.facts["mm"].dots.push_back(set_.facts["mm"].dots[0]);  // three in loops: not attention's form
  set_.facts["mm"].dots[1].in_loop = false;
  set_.facts["mm"].dots[2].in_loop = false;
  EXPECT_FALSE(proposes(FindingKind::kLatencyBound));
  set_.facts["mm"].dots.resize(2);  // one dot in the loop: not attention's form
  EXPECT_FALSE(proposes(FindingKind::kLatencyBound));
}

// A row kernel with two loops and an exp (cross-entropy): one read through online-softmax.
TEST_F(RuleEngineTest, LoopedExpKernelsWithoutDotsTryOnlineSoftmax) {
  auto proposes = [&](std::vector<EngineDiagnosis> d) {
    EngineOutput out = rules_->propose(input(std::move(d)));
    for (const auto& p : out.proposals) {
      if (p.kind == Proposal::Kind::kPass && p.pass == "online-softmax") return true;
    }
    return false;
  };
  EngineDiagnosis mem{"mm", Bottleneck::kMemoryBound, {}};
  mem.findings.push_back(finding(FindingKind::kMemoryBound).findings[0]);
  set_.facts["mm"].dots.clear();
  set_.facts["mm"].calls_exp = true;
  set_.facts["mm"].loops = 2;
  EXPECT_TRUE(proposes({mem}));
  set_.facts["mm"].loops = 1;
  EXPECT_FALSE(proposes({mem}));
  set_.facts["mm"].loops = 2;
  set_.facts["mm"].calls_exp = false;
  EXPECT_FALSE(proposes({mem}));
}

// A kernel without a dot that walks rows in two loops or more (softmax, layer norm) tries
// the eviction hints, exp or not; one loop, or a dot, does not.
TEST_F(RuleEngineTest, RowKernelsWithSeveralLoopsTryEvictionHints) {
  auto proposes = [&](FindingKind kind) {
    EngineOutput out = rules_->propose(input({finding(kind)}));
    for (const auto& p : out.proposals) {
      if (p.kind == Proposal::Kind::kPass && p.pass == "eviction-hints") return true;
    }
    return false;
  };
  set_.facts["mm"].loops = 2;
  EXPECT_FALSE(proposes(FindingKind::kMemoryBound));  // the GEMM's dot
  set_.facts["mm"].dots.clear();
  EXPECT_TRUE(proposes(FindingKind::kMemoryBound));
  EXPECT_TRUE(proposes(FindingKind::kLatencyBound));
  set_.facts["mm"].loops = 1;
  EXPECT_FALSE(proposes(FindingKind::kMemoryBound));
}

// tail-split finds its masks itself: every kernel with a loop and no dot, or two dots in
// loops (attention), whatever the finding, may try it; a GEMM's one dot keeps its K loop for
// the TMA descriptor loads; a kernel without a loop may not.
TEST_F(RuleEngineTest, KernelsWithALoopTryTailSplit) {
  auto proposes = [&](FindingKind kind) { return proposesPass(kind, "tail-split"); };
  set_.facts["mm"].loops = 1;
  ASSERT_FALSE(set_.facts["mm"].dots.empty());
  for (auto& d : set_.facts["mm"].dots) d.in_loop = true;
  set_.facts["mm"].dots.resize(1);
  EXPECT_FALSE(proposes(FindingKind::kComputeBound));  // a GEMM
  set_.facts["mm"].dots.push_back(set_.facts["mm"].dots[0]);
  EXPECT_TRUE(proposes(FindingKind::kComputeBound));  // attention's two dots
  EXPECT_TRUE(proposes(FindingKind::kMemoryBound));
  set_.facts["mm"].dots.clear();
  EXPECT_TRUE(proposes(FindingKind::kLatencyBound));
  set_.facts["mm"].loops = 0;
  EXPECT_FALSE(proposes(FindingKind::kMemoryBound));
}

// implicit-gemm finds its outer products itself: a kernel with a loop and no dot may try it,
// whatever the finding; a kernel with a dot, or without a loop, may not.
TEST_F(RuleEngineTest, LoopsWithoutADotTryImplicitGemm) {
  auto proposes = [&](FindingKind kind) { return proposesPass(kind, "implicit-gemm"); };
  set_.facts["mm"].loops = 1;
  ASSERT_FALSE(set_.facts["mm"].dots.empty());
  EXPECT_FALSE(proposes(FindingKind::kComputeBound));  // already a GEMM
  set_.facts["mm"].dots.clear();
  EXPECT_TRUE(proposes(FindingKind::kComputeBound));
  EXPECT_TRUE(proposes(FindingKind::kLatencyBound));
  set_.facts["mm"].loops = 0;
  EXPECT_FALSE(proposes(FindingKind::kComputeBound));
}

// split-rows answers a grid smaller than the GPU in a kernel with loops and no dot, with
// about 1,024 programs in all (and half that) from the grid the diagnosis measured.
TEST_F(RuleEngineTest, FewLongRowsTrySplitRows) {
  auto proposes = [&](FindingKind kind) { return proposesPass(kind, "split-rows"); };
  set_.facts["mm"].loops = 2;
  EXPECT_FALSE(proposes(FindingKind::kSmallGrid));  // a GEMM: split-k's business
  set_.facts["mm"].dots.clear();
  EXPECT_TRUE(proposes(FindingKind::kSmallGrid));
  EXPECT_FALSE(proposes(FindingKind::kMemoryBound));
  EngineDiagnosis d = finding(FindingKind::kSmallGrid);
  d.findings[0].evidence = {{"launch.grid_blocks", 4}, {"sms", 132}};
  EngineOutput out = rules_->propose(input({d}));
  nlohmann::json params;
  for (const auto& p : out.proposals) {
    if (p.kind == Proposal::Kind::kPass && p.pass == "split-rows") params = p.params;
  }
  EXPECT_EQ(params, (nlohmann::json{{"split", {128, 256}}}));
  set_.facts["mm"].loops = 0;
  EXPECT_FALSE(proposes(FindingKind::kSmallGrid));
}

// A row-wise kernel whose block spans the whole row: short rows lead to rows-per-program;
// a wide row that spills (in any case) leads to column-loop, since the block cannot shrink.
TEST(RuleEngineRows, ShortRowsAndSpillingWideRowsLeadToTheirPasses) {
  auto rowKernel = [](int64_t row) {
    TunableSet set;
    Tunable b;
    b.kernel = "softmax_kernel";
    b.param = "BLOCK_SIZE";
    b.id = "softmax_kernel.BLOCK_SIZE";
    b.role = TunableRole::kBlock;
    b.value = row;
    b.covers_dimension = true;
    b.tunable = false;
    set.items.push_back(b);
    Tunable w = b;
    w.param = "num_warps";
    w.id = "softmax_kernel.num_warps";
    w.role = TunableRole::kNumWarps;
    w.value = 4;
    w.covers_dimension = false;
    w.tunable = true;
    set.items.push_back(w);
    return set;
  };
  auto passesOf = [](const EngineOutput& out) {
    std::set<std::string> p;
    for (const auto& x : out.proposals) if (x.kind == Proposal::Kind::kPass) p.insert(x.pass);
    return p;
  };
  auto engine = makeRuleEngine();
  for (int64_t row : {256, 131072}) {
    TunableSet set = rowKernel(row);
    Space space(set, SpaceHints{});
    EngineInput in;
    in.tunables = &set;
    in.space = &space;
    in.best = space.baseline();
    for (PassName p : allPassNames()) in.passes.push_back(toString(p));
    EngineOutput quiet = engine->propose(in);
    if (row == 256) {
      ASSERT_EQ(quiet.findings.size(), 1u);
      EXPECT_EQ(quiet.findings[0].kind, FindingKind::kNarrowRows);
      EXPECT_EQ(passesOf(quiet), std::set<std::string>{"rows-per-program"});
      // The 2-D tile form first, then the loop; rows for about 1K and 4K values a program.
      for (const auto& x : quiet.proposals) {
        if (x.pass != "rows-per-program") continue;
        EXPECT_EQ(x.params["mode"], nlohmann::json::array({"block", "loop"}));
        EXPECT_EQ(x.params["rows"], nlohmann::json::array({4, 16}));
      }
      continue;
    }
    EXPECT_TRUE(quiet.findings.empty());
    EngineFinding spills;
    spills.id = "F1";
    spills.kind = FindingKind::kRegisterSpills;
    spills.kernel = "softmax_kernel";
    spills.evidence = {{"case", "M=256,N=131072"}};
    in.diagnosis = {EngineDiagnosis{"softmax_kernel", Bottleneck::kMemoryBound, {spills}}};
    EngineOutput out = engine->propose(in);
    EXPECT_EQ(passesOf(out), std::set<std::string>{"column-loop"});
    // Chunks of 32, 16, 64 and 8 elements per thread at the configuration's 4 warps...
    for (const auto& x : out.proposals) {
      if (x.pass == "column-loop") EXPECT_EQ(x.params.dump(), R"({"block":[4096,2048,8192,1024]})");
    }
    // ... or at the warps the kernel launched with, when the diagnosis saw them.
    EngineFinding occupancy;
    occupancy.id = "F2";
    occupancy.kind = FindingKind::kLowOccupancy;
    occupancy.kernel = "softmax_kernel";
    occupancy.evidence = {{"case", "M=256,N=32000"}, {"launch.warps", 16}};
    in.diagnosis = {EngineDiagnosis{"softmax_kernel", Bottleneck::kMemoryBound, {spills, occupancy}}};
    for (const auto& x : engine->propose(in).proposals) {
      if (x.pass == "column-loop") EXPECT_EQ(x.params.dump(), R"({"block":[16384,8192,32768,4096]})");
    }
    // A case whose row block (32768) compiled without spills and one whose block (131072)
    // spilled: rows below 131072 may keep the body as written (fits), two chunks with and
    // without it.
    in.case_kernels = nlohmann::json::array(
        {nlohmann::json::array({{{"name", "softmax_kernel"}, {"constexprs", {{"BLOCK_SIZE", 32768}}}, {"spills", 0}}}),
         nlohmann::json::array(
             {{{"name", "softmax_kernel"}, {"constexprs", {{"BLOCK_SIZE", 131072}}}, {"spills", 36}}})});
    for (const auto& x : engine->propose(in).proposals) {
      if (x.pass == "column-loop") EXPECT_EQ(x.params.dump(), R"({"block":[16384,8192],"fits":[131072,0]})");
    }
    // Every case spilled: no block is known to fit.
    in.case_kernels[0][0]["spills"] = 4;
    for (const auto& x : engine->propose(in).proposals) {
      if (x.pass == "column-loop") EXPECT_EQ(x.params.dump(), R"({"block":[16384,8192,32768,4096]})");
    }
  }
}

TEST(EngineJson, InputAndOutputRoundTrip) {
  TunableSet set = matmulTunables();
  Space space(set, SpaceHints{});
  EngineInput in;
  in.round = 2;
  in.source = "x = 1\n";
  in.tunables = &set;
  in.space = &space;
  in.history = {{space.baseline(), 1.0}, {space.baseline(), std::nullopt}};
  nlohmann::json j = in.toJson();
  EXPECT_EQ(j["protocol"], kEngineProtocol);
  EXPECT_EQ(j["tunables"][0]["id"], "mm.BLOCK_M");
  EXPECT_EQ(j["tunables"][0]["domain"].size(), 5u);
  EXPECT_EQ(j["kernels"]["mm"]["dots"], 1);
  EXPECT_TRUE(j["history"][1]["objective"].is_null());
  EXPECT_TRUE(j["best"].is_null());

  EngineOutput out = EngineOutput::fromJson(nlohmann::json::parse(R"({
      "findings": [{"kind": "small-grid", "kernel": "mm", "severity": 3, "summary": "16 programs"}],
      "proposals": [{"kind": "region", "region": {"mm.BLOCK_M": [32, 64]}, "share": 0.4, "findings": ["small-grid"]},
                    {"kind": "pass", "pass": "split-k", "kernel": "mm", "params": {"SPLIT_K": 4}}]})"),
                                            "test");
  ASSERT_EQ(out.proposals.size(), 2u);
  EXPECT_DOUBLE_EQ(out.findings[0].severity, 1.0);  // clamped
  EXPECT_EQ(out.proposals[0].region.at("mm.BLOCK_M"), (std::vector<int64_t>{32, 64}));
  EXPECT_EQ(out.proposals[1].params["SPLIT_K"], 4);
  EngineOutput back = EngineOutput::fromJson(out.toJson(), "again");
  EXPECT_EQ(back.toJson(), out.toJson());
  EXPECT_THROW(Proposal::fromJson({{"kind", "rewrite"}}, "x"), UserError);
  EXPECT_THROW(Proposal::fromJson({{"kind", "region"}, {"region", {{"a", {"big"}}}}}, "x"), UserError);
  EXPECT_THROW(Proposal::fromJson({{"kind", "pass"}}, "x"), UserError);
}

TEST(ExternalEngine, AProgramAnswersProposalsAndItsFailuresAreValues) {
  auto dir = test::tempDir("engine");
  test::writeFile(dir / "engine.py", R"(import json, sys
req = json.load(sys.stdin)
assert req["protocol"] == "tritonforge.engine/1"
ids = [t["id"] for t in req["tunables"]]
print(json.dumps({"findings": [{"kind": "small-grid", "summary": "round %d" % req["round"]}],
                  "proposals": [{"kind": "region", "region": {ids[0]: [64]}, "rationale": "try 64"}]}))
)");
  test::writeFile(dir / "bad.py", "print('not json')\n");
  TunableSet set = matmulTunables();
  Space space(set, SpaceHints{});
  EngineInput in;
  in.round = 3;
  in.tunables = &set;
  in.space = &space;
  std::string py = choosePython("");
  auto engine = makeEngine("cmd:" + py + " " + (dir / "engine.py").string());
  EngineOutput out = engine->propose(in);
  ASSERT_TRUE(out.error.empty()) << out.error;
  ASSERT_EQ(out.proposals.size(), 1u);
  EXPECT_EQ(out.proposals[0].region.at("mm.BLOCK_M"), std::vector<int64_t>{64});
  EXPECT_EQ(out.findings[0].summary, "round 3");
  EXPECT_EQ(out.findings[0].source, "engine");
  EngineOutput bad = makeEngine("cmd:" + py + " " + (dir / "bad.py").string())->propose(in);
  EXPECT_NE(bad.error.find("not JSON"), std::string::npos) << bad.error;
  EngineOutput failed = makeEngine("cmd:exit 4")->propose(in);
  EXPECT_NE(failed.error.find("exit code 4"), std::string::npos) << failed.error;
  EXPECT_THROW(makeEngine("llm"), UserError);
  // A finding outside the vocabulary is a malformed answer: the round goes on without it.
  test::writeFile(dir / "guess.py", "print('{\"findings\": [{\"kind\": \"guess\"}]}')\n");
  EngineOutput guess = makeEngine("cmd:" + py + " " + (dir / "guess.py").string())->propose(in);
  EXPECT_NE(guess.error.find("'guess' is not a finding kind"), std::string::npos) << guess.error;
  EXPECT_EQ(makeEngine("none")->propose(in).proposals.size(), 0u);
}

}  // namespace
}  // namespace tf


namespace tf {
namespace {

// Once the space is exhausted, the launch options outside it: maxnreg where registers alone
// keep another block off an SM, at the limits that let one or two more fit; num_ctas=2 for a
// kernel with a dot on sm_90; each move left says why.
TEST(LaunchOptionMoves, RegisterLimitsAndClustersWhereTheyCanPay) {
  ModuleIR ir;
  TunableSet set;
  set.facts["mm"] = KernelFacts{};
  set.facts["mm"].dots.push_back(DotFact{});
  set.facts["add"] = KernelFacts{};
  Base base;
  base.ir = &ir;
  base.tunables = &set;
  EngineInput in;
  in.passes = {"launch"};
  // mm: 8 warps at 168 registers a thread, 32 KiB of shared memory: registers allow one block
  // (168 * 256 threads = 43008 of 65536); 128 allow two, 80 allow three. add: 4 warps at 32
  // registers, limited by nothing but the warps.
  in.best_kernels = nlohmann::json::array(
      {{{"name", "mm"}, {"num_warps", 8}, {"registers", 168}, {"shared_bytes", 32768}},
       {{"name", "add"}, {"num_warps", 4}, {"registers", 32}, {"shared_bytes", 0}}});
  EngineOutput out;
  nlohmann::json moves = addLaunchOptions(base, in, {{"cc", {9, 0}}, {"sms", 132}}, &out);
  std::vector<nlohmann::json> params;
  for (const auto& p : out.proposals) {
    EXPECT_EQ(p.pass, "launch");
    EXPECT_EQ(p.kernel, "mm");
    params.push_back(p.params);
  }
  EXPECT_EQ(params, (std::vector<nlohmann::json>{{{"maxnreg", 128}}, {{"maxnreg", 80}}, {{"num_ctas", 2}}}));
  int left = 0;
  for (const auto& m : moves) {
    if (m["proposed"].get<bool>()) continue;
    ++left;
    EXPECT_EQ(m["kernel"], "add");
    EXPECT_FALSE(m["reason"].get<std::string>().empty());
  }
  EXPECT_EQ(left, 2);  // add: registers do not limit it; no dot for a cluster

  // An autotuned kernel whose configs are no literal list: both moves left, with the reason.
  Kernel tuned;
  tuned.name = "add";
  tuned.autotune = AutotuneInfo{};
  ir.kernels.push_back(tuned);
  out = EngineOutput{};
  moves = addLaunchOptions(base, in, {{"cc", {9, 0}}}, &out);
  int autotuned_left = 0;
  for (const auto& m : moves) {
    if (m["kernel"] == "add" && !m["proposed"].get<bool>() &&
        m["reason"].get<std::string>().find("not a literal list") != std::string::npos) {
      ++autotuned_left;
    }
  }
  EXPECT_EQ(autotuned_left, 2) << moves.dump();
  ir.kernels.clear();

  // Before Hopper no cluster; without the launch pass switched on, nothing.
  out = EngineOutput{};
  addLaunchOptions(base, in, {{"cc", {8, 0}}}, &out);
  for (const auto& p : out.proposals) EXPECT_FALSE(p.params.contains("num_ctas"));
  out = EngineOutput{};
  in.passes = {"retile"};
  EXPECT_TRUE(addLaunchOptions(base, in, {{"cc", {9, 0}}}, &out).empty());
  EXPECT_TRUE(out.proposals.empty());
}

}  // namespace
}  // namespace tf

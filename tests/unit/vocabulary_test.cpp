// One vocabulary between the diagnosis and the engines (diagnose/vocabulary.h): every pass it
// names is a pass `transform --list` has; every finding kind and every occupancy limiter
// leads the rule engine to a proposal; and the diagnoses of the recorded Nsight Compute
// fixtures (tests/data/ncu/) go through the rule engine end to end, every finding answered.
#include <gtest/gtest.h>

#include <set>

#include "diagnose/diagnose.h"
#include "diagnose/vocabulary.h"
#include "measure/ncu_csv.h"
#include "search/engine.h"
#include "search/loop_diagnosis.h"
#include "support/test_support.h"
#include "transform/pass.h"

namespace tf {
namespace {

namespace fs = std::filesystem;

TEST(Vocabulary, EveryPassNameIsAListedPassAndBack) {
  for (PassName p : allPassNames()) EXPECT_NE(findPass(toString(p)), nullptr) << toString(p);
  for (const auto& pass : allPasses()) {
    EXPECT_TRUE(passNameFromString(pass->info().name)) << pass->info().name << " has no PassName";
  }
  EXPECT_FALSE(passNameFromString("block-pointers"));
}

TEST(Vocabulary, SpellingsRoundTripAndOldSpellingsAreRead) {
  for (FindingKind k : allFindingKinds()) EXPECT_EQ(findingKindFromString(toString(k)), k);
  for (PassName p : allPassNames()) EXPECT_EQ(passNameFromString(toString(p)), p);
  for (Limiter l : allLimiters()) EXPECT_EQ(limiterFromString(toString(l)), l);
  EXPECT_EQ(limiterFromString("shared memory"), Limiter::kSharedMemory);
  EXPECT_EQ(limiterFromString("shared_mem"), Limiter::kSharedMemory);
  EXPECT_EQ(limiterFromString("block size"), Limiter::kBlockSize);
  EXPECT_FALSE(findingKindFromString("slow"));
  EXPECT_FALSE(limiterFromString("registerz"));
}

// Every suggestion a rule of the diagnosis makes, gathered from the recorded fixtures and a
// sweep of launches, is a pass the loop can apply.
TEST(Vocabulary, DiagnosisSuggestionsNameListedPasses) {
  std::set<std::string> seen;
  for (const auto& e : fs::directory_iterator(test::sourceDir() / "tests/data/ncu")) {
    if (!fs::exists(e.path() / "raw.csv")) continue;
    for (const auto& k : kernelMetricsFromTable(readNcuRawCsv(e.path() / "raw.csv"))) {
      DiagnosisInput in;
      in.kernel = k.name;
      in.ncu = &k;
      for (const auto& f : diagnose(in).findings) {
        for (PassName p : f.suggestions) seen.insert(toString(p));
      }
    }
  }
  for (int warps : {1, 4, 32}) {
    for (int regs : {32, 255}) {
      DiagnosisInput in;
      in.kernel = "k";
      in.launch.grid_blocks = 200;
      in.launch.warps = warps;
      in.launch.registers = regs;
      in.launch.shared_bytes = 150000;
      in.launch.spills = 8;
      for (const auto& f : diagnose(in).findings) {
        for (PassName p : f.suggestions) seen.insert(toString(p));
      }
    }
  }
  EXPECT_GE(seen.size(), 4u);
  for (const auto& name : seen) EXPECT_NE(findPass(name), nullptr) << name;
}

TunableSet tunablesWith(bool dot) {
  TunableSet set;
  auto add = [&](const char* param, TunableRole role, int64_t value) {
    Tunable t;
    t.kernel = "k";
    t.param = param;
    t.id = std::string("k.") + param;
    t.role = role;
    t.value = value;
    set.items.push_back(t);
  };
  if (dot) {
    add("BLOCK_M", TunableRole::kTileM, 64);
    add("BLOCK_N", TunableRole::kTileN, 64);
    add("BLOCK_K", TunableRole::kTileK, 32);
    add("GROUP_M", TunableRole::kGroup, 1);
    set.facts["k"].dots.push_back(DotFact{"BLOCK_M", "BLOCK_N", "BLOCK_K", nullptr, true});
  } else {
    add("BLOCK", TunableRole::kBlock, 1024);
  }
  add("num_warps", TunableRole::kNumWarps, 4);
  add("num_stages", TunableRole::kNumStages, 3);
  return set;
}

size_t proposalsFor(const EngineFinding& f, bool dot) {
  TunableSet set = tunablesWith(dot);
  Space space(set, SpaceHints{});
  EngineInput in;
  in.tunables = &set;
  in.space = &space;
  in.best = space.baseline();
  for (const auto& t : set.items) (*in.best)[t.id] = *t.value;
  for (PassName p : allPassNames()) in.passes.push_back(toString(p));
  EngineDiagnosis d;
  d.kernel = "k";
  d.findings = {f};
  in.diagnosis = {d};
  auto engine = makeRuleEngine();
  size_t n = 0;
  for (const auto& p : engine->propose(in).proposals) {
    if (p.findings == std::vector<std::string>{f.id}) ++n;
  }
  return n;
}

TEST(Vocabulary, EveryFindingKindAndLimiterYieldsAProposal) {
  for (FindingKind k : allFindingKinds()) {
    // No built-in move rewrites torch's glue around a kernel yet: launcher-glue informs the
    // report and the engines that rewrite sources (llm:, cmd:), not the rules.
    if (k == FindingKind::kLauncherGlue) continue;
    EngineFinding f;
    f.id = "F1";
    f.kind = k;
    f.kernel = "k";
    f.severity = 0.8;
    bool dot_kernel_only = k == FindingKind::kNoTensorCores || k == FindingKind::kPoorL2Reuse ||
                           k == FindingKind::kSharedBankConflicts;
    EXPECT_GE(proposalsFor(f, true), 1u) << toString(k) << " on a dot kernel";
    if (!dot_kernel_only) EXPECT_GE(proposalsFor(f, false), 1u) << toString(k) << " on an elementwise kernel";
  }
  for (Limiter l : allLimiters()) {
    EngineFinding f;
    f.id = "F1";
    f.kind = FindingKind::kLowOccupancy;
    f.kernel = "k";
    f.limiter = l;
    EXPECT_GE(proposalsFor(f, true), 1u) << "low-occupancy limited by " << toString(l);
  }
}

// The recorded fixtures, diagnosed as `diagnose --ncu-csv` does and handed to the rule engine
// as the loop hands them: every finding of every fixture gets a proposal that cites it.
TEST(Vocabulary, RecordedDiagnosesReachTheRuleEngine) {
  int fixtures = 0;
  for (const auto& e : fs::directory_iterator(test::sourceDir() / "tests/data/ncu")) {
    if (!fs::exists(e.path() / "raw.csv") || !fs::exists(e.path() / "expected.json")) continue;
    nlohmann::json expected = nlohmann::json::parse(test::readFile(e.path() / "expected.json"));
    auto kernels = kernelMetricsFromTable(readNcuRawCsv(e.path() / "raw.csv"));
    for (const auto& k : kernels) {
      if (ncuBaseName(k.name) != expected["kernel"]) continue;
      DiagnosisInput in;
      in.kernel = ncuBaseName(k.name);
      in.ncu = &k;
      CompiledTexts texts;
      if (fs::exists(e.path() / "asm.ttgir")) texts.ttgir = test::readFile(e.path() / "asm.ttgir");
      if (fs::exists(e.path() / "asm.ptx")) texts.ptx = test::readFile(e.path() / "asm.ptx");
      if (!texts.empty()) in.static_facts = staticFactsFromTexts(texts);
      EngineDiagnosis d = toEngineDiagnosis(diagnose(in));
      bool dot = in.static_facts && in.static_facts->dots > 0;
      for (size_t i = 0; i < d.findings.size(); ++i) {
        EngineFinding f = d.findings[i];
        f.id = "F1";
        f.kernel = "k";
        EXPECT_GE(proposalsFor(f, dot), 1u) << e.path().filename() << ": " << toString(f.kind);
      }
      ++fixtures;
    }
  }
  EXPECT_GE(fixtures, 8);
}

}  // namespace
}  // namespace tf

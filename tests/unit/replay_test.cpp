// Replay: sweep files (format and errors), the search against recorded measurements, and
// the `tune --replay` command.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>

#include "search/replay.h"
#include "support/test_support.h"
#include "util/error.h"

namespace tf {
namespace {

const char* kSmallSweep =
    "# tritonforge-sweep/1\n"
    "# kernel=mm elem_bytes=2 gpu=\"Test GPU\" baseline=\"32,32,4\"\n"
    "BLOCK_M,BLOCK_N,num_warps,time_ms\n"
    "32,32,4,4.0\n"
    "64,32,4,3.0\n"
    "32,64,4,3.1\n"
    "64,64,4,2.0\n"
    "64,64,8,1.5\n"
    "128,64,8,1.2\n"
    "64,128,8,\n"
    "128,128,8,1.0\n"
    "128,128,4,1.1\n";

std::filesystem::path writeSweep(const std::string& text) {
  auto dir = test::tempDir("sweep");
  test::writeFile(dir / "s.csv", text);
  return dir / "s.csv";
}

std::string loadError(const std::string& text) {
  try {
    loadSweep(writeSweep(text));
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(Replay, LoadsASweepWithMetadataAndFailures) {
  Sweep s = loadSweep(writeSweep(kSmallSweep));
  EXPECT_EQ(s.kernel, "mm");
  EXPECT_EQ(s.params, (std::vector<std::string>{"BLOCK_M", "BLOCK_N", "num_warps"}));
  ASSERT_EQ(s.rows.size(), 9u);
  EXPECT_EQ(s.rows[1], (std::vector<int64_t>{64, 32, 4}));
  EXPECT_FALSE(s.times[6].has_value());
  EXPECT_EQ(s.statuses[6], "failed");
  EXPECT_EQ(s.meta["gpu"], "Test GPU");
  EXPECT_DOUBLE_EQ(*s.optimum(), 1.0);
  // Written back, it reads the same.
  Sweep again = loadSweep(writeSweep(sweepToCsv(s)));
  EXPECT_EQ(again.rows, s.rows);
  EXPECT_EQ(again.times, s.times);
  EXPECT_EQ(again.meta["baseline"], "32,32,4");
}

TEST(Replay, RejectsFilesThatAreNotSweeps) {
  EXPECT_NE(loadError("BLOCK,time\n1,2\n").find(":1: no time_ms column"), std::string::npos);
  EXPECT_NE(loadError("time_ms\n1\n").find("no parameter column"), std::string::npos);
  EXPECT_NE(loadError("BLOCK,time_ms\n64,1.0\n128\n").find(":3: 1 fields where the header has 2"), std::string::npos);
  EXPECT_NE(loadError("BLOCK,time_ms\n6x4,1.0\n").find("BLOCK = '6x4' is not an integer"), std::string::npos);
  EXPECT_NE(loadError("BLOCK,time_ms\n64,-1\n").find("not a positive number"), std::string::npos);
  EXPECT_NE(loadError("BLOCK,time_ms\n64,1\n64,2\n").find("row 2 repeats"), std::string::npos);
  EXPECT_NE(loadError("# only comments\n").find("empty sweep"), std::string::npos);
  EXPECT_NE(loadError("BLOCK,BLOCK,time_ms\n").find("appears twice"), std::string::npos);
  EXPECT_NE(loadError("BLOCK,time_ms\n").find("no rows"), std::string::npos);
}

TEST(Replay, RolesComeFromParameterNames) {
  EXPECT_EQ(roleFromName("BLOCK_M"), TunableRole::kTileM);
  EXPECT_EQ(roleFromName("BLOCK_SIZE_N"), TunableRole::kTileN);
  EXPECT_EQ(roleFromName("BK"), TunableRole::kTileK);
  EXPECT_EQ(roleFromName("GROUP_SIZE_M"), TunableRole::kGroup);
  EXPECT_EQ(roleFromName("BLOCK"), TunableRole::kBlock);
  EXPECT_EQ(roleFromName("num_warps"), TunableRole::kNumWarps);
  EXPECT_EQ(roleFromName("num_stages"), TunableRole::kNumStages);
  EXPECT_EQ(roleFromName("UNROLL"), TunableRole::kOther);
}

TEST(Replay, ExhaustiveFindsTheRecordedOptimumAndCountsFailures) {
  Sweep s = loadSweep(writeSweep(kSmallSweep));
  ReplayOptions o;
  o.strategy = "exhaustive";
  ReplayResult r = replaySweep(s, o);
  EXPECT_EQ(r.rows, 9u);
  EXPECT_EQ(r.reachable, 9u);
  EXPECT_EQ(r.evaluations, 8);  // the baseline row is preloaded, not evaluated
  EXPECT_EQ(*r.best_time, 1.0);
  EXPECT_EQ(*r.best_row, 7u);
  EXPECT_EQ(r.stop_reason, "space exhausted");
  std::set<size_t> rows;
  int failed = 0;
  for (const auto& e : r.order) {
    rows.insert(e.row);
    failed += e.time_ms ? 0 : 1;
  }
  EXPECT_EQ(rows.size(), 8u);
  EXPECT_EQ(failed, 1);
  nlohmann::json j = r.toJson(s);
  EXPECT_EQ(j["best"]["config"]["BLOCK_M"], 128);
  EXPECT_DOUBLE_EQ(j["gap"].get<double>(), 0.0);
  EXPECT_EQ(j["trace"][0]["kind"], "replay");
}

TEST(Replay, MaxEvalsBatchAndSeedAreHonoured) {
  Sweep s = loadSweep(test::sourceDir() / "tests/data/sweeps/synthetic_matmul_4096x4096x4096.csv");
  ReplayOptions o;
  o.strategy = "random";
  o.max_evals = 13;
  o.batch = 4;
  o.seed = 11;
  ReplayResult a = replaySweep(s, o);
  EXPECT_EQ(a.evaluations, 13);
  EXPECT_EQ(a.rounds, 4);  // 4 + 4 + 4 + 1
  EXPECT_EQ(a.order.size(), 13u);
  EXPECT_EQ(a.order.back().round, 4);
  ReplayResult b = replaySweep(s, o);
  ASSERT_EQ(a.order.size(), b.order.size());
  for (size_t i = 0; i < a.order.size(); ++i) EXPECT_EQ(a.order[i].row, b.order[i].row);
  o.seed = 12;
  ReplayResult c = replaySweep(s, o);
  bool differs = false;
  for (size_t i = 0; i < a.order.size(); ++i) differs |= a.order[i].row != c.order[i].row;
  EXPECT_TRUE(differs);
}

TEST(Replay, RooflineTargetStopsEarly) {
  std::string text = kSmallSweep;
  text.insert(text.find("BLOCK_M,"), "# roofline_ms=0.9\n");
  Sweep s = loadSweep(writeSweep(text));
  ReplayOptions o;
  o.strategy = "exhaustive";
  o.within_roofline_pct = 25;   // 1.125 ms or better
  o.batch = 1;                  // stop conditions are checked between rounds
  ReplayResult r = replaySweep(s, o);
  EXPECT_LE(*r.best_time, 1.125);
  EXPECT_EQ(r.stop_reason, "within the target of the roofline");
  EXPECT_LT(r.evaluations, 8);
  o.within_roofline_pct.reset();
  Sweep no_roof = loadSweep(writeSweep(kSmallSweep));
  o.within_roofline_pct = 5;
  EXPECT_THROW(replaySweep(no_roof, o), UserError);
}

TEST(Replay, TuneCommandPrintsTheBestAndTheEvaluations) {
  auto path = writeSweep(kSmallSweep);
  auto [rc, out] = test::runShell(fmt::format("{} tune --replay {} --strategy exhaustive", test::tritonforgeBinary().string(),
                                              path.string()));
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("best: BLOCK_M=128 BLOCK_N=128 num_warps=8  1.0000 ms"), std::string::npos) << out;
  EXPECT_NE(out.find("evaluations: 8 "), std::string::npos) << out;
  auto [rc2, js] = test::runShell(fmt::format("{} tune --replay {} --strategy random --max-evals 3 --seed 2 --json",
                                              test::tritonforgeBinary().string(), path.string()));
  ASSERT_EQ(rc2, 0) << js;
  auto j = nlohmann::json::parse(js);
  EXPECT_EQ(j["evaluations"], 3);
  EXPECT_EQ(j["strategy"], "random");
  auto [rc3, err] = test::runShell(fmt::format("{} tune --replay /nonexistent.csv", test::tritonforgeBinary().string()));
  EXPECT_EQ(rc3, 2) << err;
  auto [rc4, err4] = test::runShell(fmt::format("{} tune --replay {} --strategy sa", test::tritonforgeBinary().string(),
                                                path.string()));
  EXPECT_EQ(rc4, 2);
  EXPECT_NE(err4.find("unknown search strategy 'sa'"), std::string::npos) << err4;
}

}  // namespace
}  // namespace tf

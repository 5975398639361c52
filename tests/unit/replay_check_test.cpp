// The verdict on a captured kernel replayed twice as written (capture/replay_check.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "capture/replay_check.h"
#include "util/error.h"
#include "util/fs.h"

namespace tf {
namespace {

using Json = nlohmann::json;

Json run(bool exact, double max_abs, double needed, double scale) {
  return {{"exact", exact}, {"max_abs", max_abs}, {"needed_atol", needed}, {"scale", scale},
          {"nan_mismatch", false}, {"int_mismatch", false}};
}

Json reply(Json runs, bool equal, double between = 0) {
  return {{"status", "ok"}, {"cases", Json::array({{{"runs", runs}, {"runs_equal", equal}, {"between_max_abs", between}}})}};
}

TEST(ReplayCheck, BitForBitIsReproduced) {
  auto v = judgeReplays(reply({run(true, 0, 0, 5), run(true, 0, 0, 5)}, true), 1e-4, 1e-4);
  EXPECT_EQ(v.kind, ReplayVerdict::Kind::kReproduced);
  EXPECT_TRUE(v.tunable());
  EXPECT_DOUBLE_EQ(v.atol, 1e-4);
}

TEST(ReplayCheck, DifferencesTheToleranceAcceptsChangeNothing) {
  auto v = judgeReplays(reply({run(false, 3e-5, 0, 5), run(false, 2e-5, 0, 5)}, false, 1e-5), 1e-4, 1e-4);
  EXPECT_EQ(v.kind, ReplayVerdict::Kind::kWithin);
  EXPECT_DOUBLE_EQ(v.atol, 1e-4);
  EXPECT_NE(v.line.find("differ from each other"), std::string::npos) << v.line;
}

TEST(ReplayCheck, AtolIsWidenedUpToWhatRtolAllowsAtTheLargestMagnitude) {
  // needed 2e-4 > atol 1e-4; rtol * scale = 1e-4 * 10 = 1e-3: widened to 2 * needed.
  auto v = judgeReplays(reply({run(false, 2e-4, 2e-4, 10), run(false, 1e-4, 1e-4, 10)}, false, 2e-4), 1e-4, 1e-4);
  EXPECT_EQ(v.kind, ReplayVerdict::Kind::kWidened);
  EXPECT_DOUBLE_EQ(v.atol, 4e-4);
  // needed 8e-4: twice that is beyond the bound, which caps it.
  v = judgeReplays(reply({run(false, 8e-4, 8e-4, 10), run(true, 0, 0, 10)}, false, 8e-4), 1e-4, 1e-4);
  EXPECT_EQ(v.kind, ReplayVerdict::Kind::kWidened);
  EXPECT_DOUBLE_EQ(v.atol, 1e-3);
}

TEST(ReplayCheck, LargerDifferencesAreNotReplayableAndSayWhy) {
  auto varies = judgeReplays(reply({run(false, 5, 5, 10), run(false, 4, 4, 10)}, false, 3), 1e-4, 1e-4);
  EXPECT_EQ(varies.kind, ReplayVerdict::Kind::kNotReplayable);
  EXPECT_FALSE(varies.tunable());
  EXPECT_NE(varies.line.find("randomness or a race"), std::string::npos) << varies.line;
  auto state = judgeReplays(reply({run(false, 5, 5, 10), run(false, 5, 5, 10)}, true), 1e-4, 1e-4);
  EXPECT_EQ(state.kind, ReplayVerdict::Kind::kNotReplayable);
  EXPECT_NE(state.line.find("not saved"), std::string::npos) << state.line;
}

TEST(ReplayCheck, NansIntegersAndFailuresAreNotReplayable) {
  Json r = run(false, 0, 0, 1);
  r["nan_mismatch"] = true;
  EXPECT_EQ(judgeReplays(reply({run(true, 0, 0, 1), r}, false), 1, 1).kind, ReplayVerdict::Kind::kNotReplayable);
  r = run(false, 0, 0, 1);
  r["int_mismatch"] = true;
  auto ints = judgeReplays(reply({r, r}, true), 1, 1);
  EXPECT_EQ(ints.kind, ReplayVerdict::Kind::kNotReplayable);
  EXPECT_NE(ints.line.find("integers"), std::string::npos) << ints.line;
  Json failed = {{"status", "ok"}, {"cases", Json::array({{{"runs", Json::array()}, {"error", "RuntimeError: boom"}}})}};
  auto f = judgeReplays(failed, 1e-4, 1e-4);
  EXPECT_EQ(f.kind, ReplayVerdict::Kind::kNotReplayable);
  EXPECT_NE(f.line.find("RuntimeError: boom"), std::string::npos) << f.line;
}

TEST(ReplayCheck, NoGpuIsNotChecked) {
  auto v = judgeReplays({{"status", "no_gpu"}, {"message", "no CUDA GPU is visible to the worker"}}, 1e-4, 1e-4);
  EXPECT_EQ(v.kind, ReplayVerdict::Kind::kNotChecked);
  EXPECT_TRUE(v.tunable());
}

TEST(ReplayCheck, SetTaskAtolRewritesTheCheckLineOnly) {
  auto dir = std::filesystem::temp_directory_path() / "tf_replay_check_test";
  std::filesystem::create_directories(dir);
  auto file = dir / "task.toml";
  writeFileAtomic(file, "name = \"k\"\n\n[check]\nrtol = 0.0001\natol = 0.0001\nseeds = 1\n");
  setTaskAtol(file, 4e-4, "widened: seen 2e-4");
  EXPECT_EQ(readTextFile(file, "task", 1 << 20),
            "name = \"k\"\n\n[check]\nrtol = 0.0001\n# widened: seen 2e-4\natol = 0.0004\nseeds = 1\n");
  writeFileAtomic(file, "name = \"k\"\n");
  EXPECT_THROW(setTaskAtol(file, 1, "x"), UserError);
  std::filesystem::remove_all(dir);
}

TEST(ReplayCheck, EachOutputGetsAnAtolFromItsOwnMagnitude) {
  // Two outputs: a bf16 one of magnitude 3 and an fp32 partial sum of magnitude 2e-4; the
  // task's atol (the loosest dtype's, 0.016) is far above the second's values.
  nlohmann::json reply = {
      {"cases",
       {{{"runs",
          {{{"outputs", {{{"scale", 3.0}, {"needed_atol", 0.0}}, {{"scale", 2e-4}, {"needed_atol", 0.0}}}}},
           {{"outputs", {{{"scale", 2.5}, {"needed_atol", 0.0}}, {{"scale", 1e-4}, {"needed_atol", 1e-6}}}}}}}},
        {{"runs", {{{"outputs", {{{"scale", 1.0}, {"needed_atol", 0.0}}, {{"scale", 1e-4}, {"needed_atol", 0.0}}}}}}}}}}};
  auto atols = outputAtols(reply, 0.016, 0.016);
  ASSERT_EQ(atols.size(), 2u);
  EXPECT_DOUBLE_EQ(atols[0], 0.016);         // 0.016 * 3 is looser than the task's: the task's
  EXPECT_DOUBLE_EQ(atols[1], 0.016 * 2e-4);  // its own magnitude, above twice what replays needed
  reply["cases"][0]["runs"][1]["outputs"][1]["needed_atol"] = 1e-5;
  EXPECT_DOUBLE_EQ(outputAtols(reply, 0.016, 0.016)[1], 2e-5);
  EXPECT_TRUE(outputAtols(nlohmann::json::object(), 0.016, 0.016).empty());

  auto dir = std::filesystem::temp_directory_path() / "tf_replay_output_atol_test";
  std::filesystem::create_directories(dir);
  auto file = dir / "task.toml";
  writeFileAtomic(file, "name = \"k\"\n\n[check]\nrtol = 0.016\natol = 0.016\nseeds = 1\n");
  setTaskOutputAtol(file, {0.016, 3.2e-6}, "why");
  const std::string once = readTextFile(file, "task", 1 << 20);
  EXPECT_EQ(once, "name = \"k\"\n\n[check]\nrtol = 0.016\natol = 0.016\n# why\noutput_atol = [0.016, 3.2e-06]\nseeds = 1\n");
  setTaskOutputAtol(file, {0.01, 1e-6}, "again");  // replaces, never stacks
  EXPECT_EQ(readTextFile(file, "task", 1 << 20),
            "name = \"k\"\n\n[check]\nrtol = 0.016\natol = 0.016\n# again\noutput_atol = [0.01, 1e-06]\nseeds = 1\n");
  writeFileAtomic(file, "name = \"k\"\n");
  EXPECT_THROW(setTaskOutputAtol(file, {1.0}, "x"), UserError);
  std::filesystem::remove_all(dir);
}

TEST(ReplayCheck, PoisoningIsRecordedPerCaseAndTheWeakestNamesTheTask) {
  auto dir = std::filesystem::temp_directory_path() / "tf_replay_poison_test";
  std::filesystem::create_directories(dir);
  auto plan = dir / "replay.json";
  writeFileAtomic(plan, R"({"kernel": "k", "cases": [{"spans": []}, {"spans": []}, {"spans": []}]})");
  nlohmann::json reply = {{"cases",
                           {{{"case", {{"launch", 0}}}, {"poison", "outputs"}},
                            {{"case", {{"launch", 1}}}, {"poison", "written"}},
                            {{"case", {{"launch", 2}}}, {"poison", "outputs"}}}}};
  EXPECT_EQ(recordPoisoning(plan, reply), "written");
  auto written = nlohmann::json::parse(readTextFile(plan, "plan", 1 << 20));
  EXPECT_EQ(written["kernel"], "k");
  EXPECT_EQ(written["cases"][0]["poison"], "outputs");
  EXPECT_EQ(written["cases"][1]["poison"], "written");
  EXPECT_EQ(written["cases"][2]["poison"], "outputs");
  // A case the reply leaves without a mode (an error, an older worker), or an unknown one: none.
  reply["cases"][1].erase("poison");
  reply["cases"][2]["poison"] = "everything";
  EXPECT_EQ(recordPoisoning(plan, reply), "none");
  written = nlohmann::json::parse(readTextFile(plan, "plan", 1 << 20));
  EXPECT_EQ(written["cases"][1]["poison"], "none");
  EXPECT_EQ(written["cases"][2]["poison"], "none");
  EXPECT_NE(poisoningLine("outputs").find("NaN"), std::string::npos);
  EXPECT_NE(poisoningLine("none").find("reads what it writes"), std::string::npos);
  writeFileAtomic(plan, "[1, 2]");
  EXPECT_THROW(recordPoisoning(plan, reply), UserError);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tf

// `tritonforge export`: per-shape bests of a result.json, as @triton.autotune (applied through
// the autotune pass, then read back by `analyze`) and as a dispatch table whose Python helper
// picks the nearest tuned shape.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "report/config_export.h"
#include "store/results_db.h"
#include "support/test_support.h"
#include "util/error.h"
#include "worker/worker_process.h"

namespace tf {
namespace {

namespace fs = std::filesystem;

const char* const kSource = test::kAddKernelSource;

nlohmann::json candidate(int id, const std::string& kind, int base, nlohmann::json config, const std::string& status,
                         double t0, double t1) {
  auto one = [&](double t) {
    return nlohmann::json{{"status", status}, {"timing", {{"median_ms", t}, {"q1_ms", t}, {"q3_ms", t}}}};
  };
  return {{"id", id},         {"kind", kind},   {"base", base},
          {"config", config}, {"status", status}, {"cases", nlohmann::json::array({one(t0), one(t1)})}};
}

// Case N=1048576 is fastest with BLOCK 256 / 8 warps (candidate 1), case N=4096 with BLOCK 64
// / 2 warps (candidate 2); candidate 3 is faster on both but wrong, candidate 4 belongs to a
// pass's rewrite (another source), candidate 5 is a pass's output (or a per-shape dispatch) on
// base 0: another source too.
fs::path writeResult(const fs::path& dir) {
  test::writeFile(dir / "add.py", kSource);
  nlohmann::json as_written = {{"add_kernel.BLOCK", "as-written"}, {"add_kernel.num_warps", "as-written"}};
  nlohmann::json result = {
      {"schema", "tritonforge.optimize/1"},
      {"status", "improved"},
      {"task",
       {{"name", "add"},
        {"source", (dir / "add.py").string()},
        {"cases", nlohmann::json::array({{{"N", 1048576}}, {{"N", 4096}}})}}},
      {"tunables", nlohmann::json::array({{{"id", "add_kernel.BLOCK"}, {"kernel", "add_kernel"}, {"param", "BLOCK"},
                                           {"value", 128}},
                                          {{"id", "add_kernel.num_warps"}, {"kernel", "add_kernel"},
                                           {"param", "num_warps"}, {"value", 4}}})},
      {"candidates",
       nlohmann::json::array(
           {candidate(0, "baseline", 0, as_written, "ok", 2.0, 4.0),
            candidate(1, "config", 0, {{"add_kernel.BLOCK", 256}, {"add_kernel.num_warps", 8}}, "ok", 1.0, 3.0),
            candidate(2, "config", 0, {{"add_kernel.BLOCK", 64}, {"add_kernel.num_warps", 2}}, "ok", 1.5, 2.5),
            candidate(3, "config", 0, {{"add_kernel.BLOCK", 512}, {"add_kernel.num_warps", 8}}, "wrong-result", 0.1, 0.1),
            candidate(4, "pass", 1, {{"add_kernel.BLOCK", 1024}, {"add_kernel.num_warps", 8}}, "ok", 0.5, 0.5),
            candidate(5, "pass", 0, nlohmann::json::object(), "ok", 0.4, 0.4)})}};
  test::writeFile(dir / "result.json", result.dump(2));
  return dir / "result.json";
}

std::pair<int, std::string> runTf(const std::string& args) {
  return test::runShell(fmt::format("{} --python {} {} 2>&1", test::tritonforgeBinary().string(),
                                    test::workerOptions().python, args));
}

TEST(ExportConfigs, TheBestVerifiedConfigurationOfEachShape) {
  fs::path dir = test::tempDir("export_table");
  nlohmann::json result = nlohmann::json::parse(test::readFile(writeResult(dir)));
  ShapeTable t = bestPerShape(result, "result.json");
  ASSERT_EQ(t.shapes.size(), 2u);
  EXPECT_EQ(t.shapes[0].candidate, 1);
  EXPECT_EQ(t.shapes[1].candidate, 2);
  EXPECT_EQ(t.shapes[0].params.at("add_kernel"), (std::map<std::string, int64_t>{{"BLOCK", 256}, {"num_warps", 8}}));
  EXPECT_DOUBLE_EQ(t.shapes[1].as_written_ms, 4.0);
  EXPECT_EQ(autotuneConfigsArg(t, "add_kernel"), "[BLOCK=256 num_warps=8; BLOCK=64 num_warps=2]");
  EXPECT_EQ(t.keys, std::vector<std::string>{"N"});
  // An as-written value is filled in from the tunables.
  result["candidates"][1]["config"]["add_kernel.num_warps"] = "as-written";
  EXPECT_EQ(autotuneConfigsArg(bestPerShape(result, "r"), "add_kernel"), "[BLOCK=256 num_warps=4; BLOCK=64 num_warps=2]");
  result["schema"] = "tritonforge.profile/1";
  EXPECT_THROW(bestPerShape(result, "r"), UserError);
}

TEST(ExportCli, AutotuneRoundTripsThroughAnalyzeAndNeverTouchesTheSource) {
  fs::path dir = test::tempDir("export_autotune");
  fs::path result = writeResult(dir);
  auto [rc, out] = runTf("export " + result.string());
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("@triton.autotune("), std::string::npos) << out;
  EXPECT_NE(out.find("key="), std::string::npos) << out;
  EXPECT_NE(out.find("triton.Config({'BLOCK': 256}, num_warps=8)"), std::string::npos) << out;
  EXPECT_NE(out.find("key=['n']"), std::string::npos) << out;

  fs::path copy = dir / "add_tuned.py";
  auto [rc1, out1] = runTf(fmt::format("export {} --format autotune -o {}", result.string(), copy.string()));
  ASSERT_EQ(rc1, 0) << out1;
  EXPECT_EQ(test::readFile(dir / "add.py"), kSource);
  auto [rc2, analyzed] = test::runShell(fmt::format("{} --python {} analyze {} --json 2>/dev/null",
                                                    test::tritonforgeBinary().string(), test::workerOptions().python,
                                                    copy.string()));
  ASSERT_EQ(rc2, 0) << analyzed;
  nlohmann::json a = nlohmann::json::parse(analyzed);
  nlohmann::json autotune;
  for (const auto& k : a["kernels"]) {
    if (k["name"] == "add_kernel") autotune = k["autotune"];
  }
  ASSERT_TRUE(autotune.is_object()) << analyzed;
  ASSERT_EQ(autotune["configs"].size(), 2u) << autotune.dump();
  EXPECT_EQ(autotune["configs"][0]["kwargs"]["BLOCK"], 256) << autotune.dump();
  EXPECT_EQ(autotune["configs"][0]["options"]["num_warps"], 8) << autotune.dump();
  EXPECT_EQ(autotune["configs"][1]["kwargs"]["BLOCK"], 64) << autotune.dump();
  EXPECT_EQ(autotune["key"], nlohmann::json::array({"n"})) << autotune.dump();
}

TEST(ExportCli, ATableAndItsHelperPickTheNearestTunedShape) {
  fs::path dir = test::tempDir("export_dispatch");
  fs::path result = writeResult(dir);
  fs::path table = dir / "t" / "add_dispatch.json";
  auto [rc, out] = runTf(fmt::format("export {} --format table -o {}", result.string(), table.string()));
  ASSERT_EQ(rc, 0) << out;
  nlohmann::json j = nlohmann::json::parse(test::readFile(table));
  EXPECT_EQ(j["schema"], "tritonforge.dispatch/1");
  EXPECT_EQ(j["entries"][1]["config"]["add_kernel"]["BLOCK"], 64);
  EXPECT_DOUBLE_EQ(j["entries"][1]["speedup"].get<double>(), 1.6);
  auto [rc1, picked] = test::runShell(fmt::format(
      "cd {} && {} -c 'import tritonforge_dispatch as d; t = d.load(\"add_dispatch.json\"); "
      "print(d.pick(t, N=5000)[\"config\"][\"add_kernel\"][\"BLOCK\"], d.pick(t, N=1 << 19)[\"case\"][\"N\"], "
      "d.pick(t, N=4096)[\"candidate\"])'",
      (dir / "t").string(), choosePython("")));
  ASSERT_EQ(rc1, 0) << picked;
  EXPECT_EQ(picked, "64 1048576 2\n");

  auto [rc2, bad] = runTf("export " + (dir / "add.py").string());
  EXPECT_EQ(rc2, 2) << bad;
  EXPECT_NE(bad.find("not valid JSON"), std::string::npos) << bad;
  auto [rc3, fmt_bad] = runTf(fmt::format("export {} --format csv", result.string()));
  EXPECT_EQ(rc3, 2) << fmt_bad;
}

// A results database: the best of every run of the task in the run's environment (an
// earlier run's rows included), on the source as written; another environment, a pass's
// source and a wrong result are not candidates.
TEST(ExportCli, FromAResultsDatabaseTheBestItKnowsPerShape) {
  fs::path dir = test::tempDir("export_db");
  fs::path dbp = dir / "results.sqlite";
  MeasureEnv h200{"NVIDIA H200", "580.159.04", "3.6.0", 1};
  MeasureEnv h100{"NVIDIA H100", "580.159.04", "3.6.0", 1};
  const std::string n1 = R"({"N":1048576})", n2 = R"({"N":4096})";
  auto put = [&](ResultsDb& db, int64_t run, const std::string& base, const std::string& params, const std::string& c,
                 const std::string& status, std::optional<double> t, MeasureEnv env) {
    db.putMeasurement({"task-add", base, "v" + params, params, c, env}, status, t, {{"status", status}}, run);
  };
  {
    auto db = ResultsDb::open(dbp);
    RunInfo info;
    info.task_name = "add";
    info.task_path = (dir / "missing" / "task.toml").string();
    info.task_hash = "task-add";
    info.source_hash = "src";
    info.env = h200;
    const std::string keep = R"({"add_kernel.BLOCK":"as-written"})";
    const std::string b256 = R"({"add_kernel.BLOCK":256})", b64 = R"({"add_kernel.BLOCK":64})";
    int64_t r1 = db->beginRun(info);
    put(*db, r1, "src", keep, n1, "ok", 2.0, h200);
    put(*db, r1, "src", keep, n2, "ok", 4.0, h200);
    put(*db, r1, "src", b256, n1, "ok", 1.0, h200);
    put(*db, r1, "src", b256, n2, "ok", 3.0, h200);
    db->finishRun(r1, "done", nlohmann::json::object());
    int64_t r2 = db->beginRun(info);
    put(*db, r2, "src", b64, n1, "ok", 1.5, h200);
    put(*db, r2, "src", b64, n2, "ok", 2.5, h200);
    put(*db, r2, "src", R"({"add_kernel.BLOCK":512})", n1, "wrong-result", std::nullopt, h200);
    put(*db, r2, "pass-made", R"({"add_kernel.BLOCK":1024})", n2, "ok", 0.1, h200);
    put(*db, r2, "src", R"({"add_kernel.BLOCK":32})", n2, "ok", 0.2, h100);
    db->finishRun(r2, "done", nlohmann::json::object());
  }
  auto [rc, out] = runTf(fmt::format("export {} --format table", dbp.string()));
  ASSERT_EQ(rc, 0) << out;
  nlohmann::json j = nlohmann::json::parse(out.substr(out.find('{')));
  ASSERT_EQ(j["entries"].size(), 2u) << out;
  EXPECT_EQ(j["entries"][0]["config"]["add_kernel"]["BLOCK"], 256);
  EXPECT_EQ(j["entries"][1]["config"]["add_kernel"]["BLOCK"], 64);
  EXPECT_DOUBLE_EQ(j["entries"][1]["speedup"].get<double>(), 1.6);
  // The autotune form edits the source, which the run's task file no longer leads to.
  auto [rc1, no_src] = runTf("export " + dbp.string());
  EXPECT_EQ(rc1, 2) << no_src;
  EXPECT_NE(no_src.find("task file could not be read"), std::string::npos) << no_src;
  auto [rc2, no_run] = runTf(fmt::format("export {} --run 9 --format table", dbp.string()));
  EXPECT_EQ(rc2, 2) << no_run;
  EXPECT_NE(no_run.find("no run 9"), std::string::npos) << no_run;
}

}  // namespace
}  // namespace tf

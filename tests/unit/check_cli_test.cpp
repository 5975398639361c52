// `tritonforge check` and `optimize --save-baseline`, with the fake GPU worker
// (tests/worker_fakes/fake_gpu_worker.py): its knobs plant a slowdown on one case
// (TF_FAKE_SLOWER), a wrong result (TF_FAKE_WRONG) and another Triton (TF_FAKE_TRITON).
// Also the statistics of measure/regression_check.h on numbers worked out by hand.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "measure/regression_check.h"
#include "report/check_report.h"
#include "store/baseline_file.h"
#include "support/test_support.h"
#include "util/error.h"
#include "worker/worker_process.h"

namespace tf {
namespace {

namespace fs = std::filesystem;

const char* const kSource = test::kAddKernelSource;

fs::path writeTask(const std::string& name) {
  return test::writeAddTask(name, "[ { N = 1048576 }, { N = 4096, scale = 2 } ]");
}

std::string fakePython() { return (test::sourceDir() / "tests/worker_fakes/fake_gpu_python").string(); }

// `env` and the fake worker's interpreter, then the tritonforge command line.
std::pair<int, std::string> runTf(const std::string& env, const std::string& args, bool fake = true) {
  return test::runShell(fmt::format("TF_FAKE_REAL_PYTHON={} TF_FAKE_RUN_S=0.001 {} {} {} {} 2>&1", choosePython(""),
                                    env, test::tritonforgeBinary().string(),
                                    fake ? "--python " + fakePython() : std::string(), args));
}

// The fake task optimized (exhaustively, parameters only) with --save-baseline, and the
// optimized source adopted as the task's source, as a user commits it with its baseline.
struct Tuned {
  fs::path dir, baseline;
  nlohmann::json result;
};

Tuned tuned(const std::string& name) {
  Tuned t;
  t.dir = writeTask(name);
  t.baseline = t.dir / "baseline.json";
  auto [rc, out] = test::runShell(fmt::format(
      "TF_FAKE_REAL_PYTHON={} TF_FAKE_RUN_S=0.001 {} --python {} optimize {} --no-db --out {} --jobs 2 "
      "--strategy exhaustive --no-passes --max-candidates 12 --stall-rounds 0 --save-baseline {} --json 2>/dev/null",
      choosePython(""), test::tritonforgeBinary().string(), fakePython(), (t.dir / "task.toml").string(),
      (t.dir / "out").string(), t.baseline.string()));
  EXPECT_EQ(rc, 0) << out;
  t.result = nlohmann::json::parse(out);
  fs::copy_file(t.dir / "out/add/add.py", t.dir / "add.py", fs::copy_options::overwrite_existing);
  return t;
}

std::string check(const Tuned& t, const std::string& extra = "") {
  return fmt::format("check {} --baseline {} --repeats 3 {}", (t.dir / "task.toml").string(), t.baseline.string(),
                     extra);
}

// Runs Python's XML parser on a JUnit file: {tests, failures, "name:type" of each failure}.
nlohmann::json parseJUnit(const fs::path& file) {
  auto [rc, out] = test::runShell(fmt::format(
      "{} -c 'import json, sys, xml.etree.ElementTree as ET\n"
      "root = ET.parse(sys.argv[1]).getroot()\n"
      "cases = root.findall(\".//testcase\")\n"
      "fails = [c.get(\"classname\") + \"/\" + c.get(\"name\") + \":\" + c.find(\"failure\").get(\"type\") "
      "for c in cases if c.find(\"failure\") is not None]\n"
      "print(json.dumps({{\"root\": root.tag, \"tests\": len(cases), \"failures\": fails, "
      "\"declared\": int(root.get(\"failures\"))}}))' {}",
      choosePython(""), file.string()));
  EXPECT_EQ(rc, 0) << out;
  return nlohmann::json::parse(out);
}

TEST(CheckCli, SaveBaselineRecordsTheBestPerCaseAndTheToolchain) {
  Tuned t = tuned("check_save");
  BaselineFile b = loadBaselineFile(t.baseline);
  ASSERT_EQ(b.tasks.count("add"), 1u);
  const BaselineEntry& e = b.tasks.at("add");
  ASSERT_EQ(e.cases.size(), 2u);
  const auto& per_case = t.result["best"]["per_case"];
  EXPECT_DOUBLE_EQ(e.cases[0].time_ms, per_case[0]["time_ms"].get<double>());
  EXPECT_DOUBLE_EQ(e.cases[1].time_ms, per_case[1]["time_ms"].get<double>());
  EXPECT_EQ(e.cases[1].shape, nlohmann::json({{"N", 4096}, {"scale", 2}}));
  EXPECT_NEAR(e.cases[0].noise, 0.002, 1e-9);  // the fake's IQR: 0.999 .. 1.001 of the median
  EXPECT_EQ(e.toolchain.gpu, "Fake GPU");
  EXPECT_EQ(e.toolchain.driver, "fake-1.0");
  EXPECT_EQ(e.toolchain.torch, "fake");
  EXPECT_EQ(e.toolchain.tritonforge, TRITONFORGE_VERSION);
  EXPECT_EQ(e.config, t.result["best"].value("config", nlohmann::json::object()));
  // A file that is no baseline file is refused before the run and left as it was.
  test::writeFile(t.dir / "notes.json", "{\"schema\": \"something else\"}");
  auto [rc, out] = runTf("", fmt::format("optimize {} --no-db --out {} --save-baseline {}",
                                         (t.dir / "task.toml").string(), (t.dir / "out2").string(),
                                         (t.dir / "notes.json").string()));
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("notes.json: schema: expected"), std::string::npos) << out;
  EXPECT_EQ(test::readFile(t.dir / "notes.json"), "{\"schema\": \"something else\"}");
  EXPECT_FALSE(fs::exists(t.dir / "out2"));
}

TEST(CheckCli, TheKernelAsTunedPassesAndASlowdownOnOneCaseFails) {
  Tuned t = tuned("check_slow");
  auto [rc, out] = runTf("", check(t, "--junit " + (t.dir / "ok.xml").string()));
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("2 case(s): 0 regressed, 0 failed"), std::string::npos) << out;
  EXPECT_EQ(out.find("Toolchain changed"), std::string::npos) << out;
  nlohmann::json ok = parseJUnit(t.dir / "ok.xml");
  EXPECT_EQ(ok["tests"], 2);
  EXPECT_EQ(ok["failures"].size(), 0u);

  // 1.3x slower on the second case only: named, in the summary and in the JUnit file.
  auto [rc1, out1] = runTf("TF_FAKE_SLOWER='N=4096*1.3'", check(t, "--junit " + (t.dir / "slow.xml").string()));
  EXPECT_EQ(rc1, 1) << out1;
  EXPECT_NE(out1.find("| N=4096,scale=2 |"), std::string::npos) << out1;
  EXPECT_NE(out1.find("regression: 30.0% slower"), std::string::npos) << out1;
  EXPECT_NE(out1.find("2 case(s): 1 regressed, 0 failed"), std::string::npos) << out1;
  nlohmann::json slow = parseJUnit(t.dir / "slow.xml");
  EXPECT_EQ(slow["root"], "testsuites");
  EXPECT_EQ(slow["tests"], 2);
  EXPECT_EQ(slow["declared"], 1);
  EXPECT_EQ(slow["failures"], nlohmann::json::array({"add/N=4096,scale=2:regression"}));

  // Within the noise band (1%): not a regression.
  auto [rc2, out2] = runTf("TF_FAKE_SLOWER='N=4096*1.005'", check(t));
  EXPECT_EQ(rc2, 0) << out2;
  EXPECT_NE(out2.find("within the noise (+0.5%"), std::string::npos) << out2;
}

// The recorded best read from a results database (--db): the latest finished optimize run
// of the task, its best's times per case; a planted slowdown on one case is caught the same.
TEST(CheckCli, TheRecordedBestComesFromAResultsDatabase) {
  fs::path dir = writeTask("check_db");
  fs::path db = dir / "results.sqlite";
  auto [rc0, out0] = test::runShell(fmt::format(
      "TF_FAKE_REAL_PYTHON={} TF_FAKE_RUN_S=0.001 {} --python {} optimize {} --db {} --out {} --jobs 2 "
      "--strategy exhaustive --no-passes --max-candidates 12 --stall-rounds 0 --json 2>/dev/null",
      choosePython(""), test::tritonforgeBinary().string(), fakePython(), (dir / "task.toml").string(), db.string(),
      (dir / "out").string()));
  ASSERT_EQ(rc0, 0) << out0;
  nlohmann::json result = nlohmann::json::parse(out0);
  fs::copy_file(dir / "out/add/add.py", dir / "add.py", fs::copy_options::overwrite_existing);
  BaselineFile b = baselineFromResultsDb(db, {"add", "other"});
  ASSERT_EQ(b.tasks.size(), 1u);  // no run of "other"
  const BaselineEntry& e = b.tasks.at("add");
  ASSERT_EQ(e.cases.size(), 2u);
  EXPECT_EQ(e.config, result["best"].value("config", nlohmann::json::object()));
  EXPECT_EQ(e.toolchain.gpu, "Fake GPU");
  const BaselineCase* big = e.find(nlohmann::json({{"N", 4096}, {"scale", 2}}));
  ASSERT_NE(big, nullptr);
  EXPECT_GT(big->time_ms, 0);
  std::string check_db = fmt::format("check {} --db {} --repeats 3", (dir / "task.toml").string(), db.string());
  auto [rc, out] = runTf("", check_db);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("2 case(s): 0 regressed, 0 failed"), std::string::npos) << out;
  auto [rc1, out1] = runTf("TF_FAKE_SLOWER='N=4096*1.3'", check_db);
  EXPECT_EQ(rc1, 1) << out1;
  EXPECT_NE(out1.find("2 case(s): 1 regressed, 0 failed"), std::string::npos) << out1;
  // One place for the recorded best: both or neither is bad input.
  auto [rc2, out2] = runTf("", check_db + " --baseline " + (dir / "b.json").string());
  EXPECT_EQ(rc2, 2) << out2;
  EXPECT_NE(out2.find("--baseline FILE or --db FILE"), std::string::npos) << out2;
  auto [rc3, out3] = runTf("", fmt::format("check {}", (dir / "task.toml").string()));
  EXPECT_EQ(rc3, 2) << out3;
  // A file that is no results database: one line naming it, exit 2.
  test::writeFile(dir / "notes.txt", "not a database");
  auto [rc4, out4] = runTf("", fmt::format("check {} --db {}", (dir / "task.toml").string(), (dir / "notes.txt").string()));
  EXPECT_EQ(rc4, 2) << out4;
  EXPECT_NE(out4.find("notes.txt"), std::string::npos) << out4;
}

// --json: the report alone on stdout, the verdict of each case in it (the Python API reads it).
TEST(CheckCli, JsonReportNamesEachCasesVerdict) {
  Tuned t = tuned("check_json");
  auto [rc, out] = test::runShell(fmt::format(
      "(TF_FAKE_REAL_PYTHON={} TF_FAKE_RUN_S=0.001 TF_FAKE_SLOWER='N=4096*1.3' {} --python {} {} --json 2>/dev/null)",
      choosePython(""), test::tritonforgeBinary().string(), fakePython(), check(t)));
  EXPECT_EQ(rc, 1) << out;
  nlohmann::json j = nlohmann::json::parse(out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << out;
  EXPECT_EQ(j["schema"], "tritonforge.check/1");
  EXPECT_EQ(j["failed"], true);
  ASSERT_EQ(j["tasks"].size(), 1u);
  const auto& cases = j["tasks"][0]["cases"];
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0]["verdict"], "ok");
  EXPECT_EQ(cases[1]["verdict"], "regressed");
  EXPECT_NEAR(cases[1]["ratio"].get<double>(), 1.3, 0.1);
  EXPECT_GT(cases[1]["baseline"]["time_ms"].get<double>(), 0);
  EXPECT_GT(cases[1]["now"]["time_ms"].get<double>(), cases[1]["baseline"]["time_ms"].get<double>());
}

TEST(CheckCli, AWrongResultFailsAndAChangedToolchainIsReported) {
  Tuned t = tuned("check_wrong");
  auto [rc, out] = runTf("TF_FAKE_WRONG='def add'", check(t, "--junit " + (t.dir / "wrong.xml").string()));
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("wrong-result: fake: output 0 differs"), std::string::npos) << out;
  nlohmann::json wrong = parseJUnit(t.dir / "wrong.xml");
  EXPECT_EQ(wrong["failures"],
            nlohmann::json::array({"add/N=1048576:wrong-result", "add/N=4096,scale=2:wrong-result"}));

  auto [rc1, out1] = runTf("TF_FAKE_TRITON=9.9.9", check(t));
  EXPECT_EQ(rc1, 0) << out1;
  EXPECT_NE(out1.find("**Toolchain changed since the baseline**"), std::string::npos) << out1;
  EXPECT_NE(out1.find(" -> 9.9.9"), std::string::npos) << out1;
  EXPECT_NE(out1.find("re-tune"), std::string::npos) << out1;
}

TEST(CheckCli, BadInputIsOneLineAndExitTwoAndNoGpuIsThree) {
  fs::path dir = writeTask("check_bad");
  std::string task = (dir / "task.toml").string();
  auto oneLine = [](const std::string& s) { return std::count(s.begin(), s.end(), '\n') == 1; };
  struct Bad {
    std::string text, expect;
  };
  for (const Bad& b : {Bad{"{not json", "is not valid JSON"},
                       Bad{R"({"schema": "tritonforge.optimize/1", "tasks": {}})", "schema: expected"},
                       Bad{R"({"schema": "tritonforge.baseline/1", "tasks": {"add": {"environment": {},
                           "config": {}, "cases": [{"case": {"N": 1}, "time_ms": "fast", "noise": 0}]}}})",
                           "task add case 0: \"time_ms\" is a string, not a number"}}) {
    test::writeFile(dir / "bad.json", b.text);
    auto [rc, out] = runTf("", fmt::format("check {} --baseline {}", task, (dir / "bad.json").string()));
    EXPECT_EQ(rc, 2) << out;
    EXPECT_TRUE(oneLine(out)) << out;
    EXPECT_NE(out.find((dir / "bad.json").string() + ": "), std::string::npos) << out;
    EXPECT_NE(out.find(b.expect), std::string::npos) << out;
  }
  auto [rc, out] = runTf("", fmt::format("check {} --baseline {}", task, (dir / "missing.json").string()));
  EXPECT_EQ(rc, 2) << out;
  EXPECT_TRUE(oneLine(out)) << out;
  EXPECT_NE(out.find("missing.json"), std::string::npos) << out;

  // A well-formed baseline, no GPU (the real worker, without torch here or without a GPU).
  test::writeFile(dir / "empty.json", R"({"schema": "tritonforge.baseline/1", "tasks": {}})");
  WorkerOptions wo = test::workerOptions(true);
  auto [rc3, out3] = runTf("", fmt::format("--python {} check {} --baseline {}", wo.python, task,
                                        (dir / "empty.json").string()),
                        false);
  if (test::gpuAvailable()) GTEST_SKIP() << "a GPU is visible: the no-GPU exit is not testable here";
  EXPECT_EQ(rc3, 3) << out3;
  EXPECT_NE(out3.find("nothing checked"), std::string::npos) << out3;
}

TEST(CheckCli, RetuneStartsFromTheRecordedBestAndSavesTheNewBest) {
  Tuned t = tuned("check_retune");
  ASSERT_EQ(t.result["status"], "improved") << t.result["best"].dump();
  const nlohmann::json recorded = loadBaselineFile(t.baseline).tasks.at("add").config;
  test::writeFile(t.dir / "add.py", kSource);  // the kernel as written, not the recorded best
  fs::path out_dir = t.dir / "retuned";
  auto [rc, out] = runTf("", check(t, "--retune --budget 20 --out " + out_dir.string()));
  EXPECT_TRUE(rc == 0 || rc == 1) << out;
  EXPECT_NE(out.find("- add: re-tuned from the recorded best"), std::string::npos) << out;
  nlohmann::json result = nlohmann::json::parse(test::readFile(out_dir / "add/result.json"));
  const nlohmann::json* warm = nullptr;
  for (const auto& c : result["candidates"]) {
    if (c["origin"] == "warm start") warm = &c;
  }
  ASSERT_NE(warm, nullptr) << result["candidates"].dump();
  EXPECT_EQ((*warm)["round"], 1);
  for (const auto& [id, v] : recorded.items()) {
    if (v.is_number_integer()) {
      EXPECT_EQ((*warm)["config"][id], v) << id;
    }
  }
  // The new best is saved in the baseline file.
  const BaselineEntry after = loadBaselineFile(t.baseline).tasks.at("add");
  EXPECT_EQ(after.config, result["best"].value("config", nlohmann::json::object()));
  EXPECT_DOUBLE_EQ(after.cases[0].time_ms, result["best"]["per_case"][0]["time_ms"].get<double>());
}

TEST(RegressionCheck, NoiseIsAConfidenceIntervalOverRepeatsOrTheSpreadWithinARun) {
  std::vector<TimingStats> runs;
  for (double m : {1.0, 1.02, 0.98, 1.01, 0.99}) {
    TimingStats t;
    t.median_ms = m;
    t.q1_ms = m * 0.999;
    t.q3_ms = m * 1.001;
    runs.push_back(t);
  }
  RepeatedTiming r = summarizeRepeats(runs);
  EXPECT_DOUBLE_EQ(r.time_ms, 1.0);
  // stdev 0.0158114, t(0.975, 4) = 2.776: 2.776 * 0.0158114 / sqrt(5) = 0.019630
  EXPECT_NEAR(r.ci, 0.019630, 1e-5);
  EXPECT_NEAR(r.within, 0.002, 1e-9);
  EXPECT_NEAR(r.noise, 0.019630, 1e-5);
  RepeatedTiming one = summarizeRepeats({runs[0]});
  EXPECT_EQ(one.ci, 0);
  EXPECT_NEAR(one.noise, 0.002, 1e-9);

  // band = max(1%, 0.5% + 1.963%) = 2.463%: 1.02 / 1.0 is within, 1.0 / 0.97 is beyond.
  CaseCheck c;
  c.now = r;
  c.baseline = BaselineCase{nlohmann::json::object(), "x", 0.98, 0.005};
  judgeCase(c, 0.01);
  EXPECT_EQ(c.verdict, CaseVerdict::kOk);
  EXPECT_NEAR(c.band, 0.02463, 1e-5);
  c.baseline->time_ms = 0.97;
  judgeCase(c, 0.01);
  EXPECT_EQ(c.verdict, CaseVerdict::kRegressed);
  c.baseline->time_ms = 1.04;
  judgeCase(c, 0.01);
  EXPECT_EQ(c.verdict, CaseVerdict::kFaster);
  c.status = CandidateStatus::kWrongResult;
  judgeCase(c, 0.01);
  EXPECT_EQ(c.verdict, CaseVerdict::kFailed);
}

TEST(RegressionCheck, JUnitEscapesWhatItQuotes) {
  EXPECT_EQ(xmlEscape("a<b & \"c\" 'd'>\x01"), "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
}

}  // namespace
}  // namespace tf

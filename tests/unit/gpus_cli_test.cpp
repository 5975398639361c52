// `--gpus` and several tasks, with the fake GPU worker (tests/worker_fakes/fake_gpu_worker.py:
// TF_FAKE_GPUS GPUs, TF_FAKE_GPU_MODELS their models, TF_FAKE_LANE_SLOW a slower GPU, and a
// worker pinned with CUDA_VISIBLE_DEVICES sees its GPU only). Shown here: the selection's
// parsing and resolution; candidates spread over the lanes; a speed-up is always measured
// within one lane (a GPU twice as slow changes nothing in the result); GPUs of two models
// each tune the task for themselves; several tasks are scheduled over the GPUs, each into its
// own output folder; bad input is one line and exit 2.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <map>
#include <set>

#include "support/test_support.h"
#include "util/error.h"
#include "worker/gpu_selection.h"
#include "worker/measurement.h"
#include "worker/worker_process.h"

namespace tf {
namespace {

namespace fs = std::filesystem;

TEST(GpuSelection, ParsesAllCountsAndLists) {
  EXPECT_TRUE(parseGpuSelection("").isDefault());
  EXPECT_EQ(parseGpuSelection("all").kind, GpuSelection::Kind::kAll);
  GpuSelection two = parseGpuSelection("2");
  EXPECT_EQ(two.kind, GpuSelection::Kind::kCount);
  EXPECT_EQ(two.count, 2);
  GpuSelection list = parseGpuSelection("3,1");
  EXPECT_EQ(list.kind, GpuSelection::Kind::kList);
  EXPECT_EQ(list.list, (std::vector<int>{3, 1}));
  for (const char* bad : {"0", "x", "1,", "1,1", "-1", "1;2", " 1"}) {
    EXPECT_THROW(parseGpuSelection(bad), UserError) << bad;
  }
}

TEST(GpuSelection, ResolvesAgainstTheHelloAndKeepsTheUsersNumbering) {
  nlohmann::json hello = {{"gpu", {{"name", "A"}, {"device_count", 3},
                                   {"devices", {{{"index", 0}, {"name", "A"}}, {{"index", 1}, {"name", "B"}},
                                                {{"index", 2}, {"name", "A"}}}}}}};
  auto all = resolveGpus(parseGpuSelection("all"), hello, "");
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[1].device, "1");
  EXPECT_EQ(all[1].name, "B");
  // CUDA_VISIBLE_DEVICES=4,5,7 in the environment: lane 2 is the user's GPU 7.
  auto list = resolveGpus(parseGpuSelection("2,0"), hello, "4,5,7");
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].device, "7");
  EXPECT_EQ(list[1].device, "4");
  EXPECT_EQ(resolveGpus(parseGpuSelection("2"), hello, "").size(), 2u);
  try {
    resolveGpus(parseGpuSelection("4"), hello, "");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "--gpus 4: only 3 GPUs are visible");
  }
  EXPECT_THROW(resolveGpus(parseGpuSelection("0,3"), hello, ""), UserError);
  EXPECT_TRUE(resolveGpus(parseGpuSelection("all"), nlohmann::json{{"gpu", nullptr}}, "").empty());
  auto groups = groupByModel(all);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].size(), 2u);
  EXPECT_EQ(groups[0][1].device, "2");
  EXPECT_EQ(modelSlug("NVIDIA H200 (SXM)"), "nvidia-h200-sxm");
  auto split = splitLanes(all, 2);
  ASSERT_EQ(split.size(), 2u);
  EXPECT_EQ(split[0].size() + split[1].size(), 3u);
  EXPECT_EQ(splitLanes(all, 5).size(), 3u);
}

fs::path writeTask(const fs::path& dir, const std::string& name) {
  fs::create_directories(dir);
  test::writeFile(dir / (name + ".py"), test::kAddKernelSource);
  test::writeFile(dir / (name + "_harness.py"),
                  "def make_inputs(case, seed):\n    raise NotImplementedError\n\n\ndef reference(x, y):\n    return x + y\n");
  test::writeFile(dir / (name + ".toml"),
                  fmt::format("name = \"{0}\"\nsource = \"{0}.py\"\nlauncher = \"add\"\nharness = \"{0}_harness.py\"\n"
                              "cases = [ {{ N = 1048576 }}, {{ N = 4096, scale = 2 }} ]\n",
                              name));
  return dir / (name + ".toml");
}

// runShell adds 2>&1: a subshell keeps stderr out of the JSON when asked.
std::pair<int, std::string> optimize(const std::string& env, const std::string& args, bool with_stderr = false) {
  return test::runShell(fmt::format(
      "(TF_FAKE_REAL_PYTHON={} TF_FAKE_RUN_S=0.005 {} {} --python {} optimize {} --jobs 2 {})", choosePython(""), env,
      test::tritonforgeBinary().string(), (test::sourceDir() / "tests/worker_fakes/fake_gpu_python").string(), args,
      with_stderr ? "2>&1" : "2>/dev/null"));
}

std::vector<nlohmann::json> readLog(const fs::path& p) {
  std::vector<nlohmann::json> out;
  std::ifstream in(p);
  std::string line;
  while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line));
  return out;
}

const char* kSearch = "--no-db --no-passes --strategy exhaustive --max-candidates 12 --stall-rounds 0 --seed 3 --json";

TEST(GpusCli, BadSelectionsAreOneLineAndExitTwo) {
  fs::path dir = test::tempDir("gpus_bad");
  fs::path task = writeTask(dir, "add");
  for (auto [gpus, want] : std::vector<std::pair<std::string, std::string>>{
           {"0,x", "--gpus 0,x: 'x' is not a GPU index"},
           {"3", "--gpus 3: only 2 GPUs are visible"},
           {"0,2", "--gpus 0,2: there is no GPU 2"}}) {
    auto [rc, out] = optimize("TF_FAKE_GPUS=2", fmt::format("{} --gpus {} --no-db --out {}", task.string(), gpus,
                                                            (dir / "out").string()),
                              true);
    EXPECT_EQ(rc, 2) << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
    EXPECT_NE(out.find(want), std::string::npos) << out;
  }
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(GpusCli, TwoGpusSpreadCandidatesAndEachIsScoredOnItsOwnGpu) {
  fs::path dir = test::tempDir("gpus_two");
  fs::path task = writeTask(dir, "add");
  auto [rc1, out1] = optimize("", fmt::format("{} --out {} {}", task.string(), (dir / "one").string(), kSearch));
  ASSERT_EQ(rc1, 0) << out1;
  nlohmann::json one = nlohmann::json::parse(out1);
  EXPECT_FALSE(one.contains("gpus"));  // a single-GPU run's result is as before
  // GPU 1 is twice as slow: a candidate it measures compared with GPU 0's baseline would look
  // twice as slow. Scored against its own GPU's baseline, nothing changes.
  fs::path log = dir / "runs.jsonl";
  auto [rc2, out2] = optimize(fmt::format("TF_FAKE_GPUS=2 TF_FAKE_LANE_SLOW='1*2.0' TF_FAKE_GPU_LOG={}", log.string()),
                              fmt::format("{} --gpus all --out {} {}", task.string(), (dir / "two").string(), kSearch));
  ASSERT_EQ(rc2, 0) << out2;
  const nlohmann::json two = nlohmann::json::parse(out2);  // one task: one result object, as before
  ASSERT_EQ(two["gpus"].size(), 2u) << two["gpus"].dump();
  EXPECT_EQ(two["gpus"][1]["device"], "1");
  EXPECT_GT(two["gpus"][0]["measured"].get<int>(), 0);
  EXPECT_GT(two["gpus"][1]["measured"].get<int>(), 0);
  EXPECT_EQ(two["status"], one["status"]);
  EXPECT_EQ(two["best"]["config"], one["best"]["config"]);
  EXPECT_NEAR(two["speedup"].get<double>(), one["speedup"].get<double>(), 1e-9);
  // The same candidates with the same objectives (a round's order may differ: the strategy
  // weighs measured compile times, which vary from run to run).
  ASSERT_EQ(two["candidates"].size(), one["candidates"].size());
  std::map<std::string, nlohmann::json> by_config;
  for (const auto& a : one["candidates"]) by_config[a["config_text"].get<std::string>()] = a;
  for (const auto& b : two["candidates"]) {
    auto it = by_config.find(b["config_text"].get<std::string>());
    ASSERT_NE(it, by_config.end()) << b.dump();
    EXPECT_EQ(it->second["status"], b["status"]) << b["config_text"];
    if (it->second.contains("objective")) {
      EXPECT_NEAR(it->second["objective"].get<double>(), b["objective"].get<double>(), 1e-9) << b["config_text"];
    }
  }
  // The baseline ran on both GPUs; candidates on each.
  std::set<std::string> devices;
  for (const auto& r : readLog(log)) devices.insert(r["device"].get<std::string>());
  EXPECT_EQ(devices, (std::set<std::string>{"0", "1"}));
  // The output folder is the same as with one GPU.
  EXPECT_TRUE(fs::exists(dir / "two" / "add" / "result.json"));
}

TEST(GpusCli, GpusOfTwoModelsEachTuneTheTaskForThemselves) {
  fs::path dir = test::tempDir("gpus_models");
  fs::path task = writeTask(dir, "add");
  auto [rc, out] = optimize("TF_FAKE_GPUS=3 TF_FAKE_GPU_MODELS='Fake A,Fake B,Fake A'",
                            fmt::format("{} --gpus all --out {} {}", task.string(), (dir / "out").string(), kSearch));
  ASSERT_EQ(rc, 0) << out;
  nlohmann::json all = nlohmann::json::parse(out);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0]["environment"]["gpu"]["name"], "Fake A");
  EXPECT_EQ(all[0]["gpus"].size(), 2u);
  EXPECT_EQ(all[1]["environment"]["gpu"]["name"], "Fake B");
  EXPECT_FALSE(all[1].contains("gpus"));  // one lane of that model
  EXPECT_TRUE(fs::exists(dir / "out" / "fake-a" / "add" / "result.json"));
  EXPECT_TRUE(fs::exists(dir / "out" / "fake-b" / "add" / "result.json"));
  // --save-baseline holds one model's times.
  auto [rc2, out2] = optimize("TF_FAKE_GPUS=2 TF_FAKE_GPU_MODELS='Fake A,Fake B'",
                              fmt::format("{} --gpus all --out {} --save-baseline {} --no-db", task.string(),
                                          (dir / "out2").string(), (dir / "b.json").string()),
                              true);
  EXPECT_EQ(rc2, 2) << out2;
  EXPECT_NE(out2.find("--save-baseline with GPUs of different models"), std::string::npos) << out2;
}

TEST(GpusCli, SeveralTasksAreScheduledOverTheGpusEachIntoItsOwnFolder) {
  fs::path dir = test::tempDir("gpus_tasks");
  writeTask(dir / "tasks", "add");
  writeTask(dir / "tasks", "add2");
  writeTask(dir / "tasks", "add3");
  fs::path log = dir / "runs.jsonl";
  auto [rc, out] = optimize(fmt::format("TF_FAKE_GPUS=2 TF_FAKE_GPU_LOG={}", log.string()),
                            fmt::format("{} --gpus 2 --out {} {}", (dir / "tasks").string(), (dir / "out").string(),
                                        kSearch));
  ASSERT_EQ(rc, 0) << out;
  nlohmann::json all = nlohmann::json::parse(out);
  ASSERT_EQ(all.size(), 3u);
  for (const char* name : {"add", "add2", "add3"}) {
    EXPECT_TRUE(fs::exists(dir / "out" / name / "result.json")) << name;
  }
  for (const auto& r : all) EXPECT_FALSE(r.contains("gpus")) << "one GPU per task when tasks outnumber GPUs";
  std::set<std::string> devices;
  for (const auto& r : readLog(log)) devices.insert(r["device"].get<std::string>());
  EXPECT_EQ(devices, (std::set<std::string>{"0", "1"}));
  // Two tasks of the same name would write one folder: refused before anything runs.
  writeTask(dir / "other", "add");
  auto [rc2, out2] = optimize("", fmt::format("{} {} --out {} --no-db", (dir / "tasks" / "add.toml").string(),
                                              (dir / "other" / "add.toml").string(), (dir / "out3").string()),
                              true);
  EXPECT_EQ(rc2, 2) << out2;
  EXPECT_NE(out2.find("both tasks are named 'add'"), std::string::npos) << out2;
  EXPECT_FALSE(fs::exists(dir / "out3"));
  auto [rc3, out3] = optimize("", fmt::format("{} {} --out {} --no-db", (dir / "tasks" / "add.toml").string(),
                                              (dir / "missing").string(), (dir / "out4").string()),
                              true);
  EXPECT_EQ(rc3, 2) << out3;
  EXPECT_NE(out3.find("no such task file or folder"), std::string::npos) << out3;
}

TEST(GpusCli, SeveralTasksSaveOneBaselineFileThatCheckVerifiesOverTheGpus) {
  fs::path dir = test::tempDir("gpus_check");
  fs::path a = writeTask(dir / "tasks", "add");
  fs::path b = writeTask(dir / "tasks", "add2");
  fs::path baseline = dir / "baseline.json";
  auto [rc, out] = optimize("TF_FAKE_GPUS=2", fmt::format("{} {} --gpus 2 --out {} --save-baseline {} {}", a.string(),
                                                          b.string(), (dir / "out").string(), baseline.string(), kSearch));
  ASSERT_EQ(rc, 0) << out;
  // Both runs' entries are in the one file (saved one at a time).
  nlohmann::json saved = nlohmann::json::parse(test::readFile(baseline));
  EXPECT_TRUE(saved["tasks"].contains("add")) << saved.dump();
  EXPECT_TRUE(saved["tasks"].contains("add2")) << saved.dump();
  // The optimized sources adopted, as a team would commit them: check finds no regression.
  for (const char* name : {"add", "add2"}) {
    fs::copy_file(dir / "out" / name / (std::string(name) + ".py"), dir / "tasks" / (std::string(name) + ".py"),
                  fs::copy_options::overwrite_existing);
  }
  fs::path log = dir / "check.jsonl";
  auto [rc2, out2] = test::runShell(fmt::format(
      "(TF_FAKE_REAL_PYTHON={} TF_FAKE_RUN_S=0.001 TF_FAKE_GPUS=2 TF_FAKE_GPU_LOG={} {} --python {} check {} {} "
      "--baseline {} --gpus all --repeats 2 --json 2>/dev/null)",
      choosePython(""), log.string(), test::tritonforgeBinary().string(),
      (test::sourceDir() / "tests/worker_fakes/fake_gpu_python").string(), a.string(), b.string(), baseline.string()));
  ASSERT_EQ(rc2, 0) << out2;
  nlohmann::json report = nlohmann::json::parse(out2);
  ASSERT_EQ(report["tasks"].size(), 2u) << out2;
  EXPECT_EQ(report["tasks"][0]["name"], "add");  // in the order given, whichever GPU checked it
  EXPECT_EQ(report["tasks"][1]["name"], "add2");
  std::set<std::string> devices;
  for (const auto& r : readLog(log)) devices.insert(r["device"].get<std::string>());
  EXPECT_EQ(devices, (std::set<std::string>{"0", "1"}));
  // GPUs of two models: a baseline file holds one model's times.
  auto [rc3, out3] = test::runShell(fmt::format(
      "TF_FAKE_REAL_PYTHON={} TF_FAKE_GPUS=2 TF_FAKE_GPU_MODELS='A,B' {} --python {} check {} --baseline {} --gpus all "
      "2>&1",
      choosePython(""), test::tritonforgeBinary().string(),
      (test::sourceDir() / "tests/worker_fakes/fake_gpu_python").string(), a.string(), baseline.string()));
  EXPECT_EQ(rc3, 2) << out3;
  EXPECT_NE(out3.find("--gpus all: the GPUs are of different models"), std::string::npos) << out3;
}

// Runs that end with compiles still queued on the shared pool (the budget ran out while it
// compiled slowly): each waits for its own, which the past deadline cuts short, before its
// evaluator goes (they call back into it). Every run finishes and writes its result.
TEST(GpusCli, RunsThatEndWithCompilesQueuedOnTheSharedPoolFinishCleanly) {
  fs::path dir = test::tempDir("gpus_queued");
  std::string tasks;
  for (const char* name : {"add", "add2", "add3"}) tasks += writeTask(dir / "tasks", name).string() + " ";
  auto [rc, out] = optimize("TF_FAKE_GPUS=2 TF_FAKE_WARM_S=0.6",
                            fmt::format("{} --gpus all --budget 4 --no-db --no-passes --json --out {}", tasks,
                                        (dir / "out").string()));
  ASSERT_EQ(rc, 0) << out;
  nlohmann::json all = nlohmann::json::parse(out);
  ASSERT_EQ(all.size(), 3u);
  for (const auto& r : all) {
    EXPECT_LE(r["search"]["elapsed_s"].get<double>(), 4.5) << r["task"]["name"];
    EXPECT_TRUE(r["status"] == "improved" || r["status"] == "unchanged") << r["status"];
  }
}

TEST(GpusCli, ALostWorkerIsNotRunNotTheCandidatesFailure) {
  WorkerReply r;
  r.status = WorkerReply::Status::kFailed;
  r.error_type = "WorkerLost";
  r.message = "the Ray actor of lane 1 was lost: ActorDiedError";
  CaseMeasurement m = measurementFromReply(r);
  EXPECT_EQ(m.status, CandidateStatus::kNotRun);
  EXPECT_TRUE(m.worker_lost);
  EXPECT_EQ(m.message, "the measurement worker was lost: the Ray actor of lane 1 was lost: ActorDiedError");
  r.error_type = "WorkerCrashed";  // the worker under the actor died: the candidate's crash, as on one host
  r.result = {{"status", "crash"}};
  EXPECT_EQ(measurementFromReply(r).status, CandidateStatus::kCrash);
  EXPECT_FALSE(measurementFromReply(r).worker_lost);
}

}  // namespace
}  // namespace tf

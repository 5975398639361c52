// `optimize --effort quick|default|full` with the fake GPU worker
// (tests/worker_fakes/fake_gpu_worker.py): quick has the smaller budget and starts from the
// best configuration of an earlier run in the results database; full never stops for rounds
// without a gain, widens the spaces and proposes every pass; explicit flags override a preset;
// a bad value is one line and exit 2. Also report.html beside report.md.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/test_support.h"
#include "worker/worker_process.h"

namespace tf {
namespace {

namespace fs = std::filesystem;

fs::path writeTask(const std::string& name) {
  fs::path dir = test::tempDir(name);
  test::writeFile(dir / "add.py", test::kAddKernelSource);
  test::writeFile(dir / "add_harness.py",
                  "def make_inputs(case, seed):\n    raise NotImplementedError\n\n\ndef reference(x, y):\n    return x + y\n");
  test::writeFile(dir / "task.toml",
                  "name = \"add\"\nsource = \"add.py\"\nlauncher = \"add\"\nharness = \"add_harness.py\"\n"
                  "cases = [ { N = 1048576 }, { N = 4096, scale = 2 } ]\n");
  return dir;
}

// The fake worker's interpreter and `env`, then `optimize ARGS`; stderr is dropped so that
// stdout holds the JSON alone.
std::pair<int, std::string> optimizeJson(const fs::path& dir, const std::string& env, const std::string& args) {
  return test::runShell(fmt::format(
      "TF_FAKE_REAL_PYTHON={} TF_FAKE_RUN_S=0.001 {} {} --python {} optimize {} --out {} --jobs 2 --json {} 2>/dev/null",
      choosePython(""), env, test::tritonforgeBinary().string(),
      (test::sourceDir() / "tests/worker_fakes/fake_gpu_python").string(), (dir / "task.toml").string(),
      (dir / "out").string(), args));
}

std::vector<nlohmann::json> traceOf(const nlohmann::json& result, const std::string& kind) {
  std::vector<nlohmann::json> out;
  for (const auto& e : result["trace"]) {
    if (e["kind"] == kind) out.push_back(e["data"]);
  }
  return out;
}

TEST(EffortCli, BadValueIsOneLineAndExitTwo) {
  fs::path dir = writeTask("effort_bad");
  auto [rc, out] = test::runShell(fmt::format("{} optimize {} --effort fast --no-db --out {} 2>&1",
                                              test::tritonforgeBinary().string(), (dir / "task.toml").string(),
                                              (dir / "out").string()));
  EXPECT_EQ(rc, 2) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  EXPECT_NE(out.find("--effort must be quick, default or full, not 'fast'"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(EffortCli, QuickHasLessBudgetAndStartsFromTheDatabasesBest) {
  fs::path dir = writeTask("effort_quick");
  std::string db = (dir / "results.sqlite").string();
  // An earlier run, recorded in the database: its best is what quick starts from.
  auto [rc1, out1] = optimizeJson(dir, "", fmt::format("--db {} --strategy exhaustive --no-passes --max-candidates 12 "
                                                       "--stall-rounds 0",
                                                       db));
  ASSERT_EQ(rc1, 0) << out1;
  nlohmann::json first = nlohmann::json::parse(out1);
  ASSERT_EQ(first["status"], "improved") << first["best"].dump();
  EXPECT_EQ(first["search"]["effort"], "default");
  EXPECT_EQ(first["search"]["budget_s"], 60.0);
  const nlohmann::json best_config = first["best"]["config"];

  auto [rc2, out2] = optimizeJson(dir, "", fmt::format("--db {} --effort quick", db));
  ASSERT_EQ(rc2, 0) << out2;
  nlohmann::json quick = nlohmann::json::parse(out2);
  EXPECT_EQ(quick["search"]["effort"], "quick");
  EXPECT_EQ(quick["search"]["budget_s"], 20.0);
  EXPECT_EQ(quick["search"]["stall_rounds"], 1);
  EXPECT_EQ(quick["search"]["strategy_requested"], "local");
  auto warm = traceOf(quick, "warm-start");
  ASSERT_EQ(warm.size(), 1u) << quick["trace"].dump();
  ASSERT_EQ(warm[0]["configurations"].size(), 1u) << warm[0].dump();
  EXPECT_EQ(warm[0]["configurations"][0]["origin"], "warm start: run #1 of this task");
  // That configuration is measured in the first round.
  const nlohmann::json* c1 = nullptr;
  for (const auto& c : quick["candidates"]) {
    if (c["origin"] == "warm start: run #1 of this task") c1 = &c;
  }
  ASSERT_NE(c1, nullptr) << quick["candidates"].dump();
  EXPECT_EQ((*c1)["round"], 1);
  int compared = 0;
  for (const auto& [id, v] : best_config.items()) {
    if (!v.is_number_integer()) continue;
    EXPECT_EQ(warm[0]["configurations"][0]["config"][id], v) << id;
    EXPECT_EQ((*c1)["config"][id], v) << id;
    ++compared;
  }
  EXPECT_GT(compared, 0) << best_config.dump();
  // Measured first (the first run timed for another --timing-ms: not alike, not reused),
  // before the compile pool is awaited.
  EXPECT_FALSE((*c1)["reused"].get<bool>()) << c1->dump();
  auto warmFirst = [](const nlohmann::json& result, const std::string& origin) {
    int warm_at = -1, pool_at = -1, i = 0;
    for (const auto& e : result["trace"]) {
      if (e["kind"] == "candidate" && e["data"]["origin"].get<std::string>().rfind(origin, 0) == 0 && warm_at < 0) {
        warm_at = i;
      }
      if (e["kind"] == "compile-pool" && pool_at < 0) pool_at = i;
      ++i;
    }
    return warm_at >= 0 && pool_at > warm_at;
  };
  EXPECT_TRUE(warmFirst(quick, "warm start: run #1")) << quick["trace"].dump();
  // Parameters only: no pass was tried.
  EXPECT_TRUE(traceOf(quick, "pass-trial").empty());
  EXPECT_NE(test::readFile(dir / "out/add/report.md").find("- search: effort quick,"), std::string::npos);

  // --fresh: the warm start is measured again, on the measurement worker (compiled by its first
  // call) while the pool starts; the trace gives when it was done and its time per case.
  auto [rcf, outf] = optimizeJson(dir, "", fmt::format("--db {} --effort quick --fresh", db));
  ASSERT_EQ(rcf, 0) << outf;
  nlohmann::json fresh = nlohmann::json::parse(outf);
  EXPECT_TRUE(warmFirst(fresh, "warm start: run #")) << fresh["trace"].dump();
  bool measured_warm = false;
  for (const auto& c : traceOf(fresh, "candidate")) {
    if (c["origin"].get<std::string>().rfind("warm start: run #", 0) != 0) continue;
    measured_warm = true;
    EXPECT_FALSE(c["reused"].get<bool>()) << c.dump();
    EXPECT_EQ(c["status"], "ok") << c.dump();
    EXPECT_EQ(c["round"], 1) << c.dump();
    EXPECT_GT(c["done_s"].get<double>(), 0.0) << c.dump();
    ASSERT_EQ(c["time_ms"].size(), 2u) << c.dump();
    EXPECT_GT(c["time_ms"][0].get<double>(), 0.0) << c.dump();
  }
  EXPECT_TRUE(measured_warm) << fresh["trace"].dump();

  // An explicit flag overrides the preset; the rest of it stays.
  auto [rc3, out3] = optimizeJson(dir, "", fmt::format("--db {} --effort quick --budget 25", db));
  ASSERT_EQ(rc3, 0) << out3;
  nlohmann::json q25 = nlohmann::json::parse(out3);
  EXPECT_EQ(q25["search"]["budget_s"], 25.0);
  EXPECT_EQ(q25["search"]["stall_rounds"], 1);
  // The quick run before measured its warm start alike: this one takes it from the database
  // (as the twin of a stored row the search preloaded, or looked up).
  bool reused_warm = false;
  for (const auto& c : q25["candidates"]) {
    if (c["origin"].get<std::string>().rfind("warm start: run #", 0) == 0 && c["round"] == 1) {
      reused_warm = reused_warm || c["reused"].get<bool>() ||
                    c.value("message", "").rfind("same source as #", 0) == 0;
      EXPECT_EQ(c["status"], "ok") << c.dump();
    }
  }
  EXPECT_TRUE(reused_warm) << q25["candidates"].dump();
  EXPECT_TRUE(warmFirst(q25, "warm start: run #")) << q25["trace"].dump();

  // Without a database there is nothing to start from, and the result says so.
  auto [rc4, out4] = optimizeJson(dir, "", "--no-db --effort quick");
  ASSERT_EQ(rc4, 0) << out4;
  nlohmann::json nodb = nlohmann::json::parse(out4);
  bool noted = false;
  for (const auto& n : nodb["notes"]) noted = noted || n.get<std::string>().find("no warm start") != std::string::npos;
  EXPECT_TRUE(noted) << nodb["notes"].dump();
  // The strategy's first choice is measured all the same, on the measurement worker, before
  // the compile pool is awaited.
  EXPECT_TRUE(warmFirst(nodb, "first choice (")) << nodb["trace"].dump();
}

TEST(EffortCli, FullDoesNotStopOnRoundsWithoutAGain) {
  fs::path dir = writeTask("effort_full");
  // Every variant takes as long as the kernel as written: no round ever gains.
  const std::string flat = "TF_FAKE_FLAT=1";
  const std::string args = "--no-db --no-passes --strategy exhaustive --batch 2 --max-candidates 16";
  auto [rc1, out1] = optimizeJson(dir, flat, args);
  ASSERT_EQ(rc1, 0) << out1;
  nlohmann::json def = nlohmann::json::parse(out1);
  EXPECT_EQ(def["search"]["stopped_because"], "no gain in 3 rounds");
  EXPECT_EQ(def["search"]["evaluated"], 6);

  auto [rc2, out2] = optimizeJson(dir, flat, args + " --effort full");
  ASSERT_EQ(rc2, 0) << out2;
  nlohmann::json full = nlohmann::json::parse(out2);
  EXPECT_EQ(full["search"]["effort"], "full");
  EXPECT_EQ(full["search"]["stall_rounds"], 0);
  EXPECT_EQ(full["search"]["budget_s"], 300.0);
  EXPECT_EQ(full["search"]["stopped_because"], "max-candidates");
  EXPECT_EQ(full["search"]["evaluated"], 16);
  // (The wider domains: Strategies.WideHintsWidenEveryRolesDomain; this kernel's block and
  // warps already span their widest.)
}

TEST(EffortCli, FullProposesEveryPass) {
  fs::path dir = writeTask("effort_full_passes");
  auto [rc, out] = optimizeJson(dir, "TF_FAKE_FLAT=1", "--no-db --effort full --max-candidates 4 --budget 60");
  ASSERT_EQ(rc, 0) << out;
  nlohmann::json full = nlohmann::json::parse(out);
  std::set<std::string> passes;
  for (const auto& p : traceOf(full, "proposal")) {
    if (p.value("rationale", "") == "effort full: every applicable pass is tried") passes.insert(p["pass"]);
  }
  // Every pass but the parameter moves (retile, launch, autotune), which the search makes.
  EXPECT_GE(passes.size(), 5u) << full["trace"].dump();
  EXPECT_EQ(passes.count("retile"), 0u);
  EXPECT_EQ(passes.count("autotune"), 0u);
}

TEST(HtmlReportCli, ReportHtmlBesideReportMd) {
  fs::path dir = writeTask("html_report");
  auto [rc, out] = optimizeJson(dir, "", "--no-db --no-passes --max-candidates 6");
  ASSERT_EQ(rc, 0) << out;
  nlohmann::json result = nlohmann::json::parse(out);
  EXPECT_EQ(result["outputs"]["html"], (dir / "out/add/report.html").string());
  std::string html = test::readFile(dir / "out/add/report.html");
  // Rendered by python/tritonforge_worker/html_report.py (not the fallback page).
  EXPECT_NE(html.find("<h1>tritonforge: add</h1>"), std::string::npos) << html.substr(0, 2000);
  EXPECT_NE(html.find("<h2>Decisions</h2>"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

TEST(HtmlReportCli, APythonThatCannotRenderItLeavesAPageThatSaysWhy) {
  fs::path dir = writeTask("html_report_fallback");
  // The worker's Python runs (the fake), but has no tritonforge_worker.html_report module:
  // TRITONFORGE_WORKER_DIR points the core at a copy of the package without it.
  fs::path pkg = dir / "pkg";
  fs::create_directories(pkg);
  fs::copy(test::sourceDir() / "python/tritonforge_worker", pkg / "tritonforge_worker",
           fs::copy_options::recursive);
  fs::remove(pkg / "tritonforge_worker/html_report.py");
  auto [rc, out] = optimizeJson(dir, "TRITONFORGE_WORKER_DIR=" + pkg.string(), "--no-db --no-passes --max-candidates 4");
  ASSERT_EQ(rc, 0) << out;
  std::string html = test::readFile(dir / "out/add/report.html");
  EXPECT_NE(html.find("The HTML report could not be rendered"), std::string::npos) << html;
  EXPECT_NE(html.find("No module named tritonforge_worker.html_report"), std::string::npos) << html;
  EXPECT_NE(html.find("href=\"report.md\""), std::string::npos);
}

}  // namespace
}  // namespace tf

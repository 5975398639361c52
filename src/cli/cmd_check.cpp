// tritonforge check TASK.toml... --baseline FILE|--db FILE [--junit FILE] [--repeats R] [--timing-ms MS]
//   [--retune [--budget S] [--out DIR]]
//
// Re-verifies and re-times each task's kernel as it stands (its source as written now)
// against its recorded best in a baseline file (`optimize --save-baseline FILE`) or a results
// database (`--db`: the latest finished run of each task), for CI.
// The statistics (interleaved repeats, the noise band, what a regression is) are defined in
// measure/regression_check.h and docs/ci.md. The Markdown summary goes to stdout, progress
// to stderr. --retune then runs optimize on each task that verified, warm-started from the
// recorded best (its configuration is the first candidate), and saves the new best into the
// baseline file; the verdict (and exit code) stays that of the kernel as it stands.
//
// Exit codes: 0 no regression beyond the noise and every case verified; 1 a case regressed
// beyond the noise or failed verification (or the environment failed); 2 bad input (a
// malformed or missing baseline or task file); 3 no CUDA GPU.
#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "cli/commands.h"
#include "cli/optimize_command.h"
#include "measure/regression_check.h"
#include "report/check_report.h"
#include "store/baseline_file.h"
#include "task/task.h"
#include "util/error.h"
#include "util/fs.h"
#include "worker/gpu_selection.h"
#include "worker/worker_client.h"
#include "worker/worker_process.h"

namespace tf {
namespace {

struct CheckFlags {
  std::vector<std::string> tasks;
  std::string baseline;
  std::string db;
  std::string junit;
  bool json = false;
  int repeats = 5;
  double timing_ms = 250;
  double min_noise_pct = 1;
  double run_timeout = 180;
  bool retune = false;
  double budget = 60;
  std::string out = "tritonforge-out";
  std::string gpus;                    // --gpus all|N|LIST; "": one GPU
};

// optimize on each task that verified, from the baseline's best configuration; returns the
// Markdown lines saying what was done.
std::string retune(const CheckFlags& f, const BaselineFile& baseline, const std::vector<TaskCheck>& results,
                   const GlobalOptions& global) {
  std::string md = "\n## Re-tuning\n\n";
  for (size_t i = 0; i < results.size(); ++i) {
    const TaskCheck& t = results[i];
    auto it = baseline.tasks.find(t.name);
    bool verified = true;
    for (const auto& c : t.cases) verified = verified && c.verdict != CaseVerdict::kFailed;
    if (it == baseline.tasks.end() || !verified) {
      md += fmt::format("- {}: not re-tuned: {}\n", t.name,
                        !verified ? "a case failed verification; fix the kernel first"
                        : f.baseline.empty()
                            ? "the results database holds no finished run of it (run optimize --db)"
                            : "the baseline holds no entry for it (run optimize --save-baseline)");
      continue;
    }
    OptimizeFlags o;
    o.task = f.tasks[i];
    o.budget = f.budget;
    o.out = f.out;
    o.save_baseline = f.baseline;  // with --db, the run lands in the database itself
    o.db = f.db;
    o.summary_to_stderr = true;
    Config start;
    for (const auto& [id, v] : it->second.config.items()) {
      if (v.is_number_integer()) start[id] = v.get<int64_t>();
    }
    o.start_configs = {start};
    o.gpus = f.gpus;
    o.tasks = {f.tasks[i]};
    std::fprintf(stderr, "re-tuning %s from the recorded best (%s)\n", t.name.c_str(),
                 it->second.config_text.empty() ? "as written" : it->second.config_text.c_str());
    if ((f.gpus.empty() ? runOptimize(o, global) : runOptimizeMany(o, global)) != 0) {
      md += fmt::format("- {}: not re-tuned: no GPU\n", t.name);
      continue;
    }
    md += fmt::format("- {}: re-tuned from the recorded best ({}); the new best is saved in `{}`, its source in "
                      "`{}/{}/`: adopt it{}.\n",
                      t.name, it->second.config_text.empty() ? "as written" : it->second.config_text,
                      f.baseline.empty() ? f.db : f.baseline, f.out, t.name,
                      f.baseline.empty() ? "" : " and commit both");
  }
  return md;
}

ToolchainInfo toolchainOf(const nlohmann::json& hello) {
  ToolchainInfo t;
  const nlohmann::json& gpu = hello["gpu"];
  auto str = [](const nlohmann::json& j, const char* k) {
    return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : std::string();
  };
  t.gpu = str(gpu, "name");
  t.driver = str(gpu, "driver");
  t.torch = str(hello, "torch");
  t.triton = str(hello, "triton");
  t.tritonforge = TRITONFORGE_VERSION;
  return t;
}

int runCheck(const CheckFlags& f, const GlobalOptions& global) {
  if (f.repeats < 1 || f.repeats > 1000) throw UserError(fmt::format("--repeats must be 1 to 1000, not {}", f.repeats));
  checkPositiveFlag("--timing-ms", f.timing_ms, 3.6e6);
  checkTimeoutFlag("--run-timeout", f.run_timeout);
  if (f.retune) checkPositiveFlag("--budget", f.budget, 1e9);
  if (!(f.min_noise_pct >= 0 && f.min_noise_pct < 100)) {
    throw UserError(fmt::format("--min-noise must be a percentage from 0 to 100, not {}", f.min_noise_pct));
  }
  if (f.baseline.empty() == f.db.empty()) {
    throw UserError("check needs the recorded best from one place: --baseline FILE or --db FILE");
  }
  // Everything the user gave is read and checked before anything runs; the report never
  // replaces one of them.
  if (!f.junit.empty()) {
    refuseOutputOverInput(f.junit, f.baseline, "baseline file");
    refuseOutputOverInput(f.junit, f.db, "results database");
    for (const auto& path : f.tasks) refuseOutputOverInput(f.junit, path, "task file");
  }
  std::vector<Task> tasks;
  for (const auto& path : f.tasks) {
    tasks.push_back(loadTask(path));
    if (!f.junit.empty()) {
      refuseOutputOverInput(f.junit, tasks.back().source, "kernel source");
      refuseOutputOverInput(f.junit, tasks.back().harness, "harness");
    }
  }
  BaselineFile baseline;
  if (!f.baseline.empty()) {
    baseline = loadBaselineFile(f.baseline);
  } else {
    std::vector<std::string> names;
    for (const auto& t : tasks) names.push_back(t.name);
    baseline = baselineFromResultsDb(f.db, names);
  }
  const std::string recorded_in = f.baseline.empty() ? f.db : f.baseline;

  // --gpus: one pinned measurement worker per GPU, tasks checked in parallel over them (a
  // task's repeats stay on one GPU). The GPUs must be of one model: the baseline file holds
  // one model's times.
  std::vector<GpuDevice> gpus = discoverGpus(parseGpuSelection(f.gpus), global);
  if (groupByModel(gpus).size() > 1) {
    throw UserError(fmt::format("--gpus {}: the GPUs are of different models, and a baseline file holds one model's "
                                "times (choose one model's GPUs with --gpus LIST)",
                                f.gpus));
  }
  std::vector<std::unique_ptr<WorkerProcess>> workers;
  for (size_t i = 0; i < std::max<size_t>(1, gpus.size()); ++i) {
    WorkerOptions wo = workerOptionsFor(global, true);
    wo.name = "measurement worker";
    if (!gpus.empty()) {
      wo.name = "measurement worker of GPU " + gpus[i].device;
      wo.env["CUDA_VISIBLE_DEVICES"] = gpus[i].device;
    }
    workers.push_back(std::make_unique<WorkerProcess>(wo));
  }
  std::vector<WorkerReply> replies(workers.size());
  {
    std::vector<std::thread> starting;
    for (size_t i = 0; i < workers.size(); ++i) {
      starting.emplace_back([&, i] { replies[i] = workers[i]->ensureStarted(); });
    }
    for (auto& t : starting) t.join();
  }
  for (const auto& started : replies) {
    if (!started.ok()) {
      throw EnvironmentError(fmt::format("{}{}", started.message, started.detail.empty() ? "" : " (" + started.detail + ")"));
    }
  }
  const nlohmann::json hello = workers[0]->helloInfo();
  if (!hello.contains("gpu") || !hello["gpu"].is_object()) {
    std::string why = hello.value("gpu_reason", std::string("no CUDA GPU is visible"));
    std::fprintf(stderr, "tritonforge: nothing checked: %s\n", why.c_str());
    return 3;
  }
  const ToolchainInfo now = toolchainOf(hello);

  CheckOptions options;
  options.repeats = f.repeats;
  options.timing_budget_ms = f.timing_ms;
  options.min_noise = f.min_noise_pct / 100;
  options.run_timeout = std::chrono::milliseconds(static_cast<int64_t>(f.run_timeout * 1000));

  std::vector<TaskCheck> results(tasks.size());
  std::mutex err_mu;
  std::atomic<size_t> next{0};
  auto lane = [&](WorkerProcess& worker) {
    WorkerClient client(worker);
    for (size_t k = next++; k < tasks.size(); k = next++) {
      const Task& task = tasks[k];
      TaskCheck t;
      t.name = task.name;
      t.path = task.path.string();
      auto it = baseline.tasks.find(task.name);
      const BaselineEntry* entry = it == baseline.tasks.end() ? nullptr : &it->second;
      if (entry) {
        t.has_baseline = true;
        t.baseline_config_text = entry->config_text;
        t.toolchain_changes = entry->toolchain.differences(now);
      }
      {
        std::lock_guard<std::mutex> lock(err_mu);
        std::fprintf(stderr, "checking %s: %zu case(s), %d interleaved repeat(s)%s\n", task.name.c_str(),
                     task.cases.size(), options.repeats,
                     gpus.size() > 1 ? (" on " + worker.options().name.substr(std::string("measurement worker of ").size()))
                                           .c_str()
                                     : "");
      }
      t.cases = checkTaskCases(task, client, entry, options);
      {
        std::lock_guard<std::mutex> lock(err_mu);
        if (gpus.size() > 1) std::fprintf(stderr, "%s:\n", task.name.c_str());
        for (const auto& c : t.cases) std::fprintf(stderr, "  %s: %s\n", c.label.c_str(), toString(c.verdict));
      }
      results[k] = std::move(t);
    }
  };
  {
    std::vector<std::thread> lanes;
    for (size_t i = 1; i < workers.size(); ++i) lanes.emplace_back([&, i] { lane(*workers[i]); });
    lane(*workers[0]);
    for (auto& t : lanes) t.join();
  }
  bool failed = false;
  for (const auto& t : results) failed = failed || t.failed();
  for (auto& w : workers) w->shutdown();  // the GPUs are optimize's alone while re-tuning
  if (!f.junit.empty()) writeFileAtomic(f.junit, checkJUnit(results));
  if (f.json) {
    // The JSON alone on stdout; a re-tune's summary goes to stderr.
    nlohmann::json j = checkJson(results, recorded_in);
    if (f.retune) std::fputs(retune(f, baseline, results, global).c_str(), stderr);
    std::cout << j.dump(2) << std::endl;
    return failed ? 1 : 0;
  }
  std::string md = checkMarkdown(results, recorded_in);
  if (f.retune) md += retune(f, baseline, results, global);
  std::fputs(md.c_str(), stdout);
  return failed ? 1 : 0;
}

}  // namespace

CommandRunner registerCheck(CLI::App& app, const GlobalOptions& global);
const CommandRegistration kCheckRegistration("check", 55, &registerCheck);

CommandRunner registerCheck(CLI::App& app, const GlobalOptions& global) {
  auto flags = std::make_shared<CheckFlags>();
  CLI::App* sub = app.add_subcommand(
      "check", "Re-verify and re-time tasks' kernels as they stand against their recorded best (for CI)");
  sub->add_option("tasks", flags->tasks, "The task files (TOML)")->required();
  sub->add_option("--baseline", flags->baseline, "The baseline file (written by optimize --save-baseline)");
  sub->add_option("--db", flags->db,
                  "Instead of --baseline: a results database; each task's recorded best is its latest finished "
                  "optimize run there");
  sub->add_flag("--json", flags->json, "The report as JSON on stdout (schema tritonforge.check/1) instead of Markdown");
  sub->add_option("--junit", flags->junit, "Also write a JUnit XML report here (one test case per task and case)");
  sub->add_option("--repeats", flags->repeats, "Interleaved runs per case (default 5)");
  sub->add_option("--timing-ms", flags->timing_ms, "Timing budget per run and case in ms (default 250)");
  sub->add_option("--min-noise", flags->min_noise_pct, "The smallest noise band, in % (default 1)");
  sub->add_option("--run-timeout", flags->run_timeout, "Seconds one run of a case may take (default 180)");
  sub->add_flag("--retune", flags->retune,
                "Then re-tune each task that verified, warm-started from the recorded best, and save the new best "
                "in the baseline file");
  sub->add_option("--budget", flags->budget, "--retune: optimize's budget per task in seconds (default 60)");
  sub->add_option("--out", flags->out, "--retune: optimize's output folder (default tritonforge-out)");
  sub->add_option("--gpus", flags->gpus,
                  "Check the tasks in parallel on several GPUs of one model: all, N or a list (0,2); --retune "
                  "spreads each task's candidates over them");
  return [flags, &global] { return runCheck(*flags, global); };
}

}  // namespace tf

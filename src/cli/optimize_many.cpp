// optimize over several tasks, several GPUs (--gpus) or a Ray cluster (--ray).
//
// Map: runOptimizeMany -> expandTaskPaths (files and folders) -> prepareRun for every job (bad
// input exits 2 before anything is measured) -> discoverLanes (one worker's hello: the GPUs
// and their models) -> one shared compile pool -> slots (groups of lanes) that take jobs from
// their model's queue -> outputs, one folder per task (per model and task with mixed models).
//
// Scheduling: the lanes of one model are split into min(tasks, lanes) slots, each a thread
// that runs one task at a time with optimize() over its lanes. With more tasks than GPUs each
// task gets one GPU (no candidate ever waits for another task's); with one task, its
// candidates spread over every GPU. GPUs of different models are separate queues: every
// task is tuned on every model, for itself (the results database keys rows by GPU model).
//
// Environment: CUDA_VISIBLE_DEVICES (a lane's value is that list's entry), and with --ray
// what python/tritonforge_worker/ray_bridge.py reads (TRITONFORGE_RAY_*).
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>

#include "cli/optimize_command.h"
#include "cli/progress.h"
#include "report/optimize_report.h"
#include "store/baseline_file.h"
#include "store/results_db.h"
#include "util/error.h"
#include "worker/gpu_selection.h"
#include "worker/worker_pool.h"
#include "worker/worker_process.h"

namespace tf {
namespace {
namespace fs = std::filesystem;

// Task files from the arguments: files as given, folders as every *.toml directly inside
// (sorted). A missing path or a folder without task files is bad input.
std::vector<std::string> expandTaskPaths(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (const auto& a : args) {
    std::error_code ec;
    if (fs::is_directory(a, ec)) {
      std::vector<std::string> found;
      for (const auto& e : fs::directory_iterator(a, ec)) {
        if (e.is_regular_file() && e.path().extension() == ".toml") found.push_back(e.path().string());
      }
      std::sort(found.begin(), found.end());
      if (found.empty()) throw UserError(fmt::format("{}: no task file (*.toml) in this folder", a));
      out.insert(out.end(), found.begin(), found.end());
      continue;
    }
    if (!fs::exists(a, ec)) throw UserError(fmt::format("{}: no such task file or folder", a));
    out.push_back(a);
  }
  return out;
}

// Progress of several runs at once: one line at a time, each status line naming its run.
class SharedProgress final : public OptimizeProgress {
 public:
  SharedProgress(std::unique_ptr<OptimizeProgress> inner, std::string prefix, std::mutex& mu)
      : inner_(std::move(inner)), prefix_(std::move(prefix)), mu_(mu) {}
  void status(const std::string& line) override {
    std::lock_guard<std::mutex> lock(mu_);
    inner_->status(prefix_ + line);
  }
  void candidate(const CandidateRecord& c, const CandidateRecord* best, int tried, double elapsed_s) override {
    std::lock_guard<std::mutex> lock(mu_);
    inner_->candidate(c, best, tried, elapsed_s);
  }
  void finish() override {
    std::lock_guard<std::mutex> lock(mu_);
    inner_->finish();
  }

 private:
  std::unique_ptr<OptimizeProgress> inner_;
  std::string prefix_;
  std::mutex& mu_;
};

// How the measurement lanes' workers are started: pinned local processes, or the Ray bridge.
struct LaneLaunch {
  bool ray = false;
  std::string address;
};

void applyLaunch(const LaneLaunch& launch, const std::string& model, EvaluatorOptions& ev) {
  if (!launch.ray) return;
  ev.pin_lanes = false;
  ev.lane_module_args = {"-m", "tritonforge_worker.ray_bridge"};
  ev.lane_env["TRITONFORGE_RAY_ADDRESS"] = launch.address;
  if (!model.empty()) ev.lane_env["TRITONFORGE_RAY_MODEL"] = model;
}

// The GPUs the selection names, from one worker's hello (a local worker, or under Ray the
// bridge's view of the cluster). No lanes: the default single GPU (or none at all).
std::vector<GpuDevice> discoverLanes(const GpuSelection& sel, const LaneLaunch& launch, const GlobalOptions& global) {
  if (sel.isDefault() && !launch.ray) return {};
  WorkerOptions wo = workerOptionsFor(global, true);
  wo.name = launch.ray ? "Ray bridge (discovery)" : "GPU discovery worker";
  if (launch.ray) {
    wo.module_args = {"-m", "tritonforge_worker.ray_bridge"};
    wo.env["TRITONFORGE_RAY_ADDRESS"] = launch.address;
    wo.env["TRITONFORGE_RAY_DISCOVER"] = "1";
  }
  WorkerProcess probe(wo);
  WorkerReply r = probe.ensureStarted();
  if (!r.ok()) {
    throw EnvironmentError(fmt::format("{}{}", r.message, r.detail.empty() ? "" : " (" + r.detail + ")"));
  }
  nlohmann::json hello = probe.helloInfo();
  probe.shutdown();
  GpuSelection use = sel;
  if (launch.ray && use.isDefault()) use = parseGpuSelection("all");  // a cluster: every GPU it has
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  std::vector<GpuDevice> lanes = resolveGpus(use, hello, launch.ray || !visible ? std::string() : std::string(visible));
  if (launch.ray && lanes.empty()) {
    throw EnvironmentError(fmt::format("--ray {}: {} (for a CPU test with the fake GPU worker, "
                                       "TRITONFORGE_RAY_NUM_GPUS=0)",
                                       launch.address,
                                       hello.contains("gpu_reason") && hello["gpu_reason"].is_string()
                                           ? hello["gpu_reason"].get<std::string>()
                                           : std::string("the cluster has no GPU")));
  }
  return lanes;
}

}  // namespace

std::vector<GpuDevice> discoverGpus(const GpuSelection& sel, const GlobalOptions& global) {
  return discoverLanes(sel, LaneLaunch{}, global);
}

namespace {

struct Job {
  std::unique_ptr<PreparedRun> run;
  size_t group = 0;
  fs::path out_root;
  std::string label;                 // "softmax", "softmax on nvidia-h200"
};

}  // namespace

int runOptimizeMany(const OptimizeFlags& given_flags, const GlobalOptions& global) {
  const auto started = std::chrono::steady_clock::now();
  OptimizeFlags f = given_flags;
  checkOptimizeFlags(f, global);
  GpuSelection sel = parseGpuSelection(f.gpus);
  LaneLaunch launch;
  launch.ray = !f.ray.empty();
  launch.address = f.ray;
  std::vector<std::string> paths = expandTaskPaths(f.tasks);
  if (f.dry_run) {
    if (paths.size() > 1) throw UserError(fmt::format("--dry-run takes one task file, not {}", paths.size()));
    f.task = paths[0];
    return runOptimize(f, global);  // measures nothing: no GPU to choose
  }
  if (paths.size() > 1 && !f.start_configs.empty()) throw UserError("a warm start applies to one task only");
  const bool quiet = f.json && !f.progress;

  // The GPUs first (a wrong --gpus is bad input before tasks are parsed), then every task.
  std::vector<GpuDevice> devices = discoverLanes(sel, launch, global);
  std::vector<std::vector<GpuDevice>> groups = devices.empty() ? std::vector<std::vector<GpuDevice>>{{}}
                                                               : groupByModel(devices);
  const bool mixed = groups.size() > 1;
  if (mixed && !f.save_baseline.empty()) {
    throw UserError("--save-baseline with GPUs of different models: a baseline file holds one GPU model's times "
                    "(choose the GPUs of one model with --gpus LIST)");
  }
  std::vector<Job> jobs;
  std::map<std::string, std::string> names;  // output folder -> task file
  for (size_t g = 0; g < groups.size(); ++g) {
    fs::path root = mixed ? fs::path(f.out) / modelSlug(groups[g].front().name) : fs::path(f.out);
    for (const auto& path : paths) {
      Job job;
      job.run = prepareRun(f, global, path, root, started);
      job.group = g;
      job.out_root = root;
      job.label = mixed ? fmt::format("{} on {}", job.run->task.name, groups[g].front().name) : job.run->task.name;
      std::string dir = (root / job.run->task.name).lexically_normal().string();
      auto [it, fresh] = names.emplace(dir, path);
      if (!fresh) {
        throw UserError(fmt::format("{} and {}: both tasks are named '{}' and would write the same output folder {}; "
                                    "rename one (name = ...)",
                                    it->second, path, job.run->task.name, dir));
      }
      jobs.push_back(std::move(job));
    }
  }

  // One compile pool for every run: the CPU cores, less one per measurement lane.
  int lanes_total = std::max<int>(1, static_cast<int>(devices.size()));
  int want = f.jobs;
  if (want <= 0) {
    unsigned hw = std::thread::hardware_concurrency();
    want = std::clamp(static_cast<int>(hw) - lanes_total, 1, 64);
  }
  WorkerOptions cw = compileWorkerOptions(workerOptionsFor(global, true));
  auto pool = std::make_shared<WorkerPool>(cw, want);

  if (!quiet && jobs.size() == 1) printTunables(*jobs[0].run->tunables);  // as a single run shows them
  if (!quiet) {
    std::string plan;
    for (const auto& g : groups) {
      if (g.empty()) continue;
      std::string ids;
      for (const auto& d : g) ids += (ids.empty() ? "" : ",") + d.device;
      plan += fmt::format("{}{} x {} ({})", plan.empty() ? "" : "; ", g.size(), g.front().name, ids);
    }
    std::fprintf(stderr, "%zu task%s over %s%s; %d compile workers\n", paths.size(), paths.size() == 1 ? "" : "s",
                 plan.empty() ? "one GPU" : plan.c_str(), launch.ray ? fmt::format(" (Ray at {})", f.ray).c_str() : "",
                 want);
  }
  pool->startAll();
  // The database created (or migrated) once, before the runs open it at the same time.
  if (!f.no_db) ResultsDb::open(f.db.empty() ? ResultsDb::defaultPath() : fs::path(f.db));

  // Slots: each model's lanes split into min(tasks, lanes) groups, each taking jobs in turn.
  std::mutex out_mu;
  std::vector<std::atomic<size_t>> next(groups.size());
  std::vector<std::vector<size_t>> queue(groups.size());
  for (size_t j = 0; j < jobs.size(); ++j) queue[jobs[j].group].push_back(j);
  for (auto& n : next) n = 0;
  std::vector<nlohmann::json> results(jobs.size());
  std::vector<int> codes(jobs.size(), 0);
  std::vector<std::string> errors(jobs.size());
  std::vector<std::thread> slots;
  for (size_t g = 0; g < groups.size(); ++g) {
    int nslots = groups[g].empty() ? 1 : std::min<int>(static_cast<int>(paths.size()), static_cast<int>(groups[g].size()));
    for (const auto& lanes : splitLanes(groups[g], nslots)) {
      slots.emplace_back([&, g, lanes] {
        while (true) {
          size_t k = next[g]++;
          if (k >= queue[g].size()) return;
          Job& job = jobs[queue[g][k]];
          PreparedRun& p = *job.run;
          OptimizeOptions options = p.options;
          options.started = std::chrono::steady_clock::now();  // each task gets its whole budget
          options.evaluator.shared_pool = pool;
          for (const auto& d : lanes) options.evaluator.gpus.push_back(d.device);
          applyLaunch(launch, lanes.empty() ? std::string() : lanes.front().name, options.evaluator);
          std::string on;
          for (const auto& d : lanes) on += (on.empty() ? "" : ",") + d.device;
          std::string prefix = fmt::format("[{}{}] ", job.label, on.empty() ? "" : " @ GPU " + on);
          SharedProgress progress(makeProgress(quiet, global.verbose, f.budget), prefix, out_mu);
          try {
            OptimizeResult result = optimize(p.task, *p.sources, *p.tunables, options, progress);
            nlohmann::json result_json;
            auto dir = writeOptimizeOutputs(p.task, *p.tunables, result, options, job.out_root, &result_json);
            std::lock_guard<std::mutex> lock(out_mu);
            if (!f.save_baseline.empty() && result.gpu) {
              saveBaselineEntry(f.save_baseline, baselineEntryFromResult(result_json, (dir / "result.json").string()));
              if (!f.json) std::fprintf(stderr, "baseline of %s saved to %s\n", p.task.name.c_str(), f.save_baseline.c_str());
            }
            if (!f.json) {
              std::fputs(optimizeSummary(p.task, *p.tunables, result, dir).c_str(),
                         f.summary_to_stderr ? stderr : stdout);
            }
            std::fflush(stdout);
            results[queue[g][k]] = std::move(result_json);
            codes[queue[g][k]] = result.gpu ? 0 : 3;
          } catch (const UserError& e) {
            errors[queue[g][k]] = e.what();
            codes[queue[g][k]] = 2;
          } catch (const std::exception& e) {
            errors[queue[g][k]] = e.what();
            codes[queue[g][k]] = 1;
          }
        }
      });
    }
  }
  for (auto& t : slots) t.join();
  if (f.json && jobs.size() == 1) {
    std::cout << results[0].dump(2) << std::endl;  // one result: the object a single run prints
  } else if (f.json) {
    nlohmann::json all = nlohmann::json::array();
    for (auto& r : results) all.push_back(r.is_null() ? nlohmann::json(nullptr) : std::move(r));
    std::cout << all.dump(2) << std::endl;
  }
  // Failed runs: one line each; the exit code is the worst (bad input, then the environment).
  int code = 0;
  for (size_t j = 0; j < jobs.size(); ++j) {
    if (!errors[j].empty()) std::fprintf(stderr, "tritonforge: %s: %s\n", jobs[j].label.c_str(), errors[j].c_str());
  }
  for (int c : codes) {
    if (c == 2) code = 2;
  }
  for (int c : codes) {
    if (code == 0 && c == 1) code = 1;
  }
  for (int c : codes) {
    if (code == 0 && c == 3) code = 3;
  }
  return code;
}

}  // namespace tf

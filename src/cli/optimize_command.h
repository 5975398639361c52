// `optimize` as a function, for the commands that run it: `optimize` itself and
// `check --retune` (a warm start from the recorded best).
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "kernel/tunables.h"
#include "search/engine.h"
#include "search/optimizer.h"
#include "task/task.h"
#include "task/task_sources.h"
#include "transform/pass.h"
#include "variant/config.h"
#include "worker/gpu_selection.h"

namespace tf {

struct OptimizeFlags {
  std::string task;
  // As given on the command line: task files or folders of them (`optimize A.toml B.toml`,
  // `optimize tasks/`); `task` is the one a single run takes.
  std::vector<std::string> tasks;
  std::string gpus;                    // --gpus all|N|LIST; "": one GPU, as before
  std::string ray;                     // --ray ADDRESS: measurement workers as Ray actors
  double budget = 60;
  std::string out = "tritonforge-out";
  bool json = false;
  bool progress = false;  // with --json: progress on stderr all the same (the Python API reads it)
  std::string strategy = "auto";
  uint64_t seed = 0;
  int jobs = 0;
  int max_candidates = 0;
  int stall_rounds = 3;
  int batch = 0;
  double timing_ms = 250;
  bool keep_work = false;
  double compile_timeout = 180;
  double run_timeout = 120;
  std::string db;
  bool no_db = false;
  bool no_widen = false;
  bool fresh = false;
  std::string engine = "rules";
  std::string llm_endpoint;            // default: $TRITONFORGE_LLM_ENDPOINT
  int llm_max_requests = 8;
  double llm_timeout = 60;
  bool dry_run = false;
  std::vector<std::string> only;
  std::vector<std::string> no_pass;
  bool no_passes = false;
  bool no_diagnosis = false;
  double within_roofline = -1;
  std::string save_baseline;
  // --effort quick|default|full: a preset of the flags above; a flag given on the command
  // line (named in `given`, e.g. "--budget") keeps its value. See applyEffort.
  std::string effort = "default";
  std::set<std::string> given;
  // Not flags: what `check --retune` sets.
  std::vector<Config> start_configs;   // a warm start (OptimizeOptions::start_configs)
  bool summary_to_stderr = false;      // the human summary on stderr (stdout holds check's report)
};

// Sets the flags of the effort preset that were not given on the command line. Throws
// UserError for an unknown effort.
//   quick    --budget 12 --stall-rounds 1 --timing-ms 100 --strategy local --no-passes, and
//            warm-started from the results database
//   default  today's settings, unchanged
//   full     --budget 300 --stall-rounds 0 (never), wider parameter domains, every pass tried
void applyEffort(OptimizeFlags& f);

// Runs optimize as the command line asks; returns its exit code (0, or 3 without a GPU).
int runOptimize(const OptimizeFlags& f, const GlobalOptions& global);

// Several tasks, several GPUs or a Ray cluster (src/cli/optimize_many.cpp): every task is
// checked first, then the tasks are scheduled over the GPUs' measurement lanes with one
// shared compile pool; GPUs of different models each tune every task for themselves.
int runOptimizeMany(const OptimizeFlags& f, const GlobalOptions& global);

// What runOptimize and runOptimizeMany share (cmd_optimize.cpp).
struct PreparedRun {
  Task task;
  std::unique_ptr<TaskSources> sources;
  std::unique_ptr<TunableSet> tunables;
  OptimizeOptions options;
  EngineSettings engine_settings;
  PassFilter switched_off;
};
// Applies the effort preset and checks the flags that need no task (UserError: exit 2).
void checkOptimizeFlags(OptimizeFlags& f, const GlobalOptions& global);
// Loads and checks one task (its results go under `out_root`) and builds its options.
std::unique_ptr<PreparedRun> prepareRun(const OptimizeFlags& f, const GlobalOptions& global, const std::string& task_path,
                                        const std::filesystem::path& out_root,
                                        std::chrono::steady_clock::time_point started);
// The GPUs `--gpus` names (discovered with one local worker's hello); empty for the default
// selection or where there is no GPU. UserError for a GPU that is not there.
std::vector<GpuDevice> discoverGpus(const GpuSelection& sel, const GlobalOptions& global);

// The tunables table on stderr.
void printTunables(const TunableSet& t);

}  // namespace tf

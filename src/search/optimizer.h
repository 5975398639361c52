// The optimization loop behind `tritonforge optimize` (foundation version): measure the
// kernel as written, discover its tunables, search them (compiling in parallel on the CPU
// cores while the GPU measures), verify every candidate on every case, keep the fastest
// verified one, confirm it against the baseline in an interleaved re-measurement.
//
// The objective of a candidate is the geometric mean over cases of its time divided by
// the baseline's time (lower is better); a candidate that fails any case is out.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernel/tunables.h"
#include "measure/measurement.h"
#include "search/evaluator.h"
#include "task/task_sources.h"
#include "transform/apply_config.h"

namespace tf {

struct OptimizeOptions {
  double budget_s = 60;              // wall time for the whole run, start-up included
  int compile_workers = 0;           // 0: from the CPU count
  std::string strategy = "auto";
  uint64_t seed = 0;
  int max_candidates = 0;            // 0: no limit
  int stall_rounds = 3;              // stop after this many rounds without a gain
  EvaluatorOptions evaluator;
  bool keep_work = false;
};

struct CandidateRecord {
  int id = 0;
  int round = 0;
  std::string origin;                // "baseline", "autotune config 2", "prior", "neighbour of #7"
  Config config;
  std::string config_text;
  std::string source_hash;
  CandidateStatus status = CandidateStatus::kNotRun;
  std::string message;
  CompileOutcome compile;
  std::vector<CaseMeasurement> cases;
  std::optional<double> objective;   // geomean(time / baseline time); lower is better
  nlohmann::json toJson() const;
};

struct OptimizeResult {
  nlohmann::json environment;        // the worker's hello
  bool gpu = false;
  std::string no_gpu_reason;
  std::vector<CandidateRecord> candidates;   // [0] is the baseline when measured
  int best = -1;                     // index into candidates; -1: none better than the baseline
  std::vector<CaseMeasurement> confirm_baseline, confirm_best;   // the interleaved re-measurement
  std::string best_source;           // the source handed back (the original when nothing won)
  double speedup = 1;                // geomean over cases, from the confirmation run
  std::string strategy;
  int rounds = 0;
  double elapsed_s = 0;
  std::string stop_reason;
  nlohmann::json compile_checks = nlohmann::json::array();  // without a GPU: ahead-of-time compiles
  std::vector<std::string> notes;
  double space_size = 0;
  int pruned = 0;
};

class OptimizeProgress {
 public:
  virtual ~OptimizeProgress() = default;
  virtual void status(const std::string& line) = 0;
  virtual void candidate(const CandidateRecord& c, const CandidateRecord* best, int tried, double elapsed_s) = 0;
  virtual void finish() = 0;
};

OptimizeResult optimize(const Task& task, const TaskSources& sources, const TunableSet& tunables,
                        const OptimizeOptions& options, OptimizeProgress& progress);

// Ahead-of-time compile checks that need no GPU: the source as written, compiled for
// sm_90 with the task's [signature] types and the literal values of its tunables.
nlohmann::json compileChecks(const Task& task, const TaskSources& sources, const TunableSet& tunables,
                             WorkerProcess& worker);

}  // namespace tf

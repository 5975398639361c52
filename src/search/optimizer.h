// The optimization loop behind `tritonforge optimize`: measure the kernel as written,
// search its parameters round by round (compiling in parallel on the CPU cores while the
// GPU measures), let the reasoning engine steer part of each round toward what the
// findings suggest, apply transformation passes when an applier is plugged in (a pass
// that wins becomes the new base whose parameters are searched next), verify every
// candidate on every case, keep the fastest verified one that is slower on no case, and
// confirm it against the original in an interleaved re-measurement. Every decision goes
// to the trace; every measurement to the results database, from which a later run reuses it.
//
// The loop's stages, one concept per file (src/search/):
//   loop.cpp               optimize(): the run, rounds, bases
//   baseline.cpp           the kernel as written, and what it tells the space
//   batch_evaluation.cpp   a round's candidates: prune, reuse, compile in parallel, measure
//   scoring.cpp            objective and per-case acceptance
//   budget.cpp             the one Budget: what may start, the deadlines, the confirmation's reserve
//   stop_conditions.cpp    budget, candidate cap, stall, roofline target, exhausted space
//   measure_callbacks.cpp  after each measurement: database, trace, strategy, progress
//   stored_measurements.cpp  what the results database already knows
//   engine_round.cpp       findings and proposals of the reasoning engine
//   pass_trials.cpp        passes on the best configuration, and switching base
//   confirmation.cpp       interleaved re-measurement of the best against the original
// They share a plain RunState (run_state.h) that each takes and hands on.
//
// The budget is a promise: no request to a worker runs past the budget (compiles stop at
// the end of the search, measurements at the end of the budget), and the search ends early
// enough for the confirmation to fit. One Budget (budget.h) answers every stage.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernel/tunables.h"
#include "search/candidate.h"
#include "search/engine.h"
#include "search/evaluator.h"
#include "search/space.h"
#include "task/task_sources.h"
#include "variant/pass_applier.h"

namespace tf {

struct OptimizeOptions {
  double budget_s = 60;              // wall time for the whole run, start-up included
  // Kept back from budget_s for what runs after the loop (result.json, report.md, report.html,
  // whose figures take Python 2-4 s): the loop plans to end at budget_s - outputs_s.
  double outputs_s = 0;
  double loopBudget() const { return budget_s - outputs_s; }
  // When the run started (the command's start, so that parsing and worker start-up count
  // against the budget); default: when optimize() is called.
  std::optional<std::chrono::steady_clock::time_point> started;
  int compile_workers = 0;           // 0: from the CPU count
  std::string strategy = "auto";
  uint64_t seed = 0;
  int max_candidates = 0;            // 0: no limit
  int stall_rounds = 3;              // stop after this many rounds without a gain; 0: never
  int batch = 0;                     // configurations per round; 0: max(8, compile workers)
  double timing_budget_ms = 250;     // per case and candidate during the search
  double confirm_timing_ms = 600;    // per case and repetition in the confirmation
  Region only;                       // limit the search to these values (tunable id -> values)
  // Configurations tried in the first round, before the kernel's own autotune configs: a warm
  // start (`check --retune` passes the recorded best). Ids the space does not tune are ignored.
  std::vector<Config> start_configs;
  EvaluatorOptions evaluator;
  bool keep_work = false;

  // The effort preset the settings above came from (`--effort`: "quick", "default", "full"),
  // recorded in result.json and the trace; the preset's settings are applied by the caller.
  std::string effort = "default";
  // quick: the best configurations of earlier runs in the results database (this task's,
  // then other tasks' with the same tunable parameters, on the same GPU) are tried first,
  // after start_configs.
  bool warm_start_from_db = false;
  // full: every pass the applier has switched on is proposed on every base, whatever the
  // findings say, and the parameter domains are wider (SpaceHints::wide).
  bool every_pass = false;
  bool wide_space = false;
  // A space exhausted before 80% of the search's time widens its domains (as wide_space's)
  // and the search goes on; false (--no-widen): the exhausted space ends the search.
  bool widen_exhausted = true;

  // The reasoning engine: "rules", "none", "cmd:PROGRAM". `engine_impl` overrides it.
  std::string engine = "rules";
  EngineSettings engine_settings;    // what "llm:MODEL" needs: the worker, the endpoint, the caps
  std::shared_ptr<ReasoningEngine> engine_impl;
  // Transformation passes (src/transform/, or a fake in tests); null: parameters only. The
  // applier knows which passes are switched off.
  std::shared_ptr<PassApplier> passes;
  // Diagnosis of a variant (src/diagnose/), in the engine's terms: called for the original and for each new best.
  std::function<std::vector<EngineDiagnosis>(const std::string& source, const CandidateRecord& measured)> diagnose;
  // The roofline time of each case, when known (flops and bytes of the case and the GPU's
  // ceilings); with within_roofline_pct the search stops once that close to it.
  std::function<std::optional<double>(size_t case_index)> roofline_ms;
  std::optional<double> within_roofline_pct;
  // Without a `diagnose` hook, the loop diagnoses with src/diagnose/'s rules from the
  // compiled texts, the launch and the roofline (no Nsight Compute). Without a
  // `roofline_ms` hook, it measures (once per GPU, cached) the GPU's ceilings and takes the
  // work of each case from the harness's flops(case) / bytes(case).
  bool builtin_diagnosis = true;
  bool builtin_roofline = true;

  // The results database; empty: none (nothing is stored or reused).
  std::filesystem::path db_path;
  bool reuse = true;                 // reuse measurements found in the database
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
  std::string strategy;              // the strategy that ran (auto resolved)
  std::string strategy_reason;
  std::string engine;
  nlohmann::json engine_usage;       // what the engine spent (requests, tokens); null: nothing to say
  int rounds = 0;
  int evaluated = 0;                 // candidates proposed in this run (reused ones included)
  int measured = 0;                  // of those, measured on the GPU in this run
  int reused = 0;                    // of those, taken from the database
  int preloaded = 0;                 // database rows loaded into the search's history
  double elapsed_s = 0;
  double budget_s = 0;
  double reserve_s = 0;              // kept back for the confirmation
  std::string stop_reason;
  nlohmann::json compile_checks = nlohmann::json::array();  // without a GPU: ahead-of-time compiles
  std::vector<std::string> notes;
  double space_size = 0;
  int pruned = 0;
  nlohmann::json trace = nlohmann::json::array();
  std::string db_path;
  int64_t run_id = 0;
  std::optional<int64_t> resumed_from;
  std::vector<std::string> bases;    // how each base came to be ("as written", "pass split-k (P4)")
  // The least time each case can take on this GPU (its work over the ceilings), when known.
  std::vector<std::optional<double>> roofline_ms;
  std::string compute_class;         // the ceiling that applies to the compute ("fp16", "fp32", ...)
  // With several measurement lanes (--gpus): one entry per lane {"lane", "device", "gpu",
  // "alive", "measured"}; null with one.
  nlohmann::json lanes;
  std::string roofline_note;         // why there is none, when there is none
  // Per case, the kernel as written's launcher profiled whole by its diagnosis
  // (CaseMeasurement::timeline), null where it was not.
  nlohmann::json launcher_timeline = nlohmann::json::array();
  // The per-shape dispatch built after the search (per_shape.h), when one was: the feature,
  // its buckets (which candidate serves which shapes), the extra shapes it was verified on and
  // its candidate's id; null when none was built.
  nlohmann::json dispatch;
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
// The same for any source of the task (a rewrite written to `source`), asking the compile
// op for `want` ("spills", "ttgir", "ptx", ...).
nlohmann::json compileChecksOf(const Task& task, const std::filesystem::path& source, const ModuleIR& ir,
                               const TunableSet& tunables, WorkerProcess& worker, const std::vector<std::string>& want);

// The identity of a task in the results database: its source, harness, launcher, kernels
// and check settings.
std::string taskHash(const Task& task, const TaskSources& sources);

}  // namespace tf

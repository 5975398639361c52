// The state of one optimization run, as a plain struct that the loop's stages take and hand
// on (RunState), and the services they use (RunContext): the task, the workers, the engine,
// the trace, the results database, the callbacks after each measurement, and the clock. The
// run's Budget (budget.h) is in RunState: every stage asks it whether it may start.
#pragma once

#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kernel/ast.h"
#include "kernel/module_ir.h"
#include "kernel/tunables.h"
#include "measure/roofline.h"
#include "search/budget.h"
#include "search/candidate.h"
#include "search/engine.h"
#include "search/compile_model.h"
#include "search/failure_patterns.h"
#include "search/evaluator.h"
#include "search/optimizer.h"
#include "search/scoring.h"
#include "search/space.h"
#include "search/stop_conditions.h"
#include "search/strategy.h"
#include "search/trace.h"
#include "search/tuner.h"

namespace tf {

class MeasureCallbacks;

// Parameter sets of one pass tried in one round.
inline constexpr size_t kPassVariants = 4;
class StoredMeasurements;

// A source the parameters apply to: the original, or what a pass made of a base.
struct Base {
  int id = 0;
  std::string origin;                // "as written", "pass split-k (P4) on base 0"
  std::string text;
  std::string hash;
  const ModuleIR* ir = nullptr;
  const TunableSet* tunables = nullptr;
  std::unique_ptr<ParsedSource> parsed;
  std::unique_ptr<ModuleIR> owned_ir;
  std::unique_ptr<TunableSet> owned_tunables;
  int record = 0;                    // the candidate that measured it as written
};

// The search over the current base.
struct BaseSearch {
  std::unique_ptr<Space> full;       // the base's space
  std::unique_ptr<Space> space;      // narrowed by --only
  std::unique_ptr<SearchStrategy> strategy;
  std::unique_ptr<Tuner> tuner;
  int rounds = 0;                    // rounds of search run on this base
  SpaceHints hints;                  // what the space was made with
  Region frozen;                     // dimensions frozen after failures (kept when the space widens)
  bool every_pass = false;           // the engine's rounds add every pass (the space was exhausted)
  bool launch_moves_traced = false;  // the launch options outside the space: traced once per base
};

// What the reasoning engine and the diagnosis have said, under the ids the trace uses, and
// what became of its pass proposals.
struct EngineLedger {
  using FindingKey = std::tuple<FindingKind, std::string, std::string, std::string>;  // kind, kernel, source, summary
  using BaseProposal = std::pair<int, std::string>;   // a base, a proposal id ("P2")
  std::vector<EngineDiagnosis> diagnosis;             // of the current best
  std::map<FindingKey, std::string> finding_ids;      // -> "F3"
  std::vector<EngineFinding> findings;
  std::map<std::string, std::string> proposal_ids;    // the proposal's JSON body -> "P2"
  // A pass proposal tried on a base's configuration (its configKey), and how many
  // configurations of the base it was tried on; a rewrite proposal tried on a base.
  std::set<std::tuple<int, std::string, std::string>> passes_tried;
  std::map<BaseProposal, int> pass_tries;
  std::set<BaseProposal> rewrites_tried;
  // A pass whose best variant tied the best (not faster beyond noise, slower on no case):
  // other passes are also applied on top of it, since some pay only together (TMA descriptor
  // loads tie alone on the H200; persistent + warp specialization over them reach 0.99 of
  // cuBLAS). One per base; -1: none.
  struct Tie {
    int base = -1;
    int candidate = -1;
    PassId pass;
    std::string label;  // "tensor-cores (tied, candidate 7)" for config texts and the trace
  } tie;
  // Bases taken on trial: a pass variant far faster overall that was slower on some case
  // (not a result: its configurations are tuned, and only one slower on no case can win).
  int provisional_bases = 0;
  std::set<std::tuple<int, PassId, std::string>> unproposed_traced;  // base, pass, kernel: a suggestion not proposed
  bool error_traced = false;
  // Failed pass and rewrite proposals, with their errors: the engine's next input
  // (EngineInput::attempts), so that it can repair a rewrite. The latest kMaxAttempts.
  nlohmann::json attempts = nlohmann::json::array();
  int rewrites = 0;                                   // rewrites that passed the guard (each is measured)
};

struct RunState {
  OptimizeResult result;
  BaselineReference baseline;               // lane 0's (the only one of a single-GPU run)
  // With several measurement lanes (--gpus): each lane's own baseline, [0] == baseline. A
  // candidate is scored against the baseline of the lane that measured it, so that a
  // speed-up never compares two GPUs. Empty with one lane.
  std::vector<BaselineReference> lane_baselines;
  SpaceHints hints;
  // The run's time: what may start, the deadlines, the confirmation's reserve (set once the
  // baseline is measured). Reads the run's clock.
  Budget budget;
  std::optional<double> target_objective;  // stop here (near the roofline), when asked
  std::optional<Ceilings> ceilings;
  std::vector<std::unique_ptr<Base>> bases;
  int current_base = 0;
  std::map<std::string, int> seen_sources; // source hash -> the candidate that ran it
  std::map<int, std::string> pass_texts;   // candidate id -> the source a pass made
  // The per-shape dispatch compiled ahead, while the search goes on (per_shape.h): its
  // source's hash ("" : none yet) and its compile.
  std::string dispatch_hash;
  std::shared_future<CompileOutcome> dispatch_compile;
  BaseSearch search;
  EngineLedger engine;
  FailurePatterns failures;                // structural failures: frozen dimensions, dropped passes (the one list)
  CompileTimeModel compile_model;          // seconds per compile, learnt during the run
  TimingOptions search_timing;
  std::vector<double> recent_case_seconds; // wall time of the last measurements of one case
  double baseline_seconds = 0;             // from the start to the baseline measured (its first calls)
  // Configurations from earlier runs in the results database, tried first (`--effort quick`),
  // each with its origin ("warm start: run #3 of this task").
  std::vector<std::pair<Config, std::string>> db_warm_starts;

  Base& base() { return *bases[static_cast<size_t>(current_base)]; }
  const Base& baseOf(const CandidateRecord& rec) const { return *bases[static_cast<size_t>(rec.base)]; }
  // The fastest eligible candidate (verified, slower on no case); null when none is.
  const CandidateRecord* best() const;
  double bestObjective() const;            // 1.0 when nothing beat the baseline
  double baselineNoise() const;            // the largest relative noise of the baseline's cases
  // The baseline a candidate measured on `lane` is scored against.
  const BaselineReference& baselineOf(int lane) const;
  // The source a candidate ran: a pass's output, a base as written, or a base with a
  // configuration applied.
  std::string recordText(const CandidateRecord& rec) const;
  static std::string textOf(const Base& base, const Config& config);
  int nextId() const { return static_cast<int>(result.candidates.size()); }
};

struct RunContext {
  const Task& task;
  const TaskSources& sources;
  const TunableSet& tunables;
  const OptimizeOptions& options;
  OptimizeProgress& progress;
  Evaluator& evaluator;
  ReasoningEngine& engine;
  Trace& trace;
  StoredMeasurements* stored;              // null: no results database
  MeasureCallbacks& callbacks;
  RunClock clock;                          // seconds of the run (budget.h)
};

}  // namespace tf

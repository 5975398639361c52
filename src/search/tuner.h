// The search driver shared by `optimize` (measurements on the GPU) and `tune --replay`
// (recorded measurements): rounds of proposals from a strategy, partly inside the
// parameter regions an engine asks for, the history of what was measured, and the stop
// conditions. The caller measures; the tuner decides.
//
//   Tuner t(space, strategy, rules, &trace);
//   t.preload(baseline, 1.0, "baseline");
//   while (t.stopReason().empty()) {
//     auto round = t.nextRound(batch, regions);     // empty: the space is exhausted
//     for (auto& p : round) t.observe(p, measure(p.config));
//     t.endRound(noise);
//   }
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "search/space.h"
#include "search/strategy.h"
#include "search/trace.h"

namespace tf {

struct StopRules {
  int max_evals = 0;               // evaluations (not preloaded ones); 0: no limit
  int stall_rounds = 3;            // rounds in a row without a gain; 0: never stop for that
  double min_gain = 0.005;         // relative improvement that counts as a gain (at least the noise)
  std::optional<double> target;    // stop once the best objective is at or below this (roofline)
};

// A part of the next round that an engine asks for: `share` of its slots for the
// configurations the strategy picks inside `region`.
struct RegionRequest {
  std::string proposal_id;
  Region region;
  double share = 0.25;
  std::string label;               // for origins: "finding F2: register-spills"
};

struct TunerProposal {
  Config config;
  std::string origin;              // "bayes", "region P3 (...)"
  std::string proposal_id;         // the engine proposal it came from, "" for the strategy's own
};

class Tuner {
 public:
  Tuner(const Space& space, SearchStrategy& strategy, StopRules rules, Trace* trace = nullptr);

  // A measurement known before the search (the baseline, an autotune seed, a database
  // row): in the history, not counted as an evaluation.
  void preload(const Config& config, std::optional<double> objective, const std::string& origin);
  // The next round: up to `n` configurations (fewer when max_evals is near). Empty: nothing
  // left to try (the stop reason says so).
  std::vector<TunerProposal> nextRound(int n, const std::vector<RegionRequest>& regions = {});
  // The result of one proposal of the current round (nullopt: it failed).
  void observe(const TunerProposal& p, std::optional<double> objective);
  // Ends the round: updates the gain bookkeeping, traces what each proposal won or lost,
  // and returns the stop reason ("" to go on). `noise`: the relative noise of a measurement.
  std::string endRound(double noise = 0);
  // Why the search should stop now ("" if it should not): evaluations or target reached.
  std::string stopReason() const;
  void setStopReason(const std::string& why) { stop_ = why; }

  const std::vector<Observation>& history() const { return history_; }
  int evaluations() const { return evals_; }
  int rounds() const { return round_; }
  // The best measured configuration (preloaded ones included).
  std::optional<Observation> best() const;
  const Space& space() const { return space_; }
  const StopRules& rules() const { return rules_; }

 private:
  const Space& space_;
  SearchStrategy& strategy_;
  StopRules rules_;
  Trace* trace_;
  std::vector<Observation> history_;
  int evals_ = 0;
  int round_ = 0;
  int stall_ = 0;
  double best_at_round_start_ = 0;
  bool have_best_ = false;
  std::string stop_;
  struct Outcome {
    std::string origin;
    int count = 0, failed = 0;
    std::optional<double> best;
  };
  std::map<std::string, Outcome> round_outcomes_;   // by proposal id ("" = strategy)
};

}  // namespace tf

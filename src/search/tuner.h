// The search driver shared by `optimize` (measurements on the GPU) and `tune --replay`
// (recorded measurements): rounds of proposals from a strategy, partly inside the
// parameter regions an engine asks for, the history of what was measured, and whether a
// round gained. The caller measures; the tuner proposes; stop_conditions.h decides when to
// stop.
//
//   Tuner t(space, strategy, 0.005, &trace);
//   t.preload(baseline, 1.0, "baseline");
//   while (stop.check(progress).empty()) {
//     auto round = t.nextRound(batch, regions);     // empty: the space is exhausted
//     if (round.empty()) break;
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
  // `min_gain`: the relative improvement that counts as a gain (at least the noise).
  Tuner(const Space& space, SearchStrategy& strategy, double min_gain = 0.005, Trace* trace = nullptr);

  // A measurement known before the search (the baseline, an autotune seed, a database
  // row): in the history, not counted as an evaluation.
  void preload(const Config& config, std::optional<double> objective, const std::string& origin);
  // The next round: up to `n` configurations. Empty: nothing left to try (exhausted()).
  std::vector<TunerProposal> nextRound(int n, const std::vector<RegionRequest>& regions = {});
  // The result of one proposal of the current round (nullopt: it failed).
  void observe(const TunerProposal& p, std::optional<double> objective);
  // Ends the round: updates the gain bookkeeping, traces what each proposal won or lost, and
  // returns whether the best improved beyond max(min_gain, noise), the relative noise of a
  // measurement.
  bool endRound(double noise = 0);
  // Rounds in a row that ended without a gain.
  int stalledRounds() const { return stall_; }
  // The strategy had nothing left to propose.
  bool exhausted() const { return exhausted_; }

  const std::vector<Observation>& history() const { return history_; }
  int evaluations() const { return evals_; }
  int rounds() const { return round_; }
  // The best measured configuration (preloaded ones included).
  std::optional<Observation> best() const;
  const Space& space() const { return *space_; }
  // Searches `space` from now on (a narrowed copy of the same base's space: the history stays).
  void setSpace(const Space& space) { space_ = &space; }
  // Searches a wider space of the same base from now on, with `strategy` (chosen for it): the
  // history stays, so nothing measured is proposed again.
  void widen(const Space& space, SearchStrategy& strategy) {
    space_ = &space;
    strategy_ = &strategy;
    exhausted_ = false;
  }

 private:
  const Space* space_;
  SearchStrategy* strategy_;
  double min_gain_;
  Trace* trace_;
  std::vector<Observation> history_;
  int evals_ = 0;
  int round_ = 0;
  int stall_ = 0;
  double best_at_round_start_ = 0;
  bool have_best_ = false;
  bool exhausted_ = false;
  struct Outcome {
    std::string origin;
    int count = 0, failed = 0;
    std::optional<double> best;
  };
  std::map<std::string, Outcome> round_outcomes_;   // by proposal id ("" = strategy)
};

}  // namespace tf

// When a search stops, as small composable conditions (in the manner of KTT's stop
// conditions): the budget, a cap on candidates, rounds without a gain, a target near the
// roofline, an exhausted space. `optimize` and `tune --replay` build them with
// makeStopConditions from the same settings, and both plan the budget with the one Budget
// (search/budget.h): the search ends `reserve_s` before the budget so that the confirmation
// run fits inside it. Every reason a search stops for comes from a condition here.
//
//   StopConditions stop = makeStopConditions(settings);
//   while (stop.check(progress).empty()) { ...one round... }
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "search/budget.h"

namespace tf {

// Where a search stands, as the conditions see it.
struct SearchProgress {
  double elapsed_s = 0;                    // since the run started (simulated in a replay)
  int evaluated = 0;                       // candidates proposed and evaluated in this run
  int stalled_rounds = 0;                  // rounds in a row without a gain beyond the noise
  std::optional<double> best_objective;    // the best verified objective so far (lower is better)
  // What a round found once it was planned and once it ran, for the conditions that end a
  // search in the middle of one. A round is judged on the progress it started with plus these.
  bool nothing_to_run = false;             // the round has no candidate left to evaluate
  size_t deferred = 0;                     // configurations put off: predicted to compile past the search's end
  bool stopped_by_budget = false;          // every candidate of the round was stopped by a deadline
  double keep_back_s = 0;                  // kept for a stage after the search (a per-shape dispatch)
};

class StopCondition {
 public:
  virtual ~StopCondition() = default;
  // Why the search should stop now, or "" to go on.
  virtual std::string check(const SearchProgress& p) const = 0;
};

// Any condition may stop the search; the first that does names the reason.
class StopConditions {
 public:
  StopConditions() = default;
  StopConditions(StopConditions&&) = default;
  StopConditions& operator=(StopConditions&&) = default;
  void add(std::unique_ptr<StopCondition> c) { conditions_.push_back(std::move(c)); }
  std::string check(const SearchProgress& p) const;
  bool empty() const { return conditions_.empty(); }

 private:
  std::vector<std::unique_ptr<StopCondition>> conditions_;
};

// "budget": the search's end is reached, or a round's every candidate was stopped by a
// deadline; "budget (no configuration left is predicted to compile in time)": a round had
// nothing left to run but configurations deferred for their predicted compile time; "budget
// (the rest kept for a per-shape dispatch)": the time kept back for one is reached.
std::unique_ptr<StopCondition> budgetStop(double search_end_s);
std::unique_ptr<StopCondition> candidateCap(int max_candidates);                 // "max-candidates"
std::unique_ptr<StopCondition> stallStop(int rounds);                            // "no gain in N rounds"
std::unique_ptr<StopCondition> targetStop(double objective, std::string why);    // the best reached it
std::unique_ptr<StopCondition> exhaustedStop();                                  // "space exhausted"

struct StopSettings {
  std::optional<BudgetPlan> budget;        // none: no time limit (a replay without --budget)
  int max_candidates = 0;                  // 0: no cap
  int stall_rounds = 0;                    // 0: never stop for lack of gain
  std::optional<double> target_objective;  // stop once the best is at or below it
  std::string target_reason = "within the target of the roofline";
};

// In this order: budget, candidate cap, target, stall, then an exhausted space (always).
StopConditions makeStopConditions(const StopSettings& s);

}  // namespace tf

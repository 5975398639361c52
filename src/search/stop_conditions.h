// When a search stops, as small composable conditions (in the manner of KTT's stop
// conditions): the budget, a cap on candidates, rounds without a gain, a target near the
// roofline. `optimize` and `tune --replay` build them with makeStopConditions from the same
// settings, and both plan the budget with BudgetPlan: the search ends `reserve_s` before the
// budget so that the confirmation run fits inside it.
//
//   StopConditions stop = makeStopConditions(settings);
//   while (stop.check(progress).empty()) { ...one round... }
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tf {

// Where a search stands, as the conditions see it.
struct SearchProgress {
  double elapsed_s = 0;                    // since the run started (simulated in a replay)
  int evaluated = 0;                       // candidates proposed and evaluated in this run
  int stalled_rounds = 0;                  // rounds in a row without a gain beyond the noise
  std::optional<double> best_objective;    // the best verified objective so far (lower is better)
};

class StopCondition {
 public:
  virtual ~StopCondition() = default;
  // Why the search should stop now, or "" to go on.
  virtual std::string check(const SearchProgress& p) const = 0;
};

// The budget of a run and the part of it kept back for the confirmation. The one formula:
// the confirmation measures the baseline and the best twice each on every case, each
// measurement a timing budget plus its verification (a tenth of what the case's first
// measurement took) plus the request's overhead; at most a fifth of the budget.
struct BudgetPlan {
  double budget_s = 60;
  double reserve_s = 0;
  double searchEnd() const { return budget_s - reserve_s; }
  static BudgetPlan of(double budget_s, const std::vector<double>& case_wall_s, double confirm_timing_ms);
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

std::unique_ptr<StopCondition> budgetStop(double search_end_s);                  // "budget"
std::unique_ptr<StopCondition> candidateCap(int max_candidates);                 // "max-candidates"
std::unique_ptr<StopCondition> stallStop(int rounds);                            // "no gain in N rounds"
std::unique_ptr<StopCondition> targetStop(double objective, std::string why);    // the best reached it

struct StopSettings {
  std::optional<BudgetPlan> budget;        // none: no time limit (a replay without --budget)
  int max_candidates = 0;                  // 0: no cap
  int stall_rounds = 0;                    // 0: never stop for lack of gain
  std::optional<double> target_objective;  // stop once the best is at or below it
  std::string target_reason = "within the target of the roofline";
};

StopConditions makeStopConditions(const StopSettings& s);

}  // namespace tf

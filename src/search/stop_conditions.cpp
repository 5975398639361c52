#include "search/stop_conditions.h"

#include <fmt/format.h>

namespace tf {
namespace {

class BudgetStop final : public StopCondition {
 public:
  explicit BudgetStop(double end) : end_(end) {}
  std::string check(const SearchProgress& p) const override {
    // A round whose every candidate the budget stopped (not compiled or not measured in
    // time) is not a round without a gain: the search is over for lack of time.
    if (p.stopped_by_budget) return "budget";
    // Configurations were left, but none is predicted to compile in the time left.
    if (p.nothing_to_run && p.deferred > 0) return "budget (no configuration left is predicted to compile in time)";
    if (p.elapsed_s >= end_) return "budget";
    return p.elapsed_s + p.keep_back_s >= end_ ? "budget (the rest kept for a per-shape dispatch)" : "";
  }

 private:
  double end_;
};

class CandidateCap final : public StopCondition {
 public:
  explicit CandidateCap(int n) : n_(n) {}
  std::string check(const SearchProgress& p) const override { return p.evaluated >= n_ ? "max-candidates" : ""; }

 private:
  int n_;
};

class Stall final : public StopCondition {
 public:
  explicit Stall(int rounds) : rounds_(rounds) {}
  std::string check(const SearchProgress& p) const override {
    return p.stalled_rounds >= rounds_ ? fmt::format("no gain in {} rounds", p.stalled_rounds) : "";
  }

 private:
  int rounds_;
};

class Target final : public StopCondition {
 public:
  Target(double objective, std::string why) : objective_(objective), why_(std::move(why)) {}
  std::string check(const SearchProgress& p) const override {
    return p.best_objective && *p.best_objective <= objective_ ? why_ : "";
  }

 private:
  double objective_;
  std::string why_;
};

class Exhausted final : public StopCondition {
 public:
  std::string check(const SearchProgress& p) const override { return p.nothing_to_run ? "space exhausted" : ""; }
};

}  // namespace

std::string StopConditions::check(const SearchProgress& p) const {
  for (const auto& c : conditions_) {
    std::string why = c->check(p);
    if (!why.empty()) return why;
  }
  return "";
}

std::unique_ptr<StopCondition> budgetStop(double search_end_s) { return std::make_unique<BudgetStop>(search_end_s); }
std::unique_ptr<StopCondition> candidateCap(int n) { return std::make_unique<CandidateCap>(n); }
std::unique_ptr<StopCondition> stallStop(int rounds) { return std::make_unique<Stall>(rounds); }
std::unique_ptr<StopCondition> targetStop(double objective, std::string why) {
  return std::make_unique<Target>(objective, std::move(why));
}
std::unique_ptr<StopCondition> exhaustedStop() { return std::make_unique<Exhausted>(); }

StopConditions makeStopConditions(const StopSettings& s) {
  StopConditions c;
  if (s.budget) c.add(budgetStop(s.budget->searchEnd()));
  if (s.max_candidates > 0) c.add(candidateCap(s.max_candidates));
  if (s.target_objective) c.add(targetStop(*s.target_objective, s.target_reason));
  if (s.stall_rounds > 0) c.add(stallStop(s.stall_rounds));
  c.add(exhaustedStop());
  return c;
}

}  // namespace tf

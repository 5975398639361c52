#include "search/stop_conditions.h"

#include <fmt/format.h>

#include <algorithm>

namespace tf {
namespace {

class Budget final : public StopCondition {
 public:
  explicit Budget(double end) : end_(end) {}
  std::string check(const SearchProgress& p) const override { return p.elapsed_s >= end_ ? "budget" : ""; }

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

}  // namespace

BudgetPlan BudgetPlan::of(double budget_s, const std::vector<double>& case_wall_s, double confirm_timing_ms) {
  double per_case = 0;
  // A case's baseline wall time includes its first compile, which the confirmation does not
  // pay: a tenth of it stands for verification's share (measured on the H200: reserves of
  // 9-12 s with a quarter, confirmations of 3-7 s).
  for (double wall : case_wall_s) per_case += 2 * 2 * (confirm_timing_ms / 1000.0 + 0.15 + wall * 0.1);
  BudgetPlan p;
  p.budget_s = budget_s;
  p.reserve_s = std::min(budget_s * 0.2, 1.0 + per_case);
  return p;
}

std::string StopConditions::check(const SearchProgress& p) const {
  for (const auto& c : conditions_) {
    std::string why = c->check(p);
    if (!why.empty()) return why;
  }
  return "";
}

std::unique_ptr<StopCondition> budgetStop(double search_end_s) { return std::make_unique<Budget>(search_end_s); }
std::unique_ptr<StopCondition> candidateCap(int n) { return std::make_unique<CandidateCap>(n); }
std::unique_ptr<StopCondition> stallStop(int rounds) { return std::make_unique<Stall>(rounds); }
std::unique_ptr<StopCondition> targetStop(double objective, std::string why) {
  return std::make_unique<Target>(objective, std::move(why));
}

StopConditions makeStopConditions(const StopSettings& s) {
  StopConditions c;
  if (s.budget) c.add(budgetStop(s.budget->searchEnd()));
  if (s.max_candidates > 0) c.add(candidateCap(s.max_candidates));
  if (s.target_objective) c.add(targetStop(*s.target_objective, s.target_reason));
  if (s.stall_rounds > 0) c.add(stallStop(s.stall_rounds));
  return c;
}

}  // namespace tf

#include "search/budget.h"

#include <algorithm>
#include <cassert>

namespace tf {
namespace {

// The margin a stage's own estimate gets before it is held against the time left:
// needed = factor x expected + extra_s.
struct Margin {
  double factor = 1;
  double extra_s = 0;
};

// The margin policy, in one place.
Margin marginOf(BudgetStage stage) {
  switch (stage) {
    // The compile model's prediction as it is: a compile past the search's end is stopped by
    // the compile deadline anyway, and deferring one costs only its place in this round.
    case BudgetStage::kCompile: return {1, 0};
    // The median of the last measurements of a case, times the cases: the run deadline (the
    // budget's end) still bounds a measurement that takes longer, inside the reserve.
    case BudgetStage::kMeasure: return {1, 0};
    // A second more: the rewrite and its check (the result parsed and, with a signature,
    // compiled for sm_90) run before the variants join the batch (a round figure, not a
    // measurement).
    case BudgetStage::kPassVariant: return {1, 1.0};
    // Twice a case's measurement: an inspection runs the case once and sends its compiled
    // texts (TTGIR, PTX) back, and a later case's diagnosis is worth something only with
    // search time left to act on it (a judgement, not a measurement).
    case BudgetStage::kDiagnosisCase: return {2, 0};
    // The confirmation is fitted to what is left (confirmationTimingMs), not refused here.
    case BudgetStage::kConfirmation: return {1, 0};
  }
  return {};
}

}  // namespace

BudgetPlan BudgetPlan::of(double budget_s, const std::vector<double>& case_wall_s, double confirm_timing_ms,
                          double fresh_worker_s) {
  double per_case = 0;
  // A case's baseline wall time includes its first compile, which the confirmation does not
  // pay: a tenth of it stands for verification's share (measured on the H200: reserves of
  // 9-12 s with a quarter, confirmations of 3-7 s).
  for (double wall : case_wall_s) {
    per_case +=
        Budget::kConfirmMeasurementsPerCase * (confirm_timing_ms / 1000.0 + Budget::kRequestOverheadS + wall * 0.1);
  }
  BudgetPlan p;
  p.budget_s = budget_s;
  // A second for the requests' start and the comparison; never more than a fifth of the
  // budget, whatever the cases cost (the search needs the rest).
  // The confirmation runs in a fresh measurement process (confirmation.cpp): its start is kept
  // back too.
  p.reserve_s = std::min(budget_s * 0.2, 1.0 + per_case + fresh_worker_s);
  return p;
}

void Budget::reserveForConfirmation(const std::vector<double>& case_wall_s, double confirm_timing_ms,
                                    double fresh_worker_s) {
  plan_ = BudgetPlan::of(plan_.budget_s, case_wall_s, confirm_timing_ms, fresh_worker_s);
}

double Budget::elapsed() const {
  assert(clock_ && "a budget without a clock");
  return clock_->elapsed();
}

double Budget::left() const { return total() - elapsed(); }

double Budget::searchLeft() const { return searchEnd() - elapsed(); }

BudgetAnswer Budget::mayStart(BudgetStage stage, double expected_s) const {
  const Margin m = marginOf(stage);
  if (elapsed() + m.factor * expected_s + m.extra_s <= searchEnd()) return {};
  BudgetAnswer no;
  no.may = false;
  no.reason = stage == BudgetStage::kMeasure ? "the budget ran out before it was measured" : "not enough budget left";
  return no;
}

double Budget::deadline(BudgetStage stage) const {
  // Nothing compiled after the search's end could be measured; what runs on the GPU (a
  // measurement started in time, an inspection, the confirmation) may use the reserve.
  return stage == BudgetStage::kCompile ? searchEnd() : total();
}

std::optional<double> Budget::confirmationTimingMs(size_t cases, double overhead_s, double wanted_ms,
                                                   double before_s) const {
  double per = (left() - before_s) / (kConfirmMeasurementsPerCase * static_cast<double>(cases)) - overhead_s;
  double timing_ms = wanted_ms;
  if (per * 1000.0 < timing_ms) timing_ms = per * 1000.0;
  if (timing_ms < kMinConfirmTimingMs) return std::nullopt;
  return timing_ms;
}

}  // namespace tf

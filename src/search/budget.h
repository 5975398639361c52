// The run's time budget: the one object every stage asks "may this start?" and "how long may
// it take?". Built once per run from --budget (less what the outputs need) and the run's
// clock; once the baseline is measured it keeps back what the confirmation needs (the
// reserve, BudgetPlan::of's one formula). `optimize` runs it on the steady clock (RunClock),
// `tune --replay` on a simulated one (each evaluation costs a fixed time).
//
//   Budget budget(options.loopBudget(), clock);
//   budget.reserveForConfirmation(baseline_walls, confirm_timing_ms);
//   if (BudgetAnswer a = budget.mayStart(BudgetStage::kPassVariant, expected_s); !a) skip(a.reason);
//   evaluator.setDeadlines(clock.at(budget.deadline(BudgetStage::kCompile)), ...);
//
// The margins, all in budget.cpp (marginOf), each with why:
//   stage            may start when                              deadline
//   kCompile         elapsed + predicted compile <= search end   the search's end
//   kMeasure         elapsed + expected measurement <= search end the budget's end
//   kPassVariant     elapsed + expected measurement + 1 s <= end  the budget's end
//   kDiagnosisCase   elapsed + 2 x a case's measurement <= end    the budget's end
//   kConfirmation    timing shrunk to fit what is left, >= 50 ms  the budget's end
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace tf {

// Seconds since the run started.
class ElapsedClock {
 public:
  virtual ~ElapsedClock() = default;
  virtual double elapsed() const = 0;
};

// The run's own clock (`optimize`): the steady clock from the command's start, and the time
// points the evaluator's deadlines are set to.
class RunClock final : public ElapsedClock {
 public:
  using Clock = std::chrono::steady_clock;
  explicit RunClock(Clock::time_point start) : start_(start) {}
  double elapsed() const override { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  // The time point `seconds` after the start.
  Clock::time_point at(double seconds) const {
    return start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  }

 private:
  Clock::time_point start_;
};

// A clock that reads what it is told (`tune --replay`, where each evaluation costs a fixed
// time; tests).
class SimulatedClock final : public ElapsedClock {
 public:
  double elapsed() const override { return now_s_; }
  void set(double seconds) { now_s_ = seconds; }

 private:
  double now_s_ = 0;
};

// The budget of a run and the part of it kept back for the confirmation. The one formula:
// the confirmation measures the baseline and the best twice each on every case, each
// measurement a timing budget plus its verification (a tenth of what the case's first
// measurement took) plus the request's overhead; plus a second; at most a fifth of the budget.
struct BudgetPlan {
  double budget_s = 60;
  double reserve_s = 0;
  double searchEnd() const { return budget_s - reserve_s; }
  // `fresh_worker_s`: what starting the confirmation's own measurement process costs.
  static BudgetPlan of(double budget_s, const std::vector<double>& case_wall_s, double confirm_timing_ms,
                       double fresh_worker_s = 0);
};

// What takes time in a run, as the budget tells them apart.
enum class BudgetStage {
  kCompile,        // one configuration's compile on the pool
  kMeasure,        // a candidate's cases on the GPU, in the search
  kPassVariant,    // a pass's (or a rewrite's) variants: rewritten, checked, then measured
  kDiagnosisCase,  // one more case inspected by a diagnosis (compiled texts back)
  kConfirmation,   // the re-measurement of the best against the kernel as written
};

// The budget's answer to "may this start now?"; `reason` says why not, in the trace's words.
struct BudgetAnswer {
  bool may = true;
  std::string reason;
  explicit operator bool() const { return may; }
};

class Budget {
 public:
  // The confirmation's measurements per case: baseline and best, twice each (two alternations).
  static constexpr int kConfirmMeasurementsPerCase = 4;
  // What one measurement request costs beyond its timing budget when nothing better is known
  // (the worker's round trip, copying inputs, verification on a small case).
  static constexpr double kRequestOverheadS = 0.15;
  // The shortest timing per measurement worth a confirmation: below it, the search's own
  // measurements decide.
  static constexpr double kMinConfirmTimingMs = 50;

  // A budget without a clock answers nothing (RunState holds one before the run sets it).
  Budget() = default;
  // All of `budget_s`, nothing kept back yet: until the baseline says how long the
  // confirmation needs, nothing runs past the budget's end.
  Budget(double budget_s, const ElapsedClock& clock) : Budget(BudgetPlan{budget_s, 0}, clock) {}
  Budget(BudgetPlan plan, const ElapsedClock& clock) : plan_(plan), clock_(&clock) {}

  // Keeps back what the confirmation needs (BudgetPlan::of), from the walls of the
  // baseline's cases.
  void reserveForConfirmation(const std::vector<double>& case_wall_s, double confirm_timing_ms,
                              double fresh_worker_s = 0);

  const BudgetPlan& plan() const { return plan_; }
  double total() const { return plan_.budget_s; }
  double reserve() const { return plan_.reserve_s; }
  double searchEnd() const { return plan_.searchEnd() - kept_s_; }
  // Ends the search `seconds` earlier, for a stage after it (the per-shape dispatch); 0 gives
  // the time back. The confirmation's reserve is not touched.
  void keepBack(double seconds) { kept_s_ = seconds > 0 ? seconds : 0; }
  double keptBack() const { return kept_s_; }

  double elapsed() const;
  double left() const;          // until the budget's end
  double searchLeft() const;    // until the search's end
  bool searchOver() const { return elapsed() >= searchEnd(); }
  // Whether less than `share` of the search's time is spent (how young the run is).
  bool searchBefore(double share) const { return elapsed() < share * searchEnd(); }

  // Whether `stage`, expected to take `expected_s` (its own estimate, before any margin),
  // may start now: it must end, margin included, by the search's end.
  BudgetAnswer mayStart(BudgetStage stage, double expected_s) const;
  // Seconds since the start by which `stage` must be over: the point past which a request
  // of that stage is stopped (and is not-run, not a failure).
  double deadline(BudgetStage stage) const;

  // The confirmation's timing per measurement: `wanted_ms`, shrunk so that its
  // measurements of `cases` cases, each also costing `overhead_s`, end by the budget's end
  // after `before_s` spent first (a fresh measurement process's start); nullopt when that
  // leaves less than kMinConfirmTimingMs.
  std::optional<double> confirmationTimingMs(size_t cases, double overhead_s, double wanted_ms,
                                             double before_s = 0) const;

 private:
  BudgetPlan plan_;
  double kept_s_ = 0;
  const ElapsedClock* clock_ = nullptr;
};

}  // namespace tf

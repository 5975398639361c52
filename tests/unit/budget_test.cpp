// The run's Budget (search/budget.h): each stage's margin, the confirmation's reserve, the
// deadlines, the confirmation's timing fitted to what is left, and the same budget on a
// simulated clock (`tune --replay`); the stop conditions that end a search for lack of time.
#include <gtest/gtest.h>

#include <thread>

#include "search/budget.h"
#include "search/replay.h"
#include "search/stop_conditions.h"
#include "support/test_support.h"

namespace tf {
namespace {

// 60 s, 10 of them kept back: the search ends at 50 s.
BudgetPlan sixtyTenPlan() { return BudgetPlan{60, 10}; }

TEST(Budget, EachStageMayStartWhenItsEstimateAndMarginEndByTheSearchsEnd) {
  SimulatedClock clock;
  Budget b(sixtyTenPlan(), clock);
  clock.set(40);
  // A measurement: its estimate alone.
  EXPECT_TRUE(b.mayStart(BudgetStage::kMeasure, 10));
  BudgetAnswer late = b.mayStart(BudgetStage::kMeasure, 10.5);
  EXPECT_FALSE(late);
  EXPECT_EQ(late.reason, "the budget ran out before it was measured");
  // A pass's variants: a second more for the rewrite and its check.
  EXPECT_TRUE(b.mayStart(BudgetStage::kPassVariant, 9));
  BudgetAnswer pass = b.mayStart(BudgetStage::kPassVariant, 9.5);
  EXPECT_FALSE(pass);
  EXPECT_EQ(pass.reason, "not enough budget left");
  // One more case of a diagnosis: twice a case's measurement.
  EXPECT_TRUE(b.mayStart(BudgetStage::kDiagnosisCase, 5));
  EXPECT_FALSE(b.mayStart(BudgetStage::kDiagnosisCase, 5.5));
  // A compile: the predicted time as it is.
  EXPECT_TRUE(b.mayStart(BudgetStage::kCompile, 10));
  EXPECT_FALSE(b.mayStart(BudgetStage::kCompile, 10.5));
  // The reserve is not the search's: at the search's end nothing that takes time starts.
  clock.set(50);
  EXPECT_FALSE(b.mayStart(BudgetStage::kMeasure, 0.01));
  EXPECT_FALSE(b.mayStart(BudgetStage::kPassVariant, 0));
}

TEST(Budget, TheReserveIsKeptBackOnceTheBaselineIsMeasured) {
  SimulatedClock clock;
  Budget b(60, clock);
  // Before the baseline: the whole budget, nothing kept back.
  EXPECT_DOUBLE_EQ(b.reserve(), 0);
  EXPECT_DOUBLE_EQ(b.searchEnd(), 60);
  // Two cases whose first measurements took 0.5 s: 4 x (0.6 + 0.15 + 0.05) each, plus 1 s.
  b.reserveForConfirmation({0.5, 0.5}, 600);
  EXPECT_NEAR(b.reserve(), 1.0 + 2 * 4 * (0.6 + 0.15 + 0.05), 1e-9);
  EXPECT_NEAR(b.searchEnd(), 60 - 7.4, 1e-9);
  EXPECT_DOUBLE_EQ(b.total(), 60);
  // At most a fifth of the budget.
  Budget small(10, clock);
  small.reserveForConfirmation({5.0, 5.0}, 600);
  EXPECT_NEAR(small.reserve(), 2.0, 1e-9);
  EXPECT_NEAR(small.searchEnd(), 8.0, 1e-9);
}

TEST(Budget, WhatIsLeftFollowsTheClock) {
  SimulatedClock clock;
  Budget b(sixtyTenPlan(), clock);
  clock.set(12.5);
  EXPECT_DOUBLE_EQ(b.elapsed(), 12.5);
  EXPECT_DOUBLE_EQ(b.left(), 47.5);
  EXPECT_DOUBLE_EQ(b.searchLeft(), 37.5);
  EXPECT_FALSE(b.searchOver());
  // How young the run is: 60% of the search's 50 s is 30 s.
  clock.set(29.9);
  EXPECT_TRUE(b.searchBefore(0.6));
  clock.set(30);
  EXPECT_FALSE(b.searchBefore(0.6));
  clock.set(50);
  EXPECT_TRUE(b.searchOver());
  EXPECT_DOUBLE_EQ(b.searchLeft(), 0);
  EXPECT_DOUBLE_EQ(b.left(), 10);
}

TEST(Budget, CompilesEndWithTheSearchWhatRunsOnTheGpuWithTheBudget) {
  SimulatedClock clock;
  Budget b(sixtyTenPlan(), clock);
  EXPECT_DOUBLE_EQ(b.deadline(BudgetStage::kCompile), 50);
  EXPECT_DOUBLE_EQ(b.deadline(BudgetStage::kMeasure), 60);
  EXPECT_DOUBLE_EQ(b.deadline(BudgetStage::kPassVariant), 60);
  EXPECT_DOUBLE_EQ(b.deadline(BudgetStage::kDiagnosisCase), 60);
  EXPECT_DOUBLE_EQ(b.deadline(BudgetStage::kConfirmation), 60);
  // Before the reserve is known both are the budget's end.
  Budget early(60, clock);
  EXPECT_DOUBLE_EQ(early.deadline(BudgetStage::kCompile), 60);
  EXPECT_DOUBLE_EQ(early.deadline(BudgetStage::kMeasure), 60);
}

TEST(Budget, TheConfirmationsTimingShrinksToFitAndGivesUpUnder50Ms) {
  SimulatedClock clock;
  Budget b(sixtyTenPlan(), clock);
  // 10 s left, 2 cases: 8 measurements of 1.25 s, 0.15 s of it overhead: the 600 ms wanted fit.
  clock.set(50);
  ASSERT_TRUE(b.confirmationTimingMs(2, 0.15, 600));
  EXPECT_DOUBLE_EQ(*b.confirmationTimingMs(2, 0.15, 600), 600);
  // 2 s left: 0.25 s each, 0.15 s of it overhead: 100 ms.
  clock.set(58);
  ASSERT_TRUE(b.confirmationTimingMs(2, 0.15, 600));
  EXPECT_NEAR(*b.confirmationTimingMs(2, 0.15, 600), 100, 1e-9);
  // A larger overhead leaves 40 ms: the search's measurements decide.
  EXPECT_FALSE(b.confirmationTimingMs(2, 0.21, 600));
  // Nothing left.
  clock.set(60);
  EXPECT_FALSE(b.confirmationTimingMs(2, 0.15, 600));
}

// A fresh measurement process for the confirmation: its start comes off what the timing has,
// and the reserve keeps it back (within the fifth of the budget).
TEST(Budget, AFreshProcessStartIsKeptBackAndComesOffTheConfirmation) {
  SimulatedClock clock;
  Budget b(sixtyTenPlan(), clock);
  // 4 s left, 2 cases, 3 s to start a process: 1 s for 8 measurements, 0.125 s each, 0.1 s
  // of it overhead: 25 ms, under 50 ms, so no fresh process; without the start, 400 ms.
  clock.set(56);
  EXPECT_FALSE(b.confirmationTimingMs(2, 0.1, 600, 3.0));
  ASSERT_TRUE(b.confirmationTimingMs(2, 0.1, 600));
  EXPECT_NEAR(*b.confirmationTimingMs(2, 0.1, 600), 400, 1e-9);
  // 7 s left: with the 3 s start, 4 s for 8 measurements: 0.5 - 0.1 = 400 ms.
  clock.set(53);
  ASSERT_TRUE(b.confirmationTimingMs(2, 0.1, 600, 3.0));
  EXPECT_NEAR(*b.confirmationTimingMs(2, 0.1, 600, 3.0), 400, 1e-9);
  // The reserve: one case of 1 s wall, 100 ms timing: 1 + 4 x (0.1 + 0.15 + 0.1) = 2.4 s,
  // plus a 3 s start: 5.4 s; capped at a fifth of the budget.
  EXPECT_NEAR(BudgetPlan::of(60, {1.0}, 100, 3.0).reserve_s, 5.4, 1e-9);
  EXPECT_NEAR(BudgetPlan::of(60, {1.0}, 100).reserve_s, 2.4, 1e-9);
  EXPECT_NEAR(BudgetPlan::of(20, {1.0}, 100, 3.0).reserve_s, 4.0, 1e-9);
}

TEST(Budget, TheRunClockCountsFromTheCommandsStart) {
  auto start = RunClock::Clock::now() - std::chrono::milliseconds(1500);
  RunClock clock(start);
  Budget b(60, clock);
  EXPECT_GE(b.elapsed(), 1.5);
  EXPECT_LT(b.elapsed(), 30);
  EXPECT_EQ(clock.at(2.0) - start, std::chrono::duration_cast<RunClock::Clock::duration>(std::chrono::seconds(2)));
}

TEST(StopConditions, TheBudgetEndsARoundThatRanOutOrHasNothingThatCompilesInTime) {
  StopSettings s;
  s.budget = sixtyTenPlan();
  s.max_candidates = 10;
  StopConditions stop = makeStopConditions(s);
  SearchProgress p;
  p.elapsed_s = 20;
  EXPECT_EQ(stop.check(p), "");
  // Configurations left, none predicted to compile before the search's end.
  p.nothing_to_run = true;
  p.deferred = 3;
  EXPECT_EQ(stop.check(p), "budget (no configuration left is predicted to compile in time)");
  // Nothing left at all.
  p.deferred = 0;
  EXPECT_EQ(stop.check(p), "space exhausted");
  // Every candidate of the round stopped by a deadline: no round without a gain, the budget.
  p.nothing_to_run = false;
  p.stopped_by_budget = true;
  EXPECT_EQ(stop.check(p), "budget");
  // The budget comes before the other conditions.
  p.evaluated = 10;
  EXPECT_EQ(stop.check(p), "budget");
  p.stopped_by_budget = false;
  EXPECT_EQ(stop.check(p), "max-candidates");
}

// Time kept back for a stage after the search (a per-shape dispatch) ends the search that
// much earlier, for every stage and for the stop condition; given back, the search's end is
// as planned. The confirmation's reserve is not touched.
TEST(Budget, TimeKeptBackForADispatchEndsTheSearchEarlier) {
  SimulatedClock clock;
  Budget b(sixtyTenPlan(), clock);
  clock.set(40);
  b.keepBack(6);
  EXPECT_DOUBLE_EQ(b.searchEnd(), 44);
  EXPECT_DOUBLE_EQ(b.reserve(), 10);
  EXPECT_DOUBLE_EQ(b.deadline(BudgetStage::kCompile), 44);
  EXPECT_DOUBLE_EQ(b.deadline(BudgetStage::kMeasure), 60);
  EXPECT_TRUE(b.mayStart(BudgetStage::kMeasure, 4));
  EXPECT_FALSE(b.mayStart(BudgetStage::kMeasure, 4.5));
  b.keepBack(0);
  EXPECT_DOUBLE_EQ(b.searchEnd(), 50);
  EXPECT_TRUE(b.mayStart(BudgetStage::kPassVariant, 9));

  StopSettings s;
  s.budget = sixtyTenPlan();
  StopConditions stop = makeStopConditions(s);
  SearchProgress p;
  p.elapsed_s = 45;
  EXPECT_EQ(stop.check(p), "");
  p.keep_back_s = 5;
  EXPECT_EQ(stop.check(p), "budget (the rest kept for a per-shape dispatch)");
  p.elapsed_s = 50;
  EXPECT_EQ(stop.check(p), "budget");
}

TEST(Budget, ReplayRunsTheSameBudgetOnASimulatedClock) {
  auto dir = test::tempDir("budget-replay");
  test::writeFile(dir / "s.csv",
                  "# tritonforge-sweep/1\n"
                  "# kernel=mm elem_bytes=2 baseline=\"32,32,4\"\n"
                  "BLOCK_M,BLOCK_N,num_warps,time_ms\n"
                  "32,32,4,4.0\n64,32,4,3.0\n32,64,4,3.1\n64,64,4,2.0\n64,64,8,1.5\n"
                  "128,64,8,1.2\n64,128,8,\n128,128,8,1.0\n128,128,4,1.1\n");
  Sweep sweep = loadSweep(dir / "s.csv");
  ReplayOptions o;
  o.strategy = "exhaustive";
  o.batch = 1;
  ReplayResult unlimited = replaySweep(sweep, o);
  EXPECT_EQ(unlimited.evaluations, 8);
  EXPECT_EQ(unlimited.stop_reason, "space exhausted");
  // 10 s at 1 s per candidate: the reserve is a fifth (2 s) and the baseline took the first
  // second, so the search ends after 7 evaluations.
  o.budget_s = 10;
  o.seconds_per_candidate = 1;
  ReplayResult limited = replaySweep(sweep, o);
  EXPECT_EQ(limited.evaluations, 7);
  EXPECT_EQ(limited.stop_reason, "budget");
}

}  // namespace
}  // namespace tf

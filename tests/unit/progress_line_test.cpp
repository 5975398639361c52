// The progress line: the bar follows the budget spent and stops full at the budget.
#include "report/progress_line.h"

#include <gtest/gtest.h>

namespace tf {
namespace {

TEST(ProgressLine, BarOfTheBudgetSpent) {
  EXPECT_EQ(progressLine(15, 60, 40, 31, 2, "best 1.84x (BLOCK=128)", 20),
            "[#####---------------] 15/60 s  40 candidates, 31 verified, 2 failed; best 1.84x (BLOCK=128)");
  EXPECT_EQ(progressLine(0, 60, 0, 0, 0, "best: as written", 10), "[----------] 0/60 s  0 candidates, 0 verified, "
                                                                  "0 failed; best: as written");
  // The confirmation may run a little past the budget: the bar stays full.
  EXPECT_EQ(progressLine(62, 60, 90, 80, 5, "b", 4), "[####] 62/60 s  90 candidates, 80 verified, 5 failed; b");
}

TEST(ProgressLine, WithoutABudgetTheElapsedTimeAlone) {
  EXPECT_EQ(progressLine(3.25, 0, 7, 6, 1, "b"), "[  3.2s] 7 candidates, 6 verified, 1 failed; b");
}

}  // namespace
}  // namespace tf

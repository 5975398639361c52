// Two runs of a program compared by the numbers they print (run --overlay --compare).
#include <gtest/gtest.h>

#include "capture/output_compare.h"
#include "util/error.h"

namespace tf {
namespace {

TEST(OutputCompare, NumbersWithinTheToleranceAreTheSame) {
  auto c = compareOutputs("step 1 loss 2.3051\nstep 2 loss 2.1000e+00\n", "step 1 loss 2.3052\nstep 2 loss 2.1001e+00\n",
                          1e-3, 0, "");
  EXPECT_TRUE(c.same) << c.difference;
  EXPECT_EQ(c.lines, 2u);
  EXPECT_EQ(c.values, 4u);
  EXPECT_NEAR(c.max_abs, 1e-4, 1e-9);
}

TEST(OutputCompare, ANumberBeyondTheToleranceIsNamedWithItsLine) {
  auto c = compareOutputs("loss 2.3051\nlogits mean -0.125\n", "loss 2.3051\nlogits mean -0.135\n", 1e-2, 1e-4, "");
  EXPECT_FALSE(c.same);
  EXPECT_NE(c.difference.find("line 2"), std::string::npos) << c.difference;
  EXPECT_NE(c.difference.find("-0.125"), std::string::npos) << c.difference;
}

TEST(OutputCompare, TextAroundTheNumbersMustMatch) {
  EXPECT_FALSE(compareOutputs("loss 1.0\n", "lost 1.0\n", 1, 1, "").same);
  EXPECT_FALSE(compareOutputs("loss 1.0\n", "loss 1.0\nextra\n", 1, 1, "").same);
  EXPECT_FALSE(compareOutputs("loss 1.0\n", "loss nan\n", 1, 1, "").same);
  EXPECT_TRUE(compareOutputs("loss nan\n", "loss nan\n", 0, 0, "").same);
  EXPECT_FALSE(compareOutputs("grad inf\n", "grad -inf\n", 1, 1, "").same);
  // Names with digits are text, not numbers.
  auto c = compareOutputs("fp16 layer3 1.0\n", "fp16 layer3 1.0\n", 0, 0, "");
  EXPECT_TRUE(c.same);
  EXPECT_EQ(c.values, 1u);
}

TEST(OutputCompare, TheLineFilterKeepsOnlyMatchingLines) {
  auto c = compareOutputs("took 1.52 s\nloss 3.0\n", "took 1.10 s\nloss 3.0\n", 0, 0, "^loss");
  EXPECT_TRUE(c.same) << c.difference;
  EXPECT_EQ(c.lines, 1u);
  EXPECT_THROW(compareOutputs("", "", 0, 0, "("), UserError);
}

}  // namespace
}  // namespace tf

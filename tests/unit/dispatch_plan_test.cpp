// The per-shape dispatch's plan: which options serve which buckets of which feature, and the
// shapes near a case that a bucket is verified on (search/dispatch_plan.h).
#include <gtest/gtest.h>

#include "search/dispatch_plan.h"

namespace tf {
namespace {

// Cases whose launcher gets x with M rows and 4096 columns, and an int `eps_steps` = 3.
DispatchInput rowsInput(const std::vector<int64_t>& rows) {
  DispatchInput in;
  for (int64_t m : rows) {
    nlohmann::json args = nlohmann::json::array(
        {{{"name", "x"}, {"shape", {m, 4096}}, {"dtype", "float16"}}, {{"name", "steps"}, {"value", 3}}});
    in.cases.push_back(caseFeatures(args));
    in.as_written_ms.push_back(1.0);
    in.tolerance.push_back(0.02);
  }
  return in;
}

TEST(DispatchPlan, FeaturesOfTheArguments) {
  CaseFeatures f = caseFeatures(nlohmann::json::array(
      {{{"name", "x"}, {"shape", {8, 16}}}, {{"name", "n"}, {"value", 5}}, {{"name", nullptr}}, {{"name", "s"}}}));
  ASSERT_EQ(f.features.size(), 3u);
  EXPECT_EQ(f.features[0].label(), "x.shape[0]");
  EXPECT_EQ(f.features[1].label(), "x.shape[1]");
  EXPECT_EQ(f.features[2].label(), "n");
  EXPECT_EQ(f.values, (std::vector<int64_t>{8, 16, 5}));
  EXPECT_EQ((DispatchFeature{2, "", 1}).label(), "arg 2.shape[1]");
}

TEST(DispatchPlan, TwoOptionsSplitAtTheGeometricMidpoint) {
  DispatchInput in = rowsInput({16, 64, 4096, 8192});
  in.option_ms = {{0.5, 0.6, 1.5, 1.6},    // fast on few rows
                  {1.2, 1.1, 0.7, 0.6},    // fast on many
                  {0.9, 0.9, 0.9, 0.9}};   // a little faster everywhere
  auto plan = planDispatch(in);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->feature.label(), "x.shape[0]");
  ASSERT_EQ(plan->buckets.size(), 2u);
  EXPECT_EQ(plan->buckets[0].option, 0);
  EXPECT_EQ(plan->buckets[0].lo, 8);
  EXPECT_EQ(plan->buckets[0].hi, 512);   // floor(sqrt(64 * 4096))
  EXPECT_EQ(plan->buckets[1].option, 1);
  EXPECT_EQ(plan->buckets[1].lo, 513);
  EXPECT_EQ(plan->buckets[1].hi, 16384);
  EXPECT_EQ(plan->per_case, (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(plan->options, (std::vector<int>{0, 1}));
  EXPECT_NEAR(plan->objective, std::exp((std::log(0.5) + std::log(0.6) + std::log(0.7) + std::log(0.6)) / 4), 1e-12);
}

TEST(DispatchPlan, AnOptionSlowerOnACaseNeverServesIt) {
  DispatchInput in = rowsInput({16, 4096});
  // Faster on 16 rows, 3% slower on 4096 (beyond the 2% tolerance): 4096 keeps the original.
  in.option_ms = {{0.5, 1.03}};
  auto plan = planDispatch(in);
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan->buckets.size(), 2u);
  EXPECT_EQ(plan->buckets[0].option, 0);
  EXPECT_EQ(plan->buckets[1].option, -1);
  EXPECT_EQ(plan->options, (std::vector<int>{0}));
  // Faster on both: one option for every shape is the single best candidate, not a dispatch.
  in.option_ms = {{0.5, 0.9}};
  EXPECT_FALSE(planDispatch(in));
}

TEST(DispatchPlan, CasesThatTheLauncherCannotTellApartShareAnOption) {
  // Two cases with 16 rows: one option must serve both, the one best over the pair.
  DispatchInput in = rowsInput({16, 16, 4096});
  in.option_ms = {{0.5, 0.99, 1.5}, {0.8, 0.6, 1.5}, {1.5, 1.5, 0.5}};
  auto plan = planDispatch(in);
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan->buckets.size(), 2u);
  EXPECT_EQ(plan->buckets[0].option, 1);          // 0.8 * 0.6 < 0.5 * 0.99
  EXPECT_EQ(plan->buckets[0].cases, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(plan->buckets[1].option, 2);
}

TEST(DispatchPlan, NothingToSplitOn) {
  DispatchInput in = rowsInput({128, 128});
  in.option_ms = {{0.5, 1.5}, {1.5, 0.5}};
  EXPECT_FALSE(planDispatch(in));   // every feature the same in both cases
  DispatchInput one = rowsInput({128});
  one.option_ms = {{0.5}};
  EXPECT_FALSE(planDispatch(one));
  DispatchInput none = rowsInput({16, 4096});
  EXPECT_FALSE(planDispatch(none));  // no option
}

TEST(DispatchPlan, AtMostThreeVariants) {
  DispatchInput in = rowsInput({1, 4, 16, 64, 256});
  // Each option is the fastest on one case only, by a lot.
  in.option_ms.assign(5, std::vector<double>(5, 1.0));
  for (size_t o = 0; o < 5; ++o) in.option_ms[o][o] = 0.2 + 0.1 * static_cast<double>(o);
  auto plan = planDispatch(in);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->options.size(), kMaxDispatchVariants);
  // The three best gains: options 0, 1, 2 on 1, 4, 16 rows; the rest as written.
  EXPECT_EQ(plan->per_case, (std::vector<int>{0, 1, 2, -1, -1}));
}

TEST(DispatchPlan, TheParameterBehindTheFeature) {
  DispatchInput in = rowsInput({16, 4096});
  std::vector<nlohmann::json> cases = {{{"N", 4096}, {"M", 16}}, {{"N", 4096}, {"M", 4096}}};
  EXPECT_EQ(featureParam(cases, in.cases, DispatchFeature{0, "x", 0}), "M");
  EXPECT_EQ(featureParam(cases, in.cases, DispatchFeature{0, "x", 1}), "N");
  EXPECT_EQ(featureParam(cases, in.cases, DispatchFeature{1, "steps", -1}), "");
}

TEST(DispatchPlan, NearbyShapesKeepTheAlignment) {
  nlohmann::json c = {{"M", 4096}, {"N", 24}, {"one", 1}, {"dtype", "float16"}, {"eps", 0.5}};
  auto shapes = nearbyShapes(c, "M");
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(shapes[0]["M"], 5120);   // 4096 + 1024: multiples of 16
  EXPECT_EQ(shapes[1]["M"], 3072);
  EXPECT_EQ(shapes[0]["N"], 24);     // only M moves
  auto all = nearbyShapes(c, "");
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0]["N"], 32);        // 24 = 8 x 3: steps of 8
  EXPECT_EQ(all[1]["N"], 16);
  EXPECT_EQ(all[0]["one"], 1);
  EXPECT_EQ(all[0]["dtype"], "float16");
  EXPECT_EQ(nearbyShapes({{"M", 1}}, "M").size(), 0u);
  auto small = nearbyShapes({{"M", 16}}, "M");
  ASSERT_EQ(small.size(), 2u);
  EXPECT_EQ(small[0]["M"], 32);      // steps of 16 ...
  EXPECT_EQ(small[1]["M"], 8);       // ... and 16 - 16 is no shape: half of it
}

}  // namespace
}  // namespace tf

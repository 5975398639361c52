// Timing statistics: quartiles as the worker computes them, the noise estimate, ties inside
// the noise, the spread of repeated runs; and the measurement a worker reply maps to.
#include <gtest/gtest.h>

#include "worker/measurement.h"
#include "measure/timing_compare.h"

namespace tf {
namespace {

TEST(TimingStats, QuartilesMatchTheWorker) {
  // Same values as tests/python/test_measure_pure.py::test_quantiles_interpolate.
  TimingStats s = summarizeTimes({4.0, 1.0, 3.0, 2.0}, "events+l2flush");
  EXPECT_DOUBLE_EQ(s.q1_ms, 1.75);
  EXPECT_DOUBLE_EQ(s.median_ms, 2.5);
  EXPECT_DOUBLE_EQ(s.q3_ms, 3.25);
  EXPECT_DOUBLE_EQ(s.mean_ms, 2.5);
  EXPECT_EQ(s.reps, 4);
  EXPECT_DOUBLE_EQ(s.noise(), 1.5 / 2.5);
  TimingStats one = summarizeTimes({0.5}, "events");
  EXPECT_DOUBLE_EQ(one.median_ms, 0.5);
  EXPECT_DOUBLE_EQ(one.noise(), 0.0);
  EXPECT_EQ(summarizeTimes({}, "x").reps, 0);
}

TEST(TimingStats, OutliersMoveTheMeanNotTheMedian) {
  std::vector<double> t(99, 1.0);
  t.push_back(100.0);
  TimingStats s = summarizeTimes(t, "events");
  EXPECT_DOUBLE_EQ(s.median_ms, 1.0);
  EXPECT_DOUBLE_EQ(s.noise(), 0.0);
  EXPECT_NEAR(s.mean_ms, 1.99, 1e-9);
}

TEST(TimingStats, JsonRoundTripKeepsTheNoise) {
  TimingStats s = summarizeTimes({1.0, 1.02, 0.98, 1.01, 0.99}, "cuda-graph+l2flush");
  nlohmann::json j = s.toJson();
  EXPECT_DOUBLE_EQ(j["noise"].get<double>(), s.noise());
  EXPECT_DOUBLE_EQ(j["iqr_ms"].get<double>(), s.q3_ms - s.q1_ms);
  TimingStats back = TimingStats::fromJson(j);
  EXPECT_DOUBLE_EQ(back.median_ms, s.median_ms);
  EXPECT_DOUBLE_EQ(back.noise(), s.noise());
  EXPECT_EQ(back.method, "cuda-graph+l2flush");
}

TimingStats stats(double median, double iqr) {
  TimingStats s;
  s.median_ms = median;
  s.q1_ms = median - iqr / 2;
  s.q3_ms = median + iqr / 2;
  return s;
}

TEST(TimingCompare, DifferencesInsideTheNoiseAreTies) {
  // 2% faster, but each measurement is 3% noisy: a tie.
  TimingComparison c = compareTimings(stats(0.98, 0.03 * 0.98), stats(1.0, 0.03));
  EXPECT_TRUE(c.tie);
  EXPECT_FALSE(c.faster);
  EXPECT_NEAR(c.noise, 0.03, 1e-12);
  // 10% faster with 3% noise: a win.
  c = compareTimings(stats(0.9, 0.027), stats(1.0, 0.03));
  EXPECT_TRUE(c.faster);
  EXPECT_FALSE(c.tie);
  EXPECT_NEAR(c.ratio, 0.9, 1e-12);
  // Noise-free figures still need to differ by the floor.
  EXPECT_TRUE(compareTimings(stats(0.997, 0), stats(1.0, 0)).tie);
  EXPECT_TRUE(compareTimings(stats(1.02, 0), stats(1.0, 0)).slower);
  // Nothing measured: a tie, ratio 1.
  EXPECT_TRUE(compareTimings(TimingStats{}, stats(1.0, 0)).tie);
}

TEST(TimingCompare, RelativeSpreadOfRepeatedRuns) {
  EXPECT_NEAR(relativeSpread({1.00, 1.01, 0.99, 1.00}), 0.02, 1e-12);
  EXPECT_DOUBLE_EQ(relativeSpread({2.0}), 0.0);
  EXPECT_DOUBLE_EQ(relativeSpread({}), 0.0);
}

TEST(Measurement, ReplyWithWorkTolerancesAndTiming) {
  WorkerReply r;
  r.seconds = 1.5;
  r.result = {{"status", "ok"},
              {"verify", {{"passed", true}, {"max_abs_err", 1e-6}, {"max_rel_err", 2e-6},
                          {"tolerances", {{{"output", 0}, {"dtype", "float32"}, {"rtol", 1e-4}, {"atol", 1e-5}}}}}},
              {"timing", {{"median_ms", 0.5}, {"q1_ms", 0.49}, {"q3_ms", 0.52}, {"reps", 800}, {"method", "events+l2flush"}}},
              {"work", {{"flops", 1e9}, {"bytes", 4e8}}},
              {"kernels", {{{"name", "k"}, {"grid", {8, 1, 1}}}}}};
  CaseMeasurement m = measurementFromReply(r);
  EXPECT_EQ(m.status, CandidateStatus::kOk);
  ASSERT_TRUE(m.timing);
  EXPECT_NEAR(m.timing->noise(), 0.06, 1e-12);
  EXPECT_EQ(m.work["bytes"], 4e8);
  EXPECT_EQ(m.verify.tolerances[0]["dtype"], "float32");
  EXPECT_EQ(m.toJson()["work"]["flops"], 1e9);
}

TEST(Measurement, FailedOpsTakeTheStatusFromTheirData) {
  WorkerReply r;
  r.status = WorkerReply::Status::kFailed;
  r.error_type = "FatalWorkerError";
  r.message = "launch (seed 0): the kernel did not finish within 5 s (a hang?)";
  r.result = {{"status", "timeout"}, {"stage", "launch (seed 0)"}};
  EXPECT_EQ(measurementFromReply(r).status, CandidateStatus::kTimeout);
  r.result = {{"status", "crash"}};
  EXPECT_EQ(measurementFromReply(r).status, CandidateStatus::kCrash);
  r.result = nullptr;
  CaseMeasurement m = measurementFromReply(r);
  EXPECT_EQ(m.status, CandidateStatus::kRuntimeError);
  EXPECT_EQ(m.message, "FatalWorkerError: launch (seed 0): the kernel did not finish within 5 s (a hang?)");
}

}  // namespace
}  // namespace tf

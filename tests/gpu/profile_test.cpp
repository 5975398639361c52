// `tritonforge profile` end to end on the GPU, without ncu: verification, timing with its
// noise, the roofline from the harness's bytes(), launch facts and a diagnosis.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace tf {
namespace {

TEST(GpuProfile, ScaleAddIsVerifiedTimedAndDiagnosed) {
  TF_REQUIRE_GPU();
  auto [rc, out] = test::runShell(test::tritonforgeBinary().string() + " profile " +
                                  (test::sourceDir() / "tests/data/faults/task.toml").string() +
                                  " --json --budget-ms 100 2>/dev/null");
  ASSERT_EQ(rc, 0) << out;
  nlohmann::json j = nlohmann::json::parse(out);
  ASSERT_TRUE(j["gpu"].is_object());
  ASSERT_TRUE(j.contains("ceilings")) << j.dump(2);
  EXPECT_GT(j["ceilings"]["dram_bytes_per_s"].get<double>(), 1e11);
  ASSERT_EQ(j["cases"].size(), 1u);
  const auto& c = j["cases"][0];
  EXPECT_EQ(c["status"], "ok");
  EXPECT_TRUE(c["verify"]["passed"].get<bool>());
  EXPECT_GT(c["timing"]["median_ms"].get<double>(), 0);
  EXPECT_GE(c["timing"]["noise"].get<double>(), 0);
  EXPECT_EQ(c["roofline"]["bound"], "memory");
  EXPECT_GT(c["roofline"]["fraction"].get<double>(), 0.01);
  ASSERT_EQ(c["kernels"].size(), 1u);
  const auto& k = c["kernels"][0];
  EXPECT_EQ(k["name"], "scale_add_kernel");
  EXPECT_EQ(k["grid"], nlohmann::json({1025, 1, 1}));
  EXPECT_FALSE(k.contains("asm"));
  EXPECT_EQ(k["static"]["sources"], nlohmann::json({"ttgir", "ptx"}));
  EXPECT_EQ(k["diagnosis"]["basis"], "roofline");
}

}  // namespace
}  // namespace tf

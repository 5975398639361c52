// The roofline (where a time sits under the ceilings), the ceilings' JSON and cache key, and
// the occupancy estimate that the diagnosis uses without Nsight Compute.
#include <gtest/gtest.h>

#include <cstdlib>

#include "diagnose/occupancy.h"
#include "measure/roofline.h"
#include "support/test_support.h"
#include "util/error.h"

namespace tf {
namespace {

Ceilings h200() {
  Ceilings c;
  c.dram_bytes_per_s = 4.25e12;
  c.flops_per_s = {{"fp16", 675e12}, {"bf16", 680e12}, {"tf32", 330e12}, {"fp32", 50e12}};
  return c;
}

TEST(Roofline, MemoryBoundSoftmax) {
  // softmax 32768 x 4096 fp32: 1 GiB moved; 0.2526 ms at 4.25 TB/s.
  double bytes = 2.0 * 32768 * 4096 * 4;
  auto p = rooflinePoint(5.0 * 32768 * 4096, bytes, 0.3e-3, h200(), "fp32");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->bound, "memory");
  EXPECT_NEAR(p->memory_seconds, bytes / 4.25e12, 1e-12);
  EXPECT_NEAR(p->fraction, bytes / 4.25e12 / 0.3e-3, 1e-9);
  nlohmann::json j = p->toJson();
  EXPECT_NEAR(j["percent"].get<double>(), 100 * p->fraction, 1e-9);
  EXPECT_NEAR(j["achieved_bytes_per_s"].get<double>(), bytes / 0.3e-3, 1);
  EXPECT_NEAR(j["arithmetic_intensity"].get<double>(), 5.0 / 8, 1e-12);
}

TEST(Roofline, ComputeBoundMatmulUsesTheTensorCeiling) {
  double flops = 2.0 * 4096 * 4096 * 4096;
  auto p = rooflinePoint(flops, 3.0 * 2 * 4096 * 4096, 0.25e-3, h200(), "fp16");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->bound, "compute");
  EXPECT_DOUBLE_EQ(p->peak_flops_per_s, 675e12);
  EXPECT_NEAR(p->fraction, flops / 675e12 / 0.25e-3, 1e-9);
  // The same work on FMA units: the fp32 ceiling.
  auto q = rooflinePoint(flops, std::nullopt, 5e-3, h200(), "fp32");
  EXPECT_DOUBLE_EQ(q->peak_flops_per_s, 50e12);
  EXPECT_DOUBLE_EQ(h200().flopsFor("fp8"), 2 * 675e12);
  EXPECT_DOUBLE_EQ(h200().flopsFor("int8"), 2 * 675e12);
  Ceilings measured = h200();
  measured.flops_per_s["fp8"] = 1300e12;
  measured.flops_per_s["int8"] = 900e12;
  EXPECT_DOUBLE_EQ(measured.flopsFor("fp8"), 1300e12);
  EXPECT_DOUBLE_EQ(measured.flopsFor("int8"), 900e12);
}

TEST(Roofline, NothingKnownIsNoPoint) {
  EXPECT_FALSE(rooflinePoint(std::nullopt, std::nullopt, 1e-3, h200(), "fp32"));
  EXPECT_FALSE(rooflinePoint(1e9, 1e9, 0, h200(), "fp32"));
  Ceilings empty;
  EXPECT_FALSE(rooflinePoint(1e9, 1e9, 1e-3, empty, "fp32"));
}

TEST(Ceilings, KeyNamesTheGpuAndDriver) {
  nlohmann::json gpu = {{"name", "NVIDIA H200"}, {"sms", 132}, {"memory_bytes", 150754820096.0},
                        {"driver", "580.159.04"}, {"cc", {9, 0}}};
  EXPECT_EQ(gpuKey(gpu), "NVIDIA-H200-132sm-151GB-drv580.159.04");
  EXPECT_EQ(gpuKey(nullptr), "unknown-gpu");
  EXPECT_EQ(ceilingsCachePath(gpu).filename(), "NVIDIA-H200-132sm-151GB-drv580.159.04.json");
  EXPECT_EQ(ceilingsCachePath(gpu).parent_path().filename(), "ceilings");
}

TEST(Ceilings, JsonRoundTripAndBadFiles) {
  Ceilings c = h200();
  c.gpu_key = "k";
  c.measured_at = "2026-11-29T00:00:00Z";
  Ceilings back = Ceilings::fromJson(c.toJson(), "c.json");
  EXPECT_DOUBLE_EQ(back.dram_bytes_per_s, 4.25e12);
  EXPECT_DOUBLE_EQ(back.flopsFor("bf16"), 680e12);
  EXPECT_EQ(back.measured_at, "2026-11-29T00:00:00Z");
  try {
    Ceilings::fromJson({{"dram_bytes_per_s", 1}}, "c.json");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), "c.json: not a ceilings file (needs dram_bytes_per_s and flops_per_s)");
  }
}

TEST(Occupancy, H200Limits) {
  GpuLimits g = GpuLimits::forComputeCapability(9, 0, 132);
  // 4 warps, 32 registers, no shared memory: the 64-warp limit gives 16 blocks.
  OccupancyEstimate a = estimateOccupancy(g, 4, 32, 0);
  EXPECT_EQ(a.blocks_per_sm, 16);
  EXPECT_DOUBLE_EQ(a.occupancy, 1.0);
  EXPECT_EQ(a.limiter, Limiter::kNone);
  // 168 registers (5376 per warp): 12 warps fit, so 3 blocks of 4 warps.
  OccupancyEstimate b = estimateOccupancy(g, 4, 168, 0);
  EXPECT_EQ(b.limit_registers, 3);
  EXPECT_EQ(b.blocks_per_sm, 3);
  EXPECT_EQ(b.limiter, Limiter::kRegisters);
  EXPECT_DOUBLE_EQ(b.occupancy, 12.0 / 64);
  // 128 KiB of shared memory (+1 KiB reserved): one block.
  OccupancyEstimate c = estimateOccupancy(g, 4, 64, 131072);
  EXPECT_EQ(c.limit_shared, 1);
  EXPECT_EQ(c.limiter, Limiter::kSharedMemory);
  EXPECT_DOUBLE_EQ(c.occupancy, 4.0 / 64);
  // One-warp blocks: the 32-block limit.
  OccupancyEstimate d = estimateOccupancy(g, 1, std::nullopt, 0);
  EXPECT_EQ(d.blocks_per_sm, 32);
  EXPECT_DOUBLE_EQ(d.occupancy, 0.5);
  EXPECT_EQ(d.limiter, Limiter::kBlockSize);
  EXPECT_DOUBLE_EQ(wavesOf(2112 + 211, a, g), (2112 + 211) / 2112.0);
  EXPECT_EQ(c.toJson()["block_limits"]["shared_memory"], 1);
}

TEST(Occupancy, FromHello) {
  GpuLimits g = GpuLimits::fromHello({{"cc", {8, 0}}, {"sms", 108}});
  EXPECT_EQ(g.sms, 108);
  EXPECT_EQ(g.name, "sm_80");
  EXPECT_EQ(g.shared_per_sm, 164 * 1024);
  EXPECT_EQ(GpuLimits::fromHello(nullptr).sms, 132);
}

}  // namespace
}  // namespace tf

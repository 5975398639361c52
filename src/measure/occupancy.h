// Theoretical occupancy from a kernel's resources, as the CUDA occupancy calculator computes
// it: how many blocks of `warps` warps, `registers` registers per thread and `shared_bytes`
// of shared memory fit on one SM at once, and which resource stops the next one. Used to
// diagnose without Nsight Compute (waves, tail effect, the occupancy limiter).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace tf {

// Per-SM limits of a GPU. Defaults: compute capability 9.0 (H100 / H200).
struct GpuLimits {
  int sms = 132;
  int max_warps_per_sm = 64;
  int max_blocks_per_sm = 32;
  int registers_per_sm = 65536;
  int max_registers_per_thread = 255;
  int register_alloc_unit = 256;          // registers, per warp
  int64_t shared_per_sm = 233472;         // bytes usable by blocks (228 KiB)
  int64_t shared_per_block_reserved = 1024;
  int shared_alloc_unit = 128;
  std::string name = "sm_90";

  // Limits for compute capability major.minor with `sms` SMs (known: 7.0 to 9.0, 10.0, 12.0).
  static GpuLimits forComputeCapability(int major, int minor, int sms);
  // From the worker's hello "gpu" object ({"cc": [9, 0], "sms": 132, ...}); defaults when absent.
  static GpuLimits fromHello(const nlohmann::json& gpu);
};

struct OccupancyEstimate {
  int blocks_per_sm = 0;
  int warps_per_sm = 0;
  double occupancy = 0;                   // warps_per_sm / max_warps_per_sm
  int limit_registers = 0, limit_shared = 0, limit_warps = 0, limit_blocks = 0;  // blocks/SM each allows
  std::string limiter;                    // "registers" | "shared memory" | "block size" | "none" (full)
  nlohmann::json toJson() const;
};

// `registers` may be unknown (nullopt: not counted as a limit).
OccupancyEstimate estimateOccupancy(const GpuLimits& gpu, int warps_per_block, std::optional<int> registers,
                                    int64_t shared_bytes);

// Waves of a grid: blocks / (blocks_per_sm * sms).
double wavesOf(int64_t grid_blocks, const OccupancyEstimate& occ, const GpuLimits& gpu);

}  // namespace tf

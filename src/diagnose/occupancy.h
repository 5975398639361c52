// Theoretical occupancy from a kernel's resources, as the CUDA occupancy calculator computes
// it: how many blocks of `warps` warps, `registers` registers per thread and `shared_bytes`
// of shared memory fit on one SM at once, and which resource stops the next one. Used to
// diagnose without Nsight Compute (waves, tail effect, the occupancy limiter).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "diagnose/vocabulary.h"
#include "worker/target.h"

namespace tf {

struct OccupancyEstimate {
  int blocks_per_sm = 0;
  int warps_per_sm = 0;
  double occupancy = 0;                   // warps_per_sm / max_warps_per_sm
  int limit_registers = 0, limit_shared = 0, limit_warps = 0, limit_blocks = 0;  // blocks/SM each allows
  Limiter limiter = Limiter::kUnknown;    // registers, shared memory, the block size, or none (full)
  nlohmann::json toJson() const;
};

// `registers` may be unknown (nullopt: not counted as a limit).
OccupancyEstimate estimateOccupancy(const GpuLimits& gpu, int warps_per_block, std::optional<int> registers,
                                    int64_t shared_bytes);

// Waves of a grid: blocks / (blocks_per_sm * sms).
double wavesOf(int64_t grid_blocks, const OccupancyEstimate& occ, const GpuLimits& gpu);

}  // namespace tf

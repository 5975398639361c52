#include "diagnose/occupancy.h"

#include <algorithm>

namespace tf {

nlohmann::json OccupancyEstimate::toJson() const {
  return {{"blocks_per_sm", blocks_per_sm},
          {"warps_per_sm", warps_per_sm},
          {"occupancy", occupancy},
          {"limiter", toString(limiter)},
          {"block_limits", {{"registers", limit_registers}, {"shared_memory", limit_shared},
                            {"warps", limit_warps}, {"blocks", limit_blocks}}}};
}

OccupancyEstimate estimateOccupancy(const GpuLimits& gpu, int warps, std::optional<int> registers,
                                    int64_t shared_bytes) {
  OccupancyEstimate e;
  warps = std::max(1, warps);
  e.limit_warps = gpu.max_warps_per_sm / warps;
  e.limit_blocks = gpu.max_blocks_per_sm;
  e.limit_registers = gpu.max_blocks_per_sm;
  if (registers && *registers > 0) {
    int per_warp = *registers * 32;
    per_warp = (per_warp + gpu.register_alloc_unit - 1) / gpu.register_alloc_unit * gpu.register_alloc_unit;
    int warps_by_regs = gpu.registers_per_sm / per_warp;
    e.limit_registers = warps_by_regs / warps;
  }
  e.limit_shared = gpu.max_blocks_per_sm;
  if (shared_bytes > 0) {
    int64_t per_block = (shared_bytes + gpu.shared_alloc_unit - 1) / gpu.shared_alloc_unit * gpu.shared_alloc_unit +
                        gpu.shared_per_block_reserved;
    e.limit_shared = static_cast<int>(gpu.shared_per_sm / per_block);
  }
  e.blocks_per_sm = std::max(0, std::min({e.limit_warps, e.limit_blocks, e.limit_registers, e.limit_shared}));
  e.warps_per_sm = e.blocks_per_sm * warps;
  e.occupancy = static_cast<double>(e.warps_per_sm) / gpu.max_warps_per_sm;
  // The limiter: the resource whose limit is smallest (registers before shared memory before
  // the block size when they tie: the first is the one a rewrite changes most easily).
  if (e.warps_per_sm >= gpu.max_warps_per_sm) e.limiter = Limiter::kNone;
  else if (e.limit_registers == e.blocks_per_sm && registers) e.limiter = Limiter::kRegisters;
  else if (e.limit_shared == e.blocks_per_sm && shared_bytes > 0) e.limiter = Limiter::kSharedMemory;
  else e.limiter = Limiter::kBlockSize;
  return e;
}

double wavesOf(int64_t grid_blocks, const OccupancyEstimate& occ, const GpuLimits& gpu) {
  int64_t per_wave = static_cast<int64_t>(std::max(1, occ.blocks_per_sm)) * gpu.sms;
  return static_cast<double>(grid_blocks) / static_cast<double>(per_wave);
}

}  // namespace tf

// What the worker compiles for, and the limits of that GPU, defined once.
//
// Ahead-of-time compiles (no GPU needed) target sm_90: the H200 and H100 this tool is tuned
// on. When a worker has a GPU, its hello reports the GPU's compute capability, SM count and,
// where torch exposes them, the shared memory a block may opt in to and the SM's registers;
// GpuLimits::fromHello prefers those figures over the table of compute capabilities.
//
// Entry points: kSm90Target, GpuLimits::fromHello, GpuLimits::forComputeCapability.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace tf {

// Triton's GPUTarget.
struct Target {
  std::string backend = "cuda";
  int arch = 90;
  int warp_size = 32;
  nlohmann::json toJson() const { return {{"backend", backend}, {"arch", arch}, {"warp_size", warp_size}}; }
  std::string label() const { return backend + ":" + std::to_string(arch); }   // "cuda:90"
};

inline const Target kSm90Target{};

// sm_90's shared memory: 228 KiB per SM for blocks, of which the runtime reserves 1 KiB per
// block, so one block may opt in to 227 KiB (CUDA programming guide, compute capability 9.0).
inline constexpr int64_t kSm90SharedPerSm = 228 * 1024;
inline constexpr int64_t kSharedReservedPerBlock = 1024;
inline constexpr int64_t kSm90SharedPerBlock = kSm90SharedPerSm - kSharedReservedPerBlock;

// Per-SM limits of a GPU. Defaults: compute capability 9.0 (H100 / H200).
struct GpuLimits {
  int sms = 132;
  int max_warps_per_sm = 64;
  int max_blocks_per_sm = 32;
  int registers_per_sm = 65536;
  int max_registers_per_thread = 255;
  int register_alloc_unit = 256;          // registers, per warp
  int64_t shared_per_sm = kSm90SharedPerSm;  // bytes usable by blocks
  int64_t shared_per_block_reserved = kSharedReservedPerBlock;
  int shared_alloc_unit = 128;
  std::string name = "sm_90";
  int cc = 90;                            // compute capability, major * 10 + minor

  // The most shared memory one block may use (opt-in): 227 KiB on sm_90.
  int64_t sharedPerBlock() const { return shared_per_sm - shared_per_block_reserved; }

  // Limits for compute capability major.minor with `sms` SMs (known: 7.0 to 9.0, 10.0, 12.0).
  static GpuLimits forComputeCapability(int major, int minor, int sms);
  // From the worker's hello "gpu" object ({"cc": [9, 0], "sms": 132, "shared_per_block_optin":
  // ..., ...}); the figures the worker measured win over the table; defaults when absent.
  static GpuLimits fromHello(const nlohmann::json& gpu);
};

}  // namespace tf

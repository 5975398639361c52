#include "worker/target.h"

namespace tf {

GpuLimits GpuLimits::forComputeCapability(int major, int minor, int sms) {
  GpuLimits g;
  g.sms = sms > 0 ? sms : g.sms;
  const int cc = major * 10 + minor;
  g.name = "sm_" + std::to_string(cc);
  g.cc = cc;
  // Shared memory per SM usable by blocks, max warps and blocks per SM (CUDA programming
  // guide, "Features and Technical Specifications").
  if (cc >= 120) {
    g.max_warps_per_sm = 48;
    g.max_blocks_per_sm = 32;
    g.shared_per_sm = 100 * 1024;
  } else if (cc >= 100) {
    g.max_warps_per_sm = 64;
    g.max_blocks_per_sm = 32;
    g.shared_per_sm = 228 * 1024;
  } else if (cc >= 90) {
    g.shared_per_sm = kSm90SharedPerSm;
  } else if (cc == 89 || cc == 86 || cc == 87) {
    g.max_warps_per_sm = 48;
    g.max_blocks_per_sm = cc == 89 ? 24 : 16;
    g.shared_per_sm = cc == 87 ? 164 * 1024 : 100 * 1024;
  } else if (cc == 80) {
    g.max_warps_per_sm = 64;
    g.max_blocks_per_sm = 32;
    g.shared_per_sm = 164 * 1024;
  } else if (cc >= 75) {
    g.max_warps_per_sm = 32;
    g.max_blocks_per_sm = 16;
    g.shared_per_sm = 64 * 1024;
  } else {
    g.max_warps_per_sm = 64;
    g.max_blocks_per_sm = 32;
    g.shared_per_sm = 96 * 1024;
  }
  return g;
}

GpuLimits GpuLimits::fromHello(const nlohmann::json& gpu) {
  if (!gpu.is_object()) return GpuLimits{};
  int major = 9, minor = 0;
  // Two digits at most each: a larger figure is no compute capability, and would overflow
  // major * 10 + minor.
  auto digit2 = [](const nlohmann::json& v) { return v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() < 100; };
  if (gpu.contains("cc") && gpu["cc"].is_array() && gpu["cc"].size() == 2 && digit2(gpu["cc"][0]) &&
      digit2(gpu["cc"][1])) {
    major = gpu["cc"][0].get<int>();
    minor = gpu["cc"][1].get<int>();
  }
  int sms = gpu.contains("sms") && gpu["sms"].is_number_integer() ? gpu["sms"].get<int>() : 0;
  GpuLimits g = forComputeCapability(major, minor, sms);
  auto positive = [&](const char* key) -> int64_t {
    auto it = gpu.find(key);
    return it != gpu.end() && it->is_number_integer() && it->get<int64_t>() > 0 ? it->get<int64_t>() : 0;
  };
  // What the device reports beats the table (a GPU the table does not know, a MIG slice).
  // Less than a block's reservation is no figure of a GPU, and would leave blocks a negative
  // share of shared memory.
  if (int64_t v = positive("shared_per_sm"); v > g.shared_per_block_reserved) g.shared_per_sm = v;
  if (int64_t v = positive("shared_per_block_optin"); v && v < g.shared_per_sm) {
    g.shared_per_block_reserved = g.shared_per_sm - v;
  }
  if (int64_t v = positive("registers_per_sm")) g.registers_per_sm = static_cast<int>(v);
  if (int64_t v = positive("max_threads_per_sm")) g.max_warps_per_sm = static_cast<int>(v / 32);
  return g;
}

}  // namespace tf

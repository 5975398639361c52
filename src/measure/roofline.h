// The roofline: the ceilings of the GPU in use, measured once per GPU and cached, and where
// a measurement sits under them.
//
// Ceilings come from the worker's `ceilings` op (a large device-to-device copy for DRAM
// bandwidth, counting bytes read + written; large library matmuls for the fp16 / bf16 / tf32
// tensor-core rates and the fp32 rate without tensor cores). They are cached as JSON under
// the per-user cache (util/paths.h): <cache>/ceilings/<gpu key>.json, the key made of the GPU's
// name, SM count, memory size and driver, so that another GPU or driver measures again.
//
// Entry points: loadOrMeasureCeilings, rooflinePoint.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace tf {

class WorkerClient;

struct Ceilings {
  std::string gpu_key;                      // "NVIDIA-H200-132sm-143GB-drv580.159.04"
  std::string gpu_name;
  double dram_bytes_per_s = 0;
  std::map<std::string, double> flops_per_s;   // "fp16", "bf16", "tf32", "fp32"
  std::string measured_at;                  // ISO-8601 UTC
  bool from_cache = false;

  // The compute ceiling for a class ("fp16", "bf16", "tf32", "fp8", "fp32"); "fp8" falls back
  // to twice fp16 (no fp8 library matmul is timed), unknown classes to fp32. 0 when unmeasured.
  double flopsFor(const std::string& compute_class) const;
  nlohmann::json toJson() const;
  // Throws UserError naming `label` when required fields are missing.
  static Ceilings fromJson(const nlohmann::json& j, const std::string& label);
};

// "NVIDIA-H200-132sm-143GB-drv580.159.04" from the worker's hello "gpu" object.
std::string gpuKey(const nlohmann::json& gpu);
std::filesystem::path ceilingsCachePath(const nlohmann::json& gpu);

// The cached ceilings of this GPU, or measures them with `worker` (its `ceilings` op, which
// needs the GPU for a few seconds) and caches them. `remeasure` ignores the cache. Returns
// nullopt with `why` set when the worker could not measure.
std::optional<Ceilings> loadOrMeasureCeilings(WorkerClient& worker, const nlohmann::json& gpu, bool remeasure,
                                              std::string* why,
                                              std::optional<std::chrono::milliseconds> timeout = std::nullopt);

// Where one timed case sits under the roofline.
struct RooflinePoint {
  double flops = 0, bytes = 0, seconds = 0;
  std::string compute_class;                // which compute ceiling applies
  double peak_flops_per_s = 0, peak_bytes_per_s = 0;
  double memory_seconds = 0;                // bytes / peak bandwidth
  double compute_seconds = 0;               // flops / peak rate
  double fraction = 0;                      // max(memory, compute seconds) / seconds: 1 = on the roof
  std::string bound;                        // "memory" | "compute": the roof that applies
  std::string work_source;                  // "harness" | "counters"
  nlohmann::json toJson() const;
};

// nullopt when neither flops nor bytes is known, or no ceiling applies.
std::optional<RooflinePoint> rooflinePoint(std::optional<double> flops, std::optional<double> bytes, double seconds,
                                           const Ceilings& ceilings, const std::string& compute_class);

}  // namespace tf

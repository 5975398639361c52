// The diagnosis rules: from Nsight Compute metrics, static facts of the compiled kernel, its
// launch (grid, warps, registers, shared memory) and its place under the roofline, to a
// Diagnosis. Every input is optional; each rule uses what is there and says in `notes` what it
// could not judge. Thresholds and formulas are documented in docs/profile.md.
//
// Entry point: diagnose.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "diagnose/diagnosis.h"
#include "diagnose/static_facts.h"
#include "measure/ncu_metrics.h"
#include "diagnose/occupancy.h"
#include "measure/roofline.h"

namespace tf {

// What the worker reports of a launch (run reply "kernels"); every field optional.
struct LaunchFacts {
  std::optional<int64_t> grid_blocks;     // product of the grid's dimensions
  std::optional<int> warps;
  std::optional<int> registers;
  std::optional<int64_t> shared_bytes;
  std::optional<int> spills;              // Triton's n_spills (local memory words per thread)
  // From one entry of the run reply's "kernels" array.
  static LaunchFacts fromKernelJson(const nlohmann::json& k);
};

struct DiagnosisInput {
  std::string kernel;
  const KernelMetrics* ncu = nullptr;
  std::optional<StaticFacts> static_facts;
  LaunchFacts launch;
  std::optional<RooflinePoint> roofline;
  // The fewest DRAM bytes the kernel must move (the harness's bytes(case)); lets poor-l2-reuse
  // compare the DRAM traffic with it.
  std::optional<double> expected_bytes;
  std::optional<GpuLimits> gpu;           // default: from the ncu row, else sm_90 with 132 SMs
};

// Findings below this severity are dropped (they would only be noise to the search).
inline constexpr double kMinSeverity = 0.1;

Diagnosis diagnose(const DiagnosisInput& in);

}  // namespace tf

// Diagnosis inside the optimization loop, in the reasoning engine's terms.
//
// The loop diagnoses the kernel as written and each new best without Nsight Compute (that
// is `profile --ncu`'s job: it costs seconds per kernel): from the static facts of the
// compiled texts (a dot that became FMA, load widths, spills), the launch (grid, warps,
// registers, shared memory: occupancy, small grids, tails) and the case's place under the
// roofline, through the rules of src/diagnose/.
//
// Entry points: diagnoseForEngine, toEngineDiagnosis, rooflineTimeMs, computeClassOfKernels,
// launcherGlueFinding.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "worker/measurement.h"
#include "diagnose/diagnosis.h"
#include "measure/roofline.h"
#include "search/engine.h"

namespace tf {

// The compute class of what a call runs ("fp16", "bf16", "tf32", "fp8", "fp32"), from the
// compiled texts of its kernels (`inspected.kernels[].asm`); "fp32" when none uses tensor cores.
std::string computeClassOfKernels(const CaseMeasurement& inspected);

// The least time a case can take on this GPU: the larger of its bytes over the DRAM
// ceiling and its flops over the compute ceiling of `compute_class`. nullopt when the
// harness gives neither flops(case) nor bytes(case).
std::optional<double> rooflineTimeMs(const nlohmann::json& work, const Ceilings& ceilings,
                                     const std::string& compute_class);

// A diagnosis (src/diagnose/) in the engine's terms.
EngineDiagnosis toEngineDiagnosis(const Diagnosis& d);

// `inspected`: a run of case 0 with the compiled texts; `timed`: its timed measurement
// (work and time, for the roofline). `gpu`: the worker's hello "gpu" object.
std::vector<EngineDiagnosis> diagnoseForEngine(const CaseMeasurement& inspected, const CaseMeasurement& timed,
                                               const std::optional<Ceilings>& ceilings, const nlohmann::json& gpu);

// The share of the launcher's GPU time outside its Triton kernels from which it is a finding
// (a host sync always is).
inline constexpr double kGlueShare = 0.2;
// A launcher-glue finding from a profiled timeline (CaseMeasurement::timeline): the share of
// its GPU time in torch's kernels, copies and fills, the largest of them, the host syncs;
// nullopt below kGlueShare without syncs, or without a timeline. Its kernel is left empty.
std::optional<EngineFinding> launcherGlueFinding(const nlohmann::json& timeline);

}  // namespace tf

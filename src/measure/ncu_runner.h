// Runs one case of a task under Nsight Compute and reads back its metrics.
//
//   ncu --clock-control none --profile-from-start off --target-processes all --set full
//       --kernel-name regex:^(k1|k2)$ --export R -f
//       PYTHON -m tritonforge_worker --oneshot REQUEST.json --out REPLY.json
//   ncu --import R.ncu-rep --csv --page raw  > R.csv  -> parseNcuRawCsv
//
// The one-shot worker runs the `profile_launch` op: warm-up calls of the launcher (compile,
// autotune) outside the profiled range, then one call between cudaProfilerStart/Stop, so that
// only that call's kernels are profiled; the name filter keeps out PyTorch's own kernels.
// `--clock-control none`: the GPU keeps the clocks it runs at under `run`'s timing.
//
// When ncu is missing or may not read the counters (ERR_NVGPUCTRPERM), the result says so in
// `unavailable`; other failures go to `error`. Nothing here throws for ncu's failures.
//
// Environment variables read here: TRITONFORGE_NCU (the ncu to run).
#pragma once

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "measure/ncu_metrics.h"
#include "worker/worker_client.h"
#include "worker/worker_process.h"

namespace tf {

struct NcuOptions {
  std::string ncu;                          // "": $TRITONFORGE_NCU, else ncu on PATH, else /usr/local/cuda/bin/ncu
  std::string set = "full";                 // --set; "" with `sections` instead
  std::vector<std::string> sections;        // --section NAME ...
  std::chrono::milliseconds timeout{300000};
  int warmup = 2;                           // launcher calls before the profiled one
};

struct NcuRunResult {
  bool ok = false;
  std::string unavailable;                  // ncu cannot be used here, and why
  std::string error;                        // ncu ran but failed, and why
  std::filesystem::path report, csv;
  double seconds = 0;                       // wall time of the profiled run
  std::vector<KernelMetrics> kernels;       // one per profiled launch
  nlohmann::json command = nlohmann::json::array();
  nlohmann::json worker_reply;              // the one-shot worker's reply
};

// The ncu executable to use, or "" when there is none.
std::string findNcu(const std::string& preferred);

// `run`: the case's request (case_request.h); `kernel_names`: the Triton kernels to profile
// (none: every kernel the profiled call launches). Files go to `work_dir`.
NcuRunResult profileCaseWithNcu(const NcuOptions& options, const WorkerOptions& worker, const RunRequest& run,
                                const std::vector<std::string>& kernel_names, const std::filesystem::path& work_dir);

// The regex ncu's --kernel-name gets for these names: "regex:^(a|b)$" (special characters escaped).
std::string kernelNameFilter(const std::vector<std::string>& names);

}  // namespace tf

// Replay: a search strategy run against recorded measurements instead of the GPU
// (`tritonforge tune --replay FILE.csv`), so that strategies can be tested and compared
// anywhere. docs/search.md gives the file format:
//
//   # tritonforge-sweep/1
//   # kernel=matmul_kernel elem_bytes=2 dots=1 case="M=4096,N=4096,K=4096" gpu="NVIDIA H200"
//   BLOCK_M,BLOCK_N,BLOCK_K,num_warps,num_stages,time_ms
//   64,64,32,4,3,0.6123
//   256,256,128,8,5,                        <- empty time: the configuration failed
//
// One column per parameter (integers), a time_ms column, optionally a status column;
// "# key=value" lines carry metadata (kernel, elem_bytes, dots, baseline, roofline_ms).
// The space searched is the recorded rows that pass the same static pruning as `optimize`.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kernel/tunables.h"
#include "search/space.h"

namespace tf {

struct Sweep {
  std::filesystem::path path;
  std::string kernel = "kernel";
  std::vector<std::string> params;                 // parameter column names, in file order
  std::vector<std::vector<int64_t>> rows;          // one value per parameter
  std::vector<std::optional<double>> times;        // time_ms; nullopt: failed
  std::vector<std::string> statuses;               // the status column, or "ok" / "failed"
  std::map<std::string, std::string> meta;
  // The fastest recorded time, nullopt when every row failed.
  std::optional<double> optimum() const;
};

// Throws UserError "<file>:<line>: <problem>" for a file that is not a sweep.
Sweep loadSweep(const std::filesystem::path& path);
// Writes a sweep in the format loadSweep reads.
std::string sweepToCsv(const Sweep& sweep);

struct ReplayOptions {
  std::string strategy = "auto";
  int max_evals = 0;                 // 0: until the strategy stops or the space is exhausted
  uint64_t seed = 0;
  int batch = 8;                     // configurations per round
  int stall_rounds = 0;              // 0: never stop for lack of gain
  std::optional<double> within_roofline_pct;   // with a roofline_ms in the file: stop within this %
  // A wall-clock budget as `optimize` has, on a simulated clock: each evaluation costs
  // `seconds_per_candidate` (compile and measurement).
  std::optional<double> budget_s;
  double seconds_per_candidate = 0.5;
};

struct ReplayEvaluation {
  size_t row = 0;
  int round = 0;
  std::optional<double> time_ms;
  std::string origin;
};

struct ReplayResult {
  std::string strategy, strategy_why;
  size_t rows = 0;                   // recorded configurations
  size_t reachable = 0;              // rows that pass static pruning
  int evaluations = 0;
  int rounds = 0;
  std::string stop_reason;
  std::optional<size_t> best_row;
  std::optional<double> best_time;
  std::optional<double> optimum;
  std::optional<int> evals_to_within_3pct;   // evaluations until the best was within 3% of the optimum
  std::vector<ReplayEvaluation> order;
  nlohmann::json trace;
  nlohmann::json toJson(const Sweep& sweep) const;
};

ReplayResult replaySweep(const Sweep& sweep, const ReplayOptions& options);

// The role a parameter name suggests (BLOCK_M: tile M, num_warps, GROUP_SIZE_M: group ...).
TunableRole roleFromName(const std::string& name);

}  // namespace tf

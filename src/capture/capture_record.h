// What `tritonforge capture` recorded: the per-process launch records that the recorder
// (python/tritonforge_worker/capture/) writes into DIR/launches/<pid>.json, merged into one
// list of kernels ranked by the GPU time their launches took, and the table printed from it.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace tf {

struct CapturedKernel {
  std::string name;
  std::string module;
  std::string file;                 // empty when the kernel's source is not on disk
  std::string file_sha256;          // of that file as the program ran it
  int line = 0;
  bool tunable = false;
  std::string why_not;              // why it cannot be tuned from its source
  std::vector<std::string> via;     // "jit", "autotuner", "heuristics"
  std::vector<std::string> arg_names;   // the kernel's parameters, in order
  std::vector<std::string> constexprs;  // those that are tl.constexpr
  int64_t launches = 0;
  int64_t bench_launches = 0;       // made by an autotuner benchmarking its configurations
  int64_t graph_capture_launches = 0;
  double time_ms = 0;               // the GPU time of its launches (wall time when interpreted)
  std::vector<nlohmann::json> signatures;  // one per distinct launch (shapes, scalars, config)
  int64_t other_signature_launches = 0;    // launches past the recorder's signature limit
  int processes = 0;
  bool outside_jit = false;         // seen by the launch hooks only (no arguments recorded)
};

struct CaptureSummary {
  std::vector<CapturedKernel> kernels;  // most GPU time first
  std::string timing;                   // "torch.profiler", "cuda-events", "wall", or "" when nothing ran
  double gpu_total_ms = 0;              // every GPU kernel's time (torch.profiler's), 0 when not read
  int processes = 0;
  int64_t saved_bytes = 0;
  std::vector<std::string> errors;      // the recorder's own troubles, per process
  nlohmann::json versions = nlohmann::json::object();
  double total_ms() const;
};

// Reads DIR/launches/*.json. Throws UserError naming the folder when it holds no record, and
// naming the file when one is not a record.
CaptureSummary readCapture(const std::filesystem::path& dir);

// The table: kernels ranked by time, launches, distinct launches, share, tunable or why not.
// `top` limits the rows (0: all).
std::string captureTable(const CaptureSummary& summary, size_t top);

nlohmann::json captureSummaryJson(const CaptureSummary& summary);

}  // namespace tf

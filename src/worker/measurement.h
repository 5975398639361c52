// What a measurement of one variant on one case says: status, verification, timing, and
// the compiled kernels the launcher ran. Built from the worker's `run` / `warm` replies.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "worker/protocol.h"

namespace tf {

// The typed result of a candidate (STYLE.md: an expected failure is a value).
enum class CandidateStatus {
  kOk,
  kCompileError,
  kOutOfResources,
  kWrongResult,
  kTimeout,
  kCrash,
  kRuntimeError,   // the launcher raised (not a compile error)
  kPruned,         // rejected statically, never compiled
  kNotRun,         // budget ran out before it was measured
};

const char* toString(CandidateStatus status);
CandidateStatus candidateStatusFromString(const std::string& s);

struct TimingStats {
  double median_ms = 0, q1_ms = 0, q3_ms = 0, min_ms = 0, max_ms = 0, mean_ms = 0;
  int reps = 0;
  std::string method;
  // Relative spread: interquartile range over the median.
  double noise() const { return median_ms > 0 ? (q3_ms - q1_ms) / median_ms : 0; }
  nlohmann::json toJson() const;
  static TimingStats fromJson(const nlohmann::json& j);
};

struct VerifyResult {
  bool passed = false;
  double max_abs_err = 0, max_rel_err = 0;
  std::string reason;
  nlohmann::json first_bad;      // {"output", "index", "got", "expected"}
  std::optional<int> failed_seed;
  std::string reference_note;
  nlohmann::json tolerances;     // [{"output", "dtype", "rtol", "atol"}] as applied
  nlohmann::json toJson() const;
};

struct CaseMeasurement {
  CandidateStatus status = CandidateStatus::kNotRun;
  std::string message;           // one line, for failures
  std::string detail;            // traceback / stderr summary
  std::optional<TimingStats> timing;
  VerifyResult verify;
  nlohmann::json kernels = nlohmann::json::array();   // per launched kernel: regs, smem, constexprs ...
  nlohmann::json outputs = nlohmann::json::array();   // shapes and dtypes
  nlohmann::json work = nlohmann::json::object();     // the harness's {"flops": x, "bytes": y}, when defined
  // What the launcher was called with, per positional argument: {"name", "shape", "dtype"} for a
  // tensor, {"name", "value"} for an int, {"name"} otherwise (the per-shape dispatch's features).
  nlohmann::json arguments = nlohmann::json::array();
  double wall_seconds = 0;
  // Of the request, the seconds spent making the case's inputs and references (0 when the
  // worker had them cached): what a fresh process pays again.
  double setup_seconds = 0;
  // One call of the launcher profiled whole (asked for by a diagnosis): {"gpu_ms", "triton_ms",
  // "other_ms", "copy_ms", "wall_ms", "triton_launches", "host_syncs", "outside": [{"name",
  // "kind", "ms", "count"}]}; null when not asked or not measured (`timeline_error` says why).
  nlohmann::json timeline;
  std::string timeline_error;
  // The worker found the task at odds with its harness (a TaskError: an in_place index
  // beyond the inputs): the user's input is wrong, not the kernel.
  std::optional<std::string> task_error;
  // The worker (a Ray actor, its node) was lost under the request: not the variant's doing.
  // The status is kNotRun; the search measures it again on another lane.
  bool worker_lost = false;
  nlohmann::json toJson() const;
  // The inverse of toJson, tolerant of what a database or a worker may hold: a field of the
  // wrong type is left at its default; an object that is no measurement at all becomes a
  // runtime-error with that message.
  static CaseMeasurement fromJson(const nlohmann::json& j);
};

// What compiling a variant (the worker's `warm` op: every kernel its launcher launches, for
// every case) came to.
struct CompileOutcome {
  CandidateStatus status = CandidateStatus::kOk;
  std::string message;
  std::string detail;
  nlohmann::json kernels = nlohmann::json::array();
  double seconds = 0;
  nlohmann::json toJson() const;
};

// Maps a worker reply of `run` (or `warm`) to a measurement. Timeouts and crashes of the
// worker become kTimeout / kCrash with the worker's message; an op that failed with a status
// in its error data (a lost CUDA context: "crash"; a kernel that never finished: "timeout")
// gets that status.
CaseMeasurement measurementFromReply(const WorkerReply& reply);

}  // namespace tf

// The baseline file: the recorded best of each task, committed with the code, against which
// `tritonforge check` re-times the kernels as they stand. Written by `optimize
// --save-baseline FILE` (docs/ci.md describes the schema, `tritonforge.baseline/1`).
//
// Entry points: loadBaselineFile (throws UserError naming the file on anything malformed),
// baselineEntryFromResult (one task's entry from an optimize result.json), saveBaselineEntry
// (adds or replaces one task's entry in a file, keeping the others).
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace tf {

inline constexpr const char* kBaselineSchema = "tritonforge.baseline/1";

// What a time depends on besides the code: a change of any of these invalidates a tuning.
struct ToolchainInfo {
  std::string gpu, driver, torch, triton, tritonforge;
  nlohmann::json toJson() const;
  static ToolchainInfo fromJson(const nlohmann::json& j);  // missing fields stay ""
  // "triton 3.5.0 -> 3.6.0" for each of gpu, driver, torch, triton that differs (the
  // tritonforge version is recorded but not compared: it does not change a kernel's time).
  std::vector<std::string> differences(const ToolchainInfo& now) const;
};

struct BaselineCase {
  nlohmann::json shape;     // the task's case object, as in the task file
  std::string label;
  double time_ms = 0;       // median
  double noise = 0;         // relative: IQR over the median of that measurement
};

struct BaselineEntry {
  std::string task;         // the task's name
  std::string task_path;    // informative
  std::string date;
  ToolchainInfo toolchain;
  nlohmann::json config = nlohmann::json::object();  // tunable id -> value or "as-written"
  std::string config_text;
  std::vector<BaselineCase> cases;
  // The case recorded for `shape` (compared as JSON objects), or null.
  const BaselineCase* find(const nlohmann::json& shape) const;
  nlohmann::json toJson() const;
};

struct BaselineFile {
  std::map<std::string, BaselineEntry> tasks;   // by task name
  nlohmann::json toJson() const;
};

// Throws UserError "FILE: ..." when the file is missing, not JSON, of another schema, or
// an entry lacks a field or has one of the wrong type.
BaselineFile loadBaselineFile(const std::filesystem::path& path);

// One task's entry from an optimize result.json (schema tritonforge.optimize/1) of a run
// on a GPU: the best's per-case times and noise from the confirmation, its configuration,
// the environment. Throws UserError naming `what` when the result has no measurement.
BaselineEntry baselineEntryFromResult(const nlohmann::json& result, const std::string& what);

// The recorded best of each of `task_names` in a results database (opened read-only; a
// missing or foreign file is a UserError naming it): the latest finished run of a task of
// that name, its best configuration (or the kernel as written when nothing beat it) and
// that variant's time and noise per case in the run's environment. A task with no such run
// has no entry.
BaselineFile baselineFromResultsDb(const std::filesystem::path& path, const std::vector<std::string>& task_names);

// Adds or replaces the entry of `entry.task` in `path` (created when missing; a file that
// exists but is no baseline file is an error, not overwritten).
void saveBaselineEntry(const std::filesystem::path& path, const BaselineEntry& entry);

}  // namespace tf

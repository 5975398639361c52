// What `optimize` writes: OUT/NAME/<source file> (the optimized drop-in replacement),
// changes.diff, result.json (docs/result-schema.md) and report.md.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "search/optimizer.h"

namespace tf {

inline constexpr const char* kResultSchema = "tritonforge.optimize/1";

nlohmann::json optimizeResultJson(const Task& task, const TunableSet& tunables, const OptimizeResult& result,
                                  const OptimizeOptions& options, const std::filesystem::path& out_dir);

// Throws UserError when OUT/NAME would overwrite one of the task's own files. Called
// before anything runs, and again before writing.
void checkOutputDir(const Task& task, const std::filesystem::path& out_root);

// Writes the files; returns the folder. Throws UserError when the folder would overwrite
// the task's own files.
std::filesystem::path writeOptimizeOutputs(const Task& task, const TunableSet& tunables,
                                           const OptimizeResult& result, const OptimizeOptions& options,
                                           const std::filesystem::path& out_root, nlohmann::json* result_json);

// The human summary printed at the end of a run.
std::string optimizeSummary(const Task& task, const TunableSet& tunables, const OptimizeResult& result,
                            const std::filesystem::path& out_dir);


}  // namespace tf

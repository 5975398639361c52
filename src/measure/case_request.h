// The arguments of the worker's `run` and `profile_launch` ops for one case of a task: the
// same shape the search's evaluator sends (docs/worker-protocol.md), built from the task.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "task/task.h"

namespace tf {

// `source`: the file to load as the variant (the task's own source to profile it as written);
// `module_name`: the name to import it under.
nlohmann::json caseRequestArgs(const Task& task, const std::filesystem::path& source, const std::string& module_name,
                               size_t case_index);
// The "check" object: tolerances (only those the task sets), precision, in-place outputs.
nlohmann::json checkArgsOf(const CheckSpec& check);
// Seeds 0 .. check.seeds - 1.
nlohmann::json seedsOf(const CheckSpec& check);

}  // namespace tf

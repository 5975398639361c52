// `optimize --dry-run`: what the loop would do first, without a GPU and without measuring
// anything. The kernels are compiled ahead of time for sm_90 (where the task's [signature]
// gives their types), diagnosed from the compiled texts and the compiler's facts, and the
// engine is asked once; its rewrites are guarded (the worker's `guard` op) and compiled.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernel/tunables.h"
#include "search/engine.h"
#include "task/task.h"
#include "task/task_sources.h"
#include "worker/worker_process.h"

namespace tf {

inline constexpr const char* kDryRunSchema = "tritonforge.dry-run/1";

// The dry run's JSON (schema tritonforge.dry-run/1): compile_checks, diagnosis, findings,
// proposals (rewrites with their "guard" and "compile"), error, engine_usage.
nlohmann::json dryRun(const Task& task, const TaskSources& sources, const TunableSet& tunables,
                      ReasoningEngine& engine, WorkerProcess& worker, const std::vector<std::string>& passes);

// The same as a few lines for people.
std::string dryRunSummary(const nlohmann::json& dry);

}  // namespace tf

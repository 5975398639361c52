// The whole static analysis of a Triton source, as `tritonforge analyze` reports it: per
// kernel its parameters, decorators, Kernel IR and derived facts; with a task, per case and
// configuration the evaluated estimates (bytes, FLOPs, intensity, widths, shared memory,
// constraint checks); and compiled facts from the worker's `compile` op.
//
// Entry point: analyzeSource. The JSON schema is tritonforge.analyze/2 (docs/analyze.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernel/kernel_cost.h"
#include "kernel/module_ir.h"
#include "task/task.h"

namespace tf {

class WorkerClient;

inline constexpr const char* kAnalyzeSchema = "tritonforge.analyze/2";

// A configuration given directly (tests, scripts): applies to `kernel`.
struct ExplicitConfig {
  std::string kernel;
  AnalysisConfig config;
};

struct AnalyzeOptions {
  std::string kernel;                   // only this kernel ("" every kernel)
  std::string launcher;                 // tunables / cases reached from this function ("" the task's, or every launcher)
  const Task* task = nullptr;           // cases, harness, signatures
  const ModuleIR* harness = nullptr;    // the task's harness, parsed
  std::vector<ExplicitConfig> configs;  // extra configurations
  WorkerClient* compile_worker = nullptr;   // null: no compiled facts
  int compile_limit = 4;                // distinct configurations compiled per kernel
  int max_configs = 64;                 // per kernel (cases x autotune configs)
};

nlohmann::json analyzeSource(const ParsedSource& src, const ModuleIR& ir, const AnalyzeOptions& options);

}  // namespace tf

// What a stored measurement depends on beyond the source: where and how it was measured.
// Two measurements may stand for each other only when every field agrees; the results
// database keys its rows by MeasureEnv::key().
//
// Entry point: measureEnvOf (from the worker's hello and the timing settings of `run`).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace tf {

struct MeasureEnv {
  std::string gpu;       // "NVIDIA H200"
  std::string driver;    // "580.159.04"
  std::string triton;    // "3.6.0"
  int worker_protocol = 0;
  std::string tool_version = TRITONFORGE_VERSION;  // tritonforge's own
  std::string torch;     // "2.9.1+cu128"
  std::string cuda;      // the CUDA runtime torch was built with, "12.8"
  std::string timing;    // canonicalTiming() of the `run` timing settings

  // Every field as one canonical text: equal texts, equal environments.
  std::string key() const;
};

// The `timing` arguments of the worker's `run` op (budget_ms, min_reps, max_reps, flush,
// method) as one canonical text: keys sorted, integral numbers written as integers, so that
// 250 and 250.0 give the same text.
std::string canonicalTiming(const nlohmann::json& timing);

// `hello`: the worker's hello reply (gpu.name, gpu.driver, triton, torch, cuda_runtime,
// protocol); a missing or null field is empty. `timing`: exactly the timing arguments the
// caller sends with `run` for the measurements it stores.
MeasureEnv measureEnvOf(const nlohmann::json& hello, const nlohmann::json& timing);

}  // namespace tf

// `tritonforge transform`: one pass on one kernel of a source, applied through the one
// wrapper every pass runs through (TransformPassApplier, variant/pass_applier.h), then checked:
// the result must parse (the worker's `parse`) and, when the parameter types are known,
// compile ahead of time for sm_90 (the worker's `compile`, no GPU needed).
//
// Entry point: runTransform. Bad input (no such kernel, a bad parameter, a switched-off
// pass) throws UserError; a refusal (a precondition fails) and a result that does not
// compile are values in TransformResult.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "transform/pass.h"

namespace tf {

class WorkerProcess;

struct TransformRequest {
  std::filesystem::path source;
  std::string kernel;                   // "" : the source's only kernel
  std::string pass;                     // "name:k=v,..."
  std::string signature;                // "a_ptr=*fp16,M=i32,BLOCK=128"
  std::filesystem::path task;           // a task file: [signature.KERNEL] and [check] tolerances
  std::optional<double> rtol, atol;     // override the task's
  std::vector<std::string> switched_off; // passes switched off (--no-pass)
  bool compile = true;                  // the sm_90 compile check (when types are known)
};

struct TransformResult {
  enum class Status { kApplied, kRefused, kBroken, kCompileFailed };
  Status status = Status::kRefused;
  std::string kernel;
  PassOutcome outcome;
  // {"status": "ok" | "skipped" | "compile-error" | "out-of-resources", "reason": ...,
  //  "shared_bytes": ..., "registers": ..., "target": "cuda:90"}
  nlohmann::json compile = nlohmann::json::object();
  std::string message;  // for kBroken / kCompileFailed
  double seconds = 0;   // the rewrite and its checks
};

// `text` is the content of req.source (already read).
TransformResult runTransform(WorkerProcess& worker, const TransformRequest& req, const std::string& text);

// "a_ptr=*fp16,M=i32,BLOCK=128" -> {a_ptr: "*fp16", M: "i32", BLOCK: 128}. Throws UserError.
std::map<std::string, nlohmann::json> parseSignature(const std::string& spec);

}  // namespace tf

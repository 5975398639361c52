// The transformation passes of transform/passes/ behind variant/'s PassApplier: the rewrite
// runs a pass on the parsed source, the check parses the result and, when the parameter
// types are known (the task's [signature], or --signature), compiles it ahead of time for
// sm_90. The optimization loop and `tritonforge transform` both apply passes through it.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "kernel/module_ir.h"
#include "transform/kernel_normalize.h"
#include "variant/pass_applier.h"
#include "worker/worker_process.h"

namespace tf {

// What the check needs beyond the source.
struct TransformSettings {
  std::filesystem::path source_path;       // where the source lives: its imports, messages
  // kernel -> parameter -> Triton type ("*fp16", "i32") or a constexpr's value.
  std::map<std::string, std::map<std::string, nlohmann::json>> signatures;
  std::optional<double> rtol, atol;        // the tolerances a lossy pass must stay within
  bool compile = true;                     // the sm_90 compile check, when types are known
  // Kernels the source imports from its package's other modules (owned by the task's
  // sources, which outlive the applier): passes that edit only the launch may apply to them.
  const std::vector<Kernel>* imported = nullptr;
};

class TransformPassApplier final : public PassApplier {
 public:
  // Uses `worker` (borrowed) to parse and compile.
  TransformPassApplier(WorkerProcess& worker, TransformSettings settings, std::set<std::string> switched_off);
  // Starts its own worker (no GPU needed) the first time it is used.
  TransformPassApplier(WorkerOptions worker_options, TransformSettings settings, std::set<std::string> switched_off);
  ~TransformPassApplier() override;
  std::vector<nlohmann::json> paramVariants(const std::string& pass, const nlohmann::json& params,
                                            size_t limit) const override;

 protected:
  std::vector<std::string> known() const override;
  PassApplication rewrite(const PassRequest& request) override;
  PassApplication check(const PassRequest& request, PassApplication applied) override;

 private:
  std::unique_ptr<WorkerProcess> own_worker_;
  WorkerProcess& worker_;
  NormalFormRunner normal_form_{worker_};  // a refused pass's second try, on the normal form
  TransformSettings settings_;
  // What the last rewrite added to the kernel's signature (the check compiles with it).
  std::map<std::string, std::string> added_types_;
  std::vector<Companion> companions_;
  std::map<std::string, nlohmann::json> signature_;
};

// "split-k" + {"split": 16, "mode": "atomic"} -> "split-k:mode=atomic,split=16".
std::string passSpecText(const std::string& pass, const nlohmann::json& params);

}  // namespace tf

// The transformation passes, as the optimization loop's PassApplier: each application is
// checked like `tritonforge transform` checks it (the result parses and, when the task gives
// parameter types, compiles ahead of time for sm_90), with the task's tolerances for the
// passes that trade precision.
#pragma once

#include <memory>
#include <set>
#include <string>

#include "search/engine.h"
#include "task/task.h"
#include "worker/worker_process.h"

namespace tf {

class TransformPassApplier final : public PassApplier {
 public:
  // `worker_options`: a worker for parsing and compiling (no GPU needed); started lazily.
  TransformPassApplier(const Task& task, WorkerOptions worker_options, std::set<std::string> disabled);
  std::vector<std::string> available() const override;
  PassApplication apply(const std::string& source, const std::string& kernel, const std::string& pass,
                    const nlohmann::json& params) override;

 private:
  const Task& task_;
  std::unique_ptr<WorkerProcess> worker_;
  std::set<std::string> disabled_;
};

// "split-k" + {"split": 16, "mode": "atomic"} -> "split-k:mode=atomic,split=16".
std::string passSpecText(const std::string& pass, const nlohmann::json& params);

}  // namespace tf

// Builds, compiles and measures variants of a task's source.
//
// One measurement worker owns the GPU and runs `run` (verify + time), one case at a time.
// A pool of compile workers runs `warm` (the launcher's own compile path, without launching)
// in parallel on the CPU cores, filling Triton's on-disk cache, so that the measurement
// worker only loads binaries. Variants are files in a private work folder; equal sources
// share one file and one result.
#pragma once

#include <chrono>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <string>

#include "measure/measurement.h"
#include "task/task.h"
#include "worker/worker_pool.h"
#include "worker/worker_process.h"

namespace tf {

struct Variant {
  std::string hash;                  // of the source text
  std::filesystem::path path;
  std::string module_name;
};

struct CompileOutcome {
  CandidateStatus status = CandidateStatus::kOk;
  std::string message;
  std::string detail;
  nlohmann::json kernels = nlohmann::json::array();
  double seconds = 0;
  nlohmann::json toJson() const;
};

struct TimingOptions {
  double budget_ms = 250;
  int min_reps = 10;
  int max_reps = 2000;
  bool flush_l2 = true;
  std::string method = "auto";       // auto | events | graph
};

struct EvaluatorOptions {
  WorkerOptions worker;
  std::chrono::milliseconds compile_timeout{180000};
  std::chrono::milliseconds run_timeout{120000};
};

class Evaluator {
 public:
  Evaluator(const Task& task, EvaluatorOptions options, std::filesystem::path work_dir);
  ~Evaluator();

  // Starts the measurement worker and returns its hello. Throws EnvironmentError when it
  // cannot start.
  const nlohmann::json& start();
  bool hasGpu() const;
  std::string noGpuReason() const;
  // Starts `n` compile workers (in parallel); returns how many answered.
  int startCompilePool(int n);
  int compileWorkers() const { return pool_ ? pool_->size() : 0; }

  Variant materialize(const std::string& source);
  // Compiles every kernel the launcher launches for every case, on a compile worker
  // (or on the measurement worker when there is no pool).
  std::shared_future<CompileOutcome> compileAsync(const Variant& v);
  CaseMeasurement measure(const Variant& v, size_t case_index, const TimingOptions& timing);
  // Runs case `case_index` once (one seed, no timing) and returns the launched kernels with
  // their compiled texts (TTGIR, PTX): the static facts of a diagnosis.
  CaseMeasurement inspect(const Variant& v, size_t case_index);
  WorkerProcess& mainWorker() { return *main_; }
  const std::filesystem::path& workDir() const { return work_dir_; }

 private:
  nlohmann::json baseArgs(const Variant& v) const;
  nlohmann::json checkArgs() const;
  CompileOutcome compileOn(WorkerProcess& w, const Variant& v);

  const Task& task_;
  EvaluatorOptions options_;
  std::filesystem::path work_dir_;
  std::unique_ptr<WorkerProcess> main_;
  std::unique_ptr<WorkerPool> pool_;
  std::map<std::string, Variant> variants_;
  std::map<std::string, std::shared_future<CompileOutcome>> compiles_;
  nlohmann::json hello_;
};

}  // namespace tf

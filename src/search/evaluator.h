// Builds, compiles and measures variants of a task's source.
//
// One measurement worker owns the GPU and runs `run` (verify + time), one case at a time.
// A pool of compile workers runs `warm` (the launcher's own compile path, without launching)
// in parallel on the CPU cores, filling Triton's on-disk cache, so that the measurement
// worker only loads binaries. Variants are files in a private work folder; equal sources
// share one file and one result.
//
// Deadlines bound every request: a compile never runs past the compile deadline (the end of
// the search: nothing compiled later would be measured), a measurement never past the run
// deadline (the end of the budget). A request that a deadline stops is kNotRun, not a failure
// of the variant ("the budget ran out"), so that nothing is stored or held against it.
#pragma once

#include <chrono>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "task/task.h"
#include "worker/measurement.h"
#include "worker/worker_client.h"
#include "worker/worker_pool.h"
#include "worker/worker_process.h"

namespace tf {

struct Variant {
  std::string hash;                  // of the source text
  std::filesystem::path path;
  std::string module_name;
};

struct EvaluatorOptions {
  WorkerOptions worker;
  OpTimeouts timeouts;               // compile (warm) and run limits per request
};

class Evaluator {
 public:
  using Clock = std::chrono::steady_clock;
  Evaluator(const Task& task, EvaluatorOptions options, std::filesystem::path work_dir);
  ~Evaluator();

  // Starts the measurement worker and returns its hello. Throws EnvironmentError when it
  // cannot start.
  const nlohmann::json& start();
  bool hasGpu() const;
  std::string noGpuReason() const;
  // Starts `n` compile workers (in parallel) and waits for them, at most until the compile
  // deadline; returns how many answered (those that did not are stopped).
  // With `preload`, each started worker then imports what the variant and the harness import
  // (op preload, no GPU work), in parallel; a failed preload is ignored (the first compile
  // reports the same failure as its own).
  int startCompilePool(int n, const std::optional<Variant>& preload = std::nullopt);
  int compileWorkers() const { return pool_ ? pool_->size() : 0; }

  // No compile runs past `compile`, no measurement past `run` (nullopt: only the ops' own
  // timeouts).
  void setDeadlines(std::optional<Clock::time_point> compile, std::optional<Clock::time_point> run);
  // An adaptive limit on one compile (the loop's: 3x the median compile so far, at least
  // 10 s); a compile it stops is a timeout that says so. nullopt: the op's own timeout.
  void setCompileLimit(std::optional<std::chrono::milliseconds> limit);

  Variant materialize(const std::string& source);
  // Compiles every kernel the launcher launches for every case, on a compile worker
  // (or on the measurement worker when there is no pool).
  std::shared_future<CompileOutcome> compileAsync(const Variant& v);
  CaseMeasurement measure(const Variant& v, size_t case_index, const TimingOptions& timing);
  // Runs case `case_index` once (one seed, no timing) and returns the launched kernels with
  // their compiled texts (TTGIR, PTX): the static facts of a diagnosis.
  CaseMeasurement inspect(const Variant& v, size_t case_index);
  WorkerProcess& mainWorker() { return *main_; }
  WorkerClient& client() { return client_; }
  const std::filesystem::path& workDir() const { return work_dir_; }

  // The request for case `case_index` of `v` (seeds and checks from the task).
  RunRequest runRequest(const Variant& v, size_t case_index) const;

 private:
  LaunchSpec launchOf(const Variant& v) const;
  CompileOutcome compileOn(WorkerProcess& w, const Variant& v);
  // What is left before `deadline`, capped at `limit`; nullopt when nothing is left.
  std::optional<std::chrono::milliseconds> timeLeft(const std::optional<Clock::time_point>& deadline,
                                                    std::chrono::milliseconds limit) const;

  const Task& task_;
  EvaluatorOptions options_;
  std::filesystem::path work_dir_;
  std::unique_ptr<WorkerProcess> main_;
  WorkerClient client_;
  std::unique_ptr<WorkerPool> pool_;
  std::map<std::string, Variant> variants_;
  std::map<std::string, std::shared_future<CompileOutcome>> compiles_;
  nlohmann::json hello_;
  mutable std::mutex deadline_mu_;   // compile jobs read the deadline on the pool's threads
  std::optional<Clock::time_point> compile_deadline_, run_deadline_;
  std::optional<std::chrono::milliseconds> compile_limit_;
};

}  // namespace tf

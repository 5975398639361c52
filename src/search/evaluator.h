// Builds, compiles and measures variants of a task's source.
//
// One measurement worker per GPU ("lane", pinned with CUDA_VISIBLE_DEVICES) runs `run` (verify +
// time), one case at a time; lanes measure concurrently, each on its caller's thread (one
// thread per lane at a time). Lane 0 is the one a single-GPU run has.
// A pool of compile workers runs `warm` (the launcher's own compile path, without launching)
// in parallel on the CPU cores, filling Triton's on-disk cache, so that the measurement
// worker only loads binaries. Variants are files in a private work folder; equal sources
// share one file and one result.
//
// Deadlines bound every request: a compile never runs past the compile deadline (the end of
// the search: nothing compiled later would be measured), a measurement never past the run
// deadline (the end of the budget); the loop sets both from the run's Budget (budget.h). A request that a deadline stops is kNotRun, not a failure
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
#include <vector>

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
  // One measurement worker per entry, its CUDA_VISIBLE_DEVICES value ("0", "2", a UUID).
  // Empty: one worker, the environment as inherited (a single-GPU run, as before --gpus).
  std::vector<std::string> gpus;
  // false: the lanes are not pinned by this process (Ray actors get their GPU from Ray);
  // each lane's worker still gets TRITONFORGE_LANE=<its entry of gpus>.
  bool pin_lanes = true;
  // For the measurement lanes only (not the compile pool): another module to run (the Ray
  // bridge) and extra environment. Empty: as `worker`.
  std::vector<std::string> lane_module_args;
  std::map<std::string, std::string> lane_env;
  // A compile pool shared with other runs of the same command (several tasks or GPU
  // models); null: the evaluator starts its own.
  std::shared_ptr<WorkerPool> shared_pool;
};

class Evaluator {
 public:
  using Clock = std::chrono::steady_clock;
  Evaluator(const Task& task, EvaluatorOptions options, std::filesystem::path work_dir);
  ~Evaluator();

  // Starts the measurement workers (in parallel) and returns lane 0's hello. Throws
  // EnvironmentError when lane 0 cannot start; another lane that cannot is dropped (see
  // droppedLanes()).
  const nlohmann::json& start();
  // Seconds lane 0's worker took to start (a fresh process's cost); 0 before start().
  double workerStartSeconds() const { return worker_start_s_; }
  // Replaces `lane`'s measurement worker with a fresh process, started now (nothing of the
  // search's process carries over: autotune choices, caches, allocator state). False when the
  // new one does not start (the lane then restarts it on its next request, as after a crash).
  bool freshWorker(int lane);
  int lanes() const { return static_cast<int>(lanes_.size()); }
  bool laneAlive(int lane) const;
  // A lane whose worker was lost (or whose baseline failed): nothing more is sent to it.
  void dropLane(int lane, const std::string& why);
  int aliveLanes() const;
  int firstAliveLane() const;
  // "GPU 1 (CUDA_VISIBLE_DEVICES=1)" or "the GPU" for the single default lane.
  std::string laneLabel(int lane) const;
  const std::string& laneDevice(int lane) const { return lanes_[static_cast<size_t>(lane)]->device; }
  const nlohmann::json& laneHello(int lane) const { return lanes_[static_cast<size_t>(lane)]->hello; }
  // Why lanes were dropped, in order ("GPU 1: ...").
  const std::vector<std::string>& laneNotes() const { return lane_notes_; }
  bool hasGpu() const;
  std::string noGpuReason() const;
  // Starts `n` compile workers (in parallel) and waits for them, at most until the compile
  // deadline; returns how many answered (those that did not are stopped).
  // With `preload`, each started worker then imports what the variant and the harness import
  // (op preload, no GPU work), in parallel; a failed preload is ignored (the first compile
  // reports the same failure as its own).
  int startCompilePool(int n, const std::optional<Variant>& preload = std::nullopt);
  int compileWorkers() const { return pool_ ? pool_->size() : 0; }
  // After the search: no compile is wanted any more. An own pool is stopped (a compile in
  // flight, and the inputs it copies on the GPU, would run beside the confirmation's
  // timings); a shared one gets no new compile from this run (queued ones return at once).
  void stopCompiles();
  // Compiles cases 1.. of `v` on compile workers, one case to a worker, while the measurement
  // worker compiles and measures case 0: a kernel whose cases compile to different binaries
  // (a block size the launcher derives from the shape) then pays about one compile before
  // the search, not one per case. Nothing is reported; the measurement finds Triton's cache.
  // With `autotune_shares` > 1 (a long @triton.autotune list), every case, case 0 too, is
  // compiled in that many shares of the list, one worker each: the list costs about one
  // share's compile time instead of the whole list's, and the measurement of case 0 waits
  // for its shares (awaitFirstCaseAhead) rather than compiling the list itself.
  void warmCasesAhead(const Variant& v, int autotune_shares = 1);
  // Waits, at most until `until`, for the compiles of case 0 that warmCasesAhead queued
  // (none when it was not asked for shares); false when one was still running.
  bool awaitFirstCaseAhead(Clock::time_point until);
  bool sharedPool() const { return options_.shared_pool != nullptr; }

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
  // On lane `lane`; thread-safe across lanes (one thread per lane at a time).
  CaseMeasurement measure(const Variant& v, size_t case_index, const TimingOptions& timing, int lane = 0);
  // Runs case `case_index` once (one seed, no timing) and returns the launched kernels with
  // their compiled texts (TTGIR, PTX): the static facts of a diagnosis; with `timeline`, also
  // one call of the launcher profiled whole (CaseMeasurement::timeline).
  CaseMeasurement inspect(const Variant& v, size_t case_index, bool timeline = false);
  // Runs the launcher of `v` once per seed on a shape that is not one of the task's cases
  // (`case_values`, as the harness takes them) and verifies its outputs, untimed: the extra
  // shapes a per-shape dispatch is verified on.
  CaseMeasurement verifyShape(const Variant& v, const nlohmann::json& case_values, int lane = 0);
  WorkerProcess& mainWorker() { return *lanes_[0]->worker; }
  WorkerClient& client() { return *lanes_[0]->client; }
  const std::filesystem::path& workDir() const { return work_dir_; }

  // The request for case `case_index` of `v` (seeds and checks from the task).
  RunRequest runRequest(const Variant& v, size_t case_index) const;

 private:
  LaunchSpec launchOf(const Variant& v) const;
  // Every case of the task, or only `cases` when given.
  CompileOutcome compileOn(WorkerProcess& w, const Variant& v, std::vector<nlohmann::json> cases = {},
                           std::optional<std::pair<int, int>> autotune_part = std::nullopt);
  // What is left before `deadline`, capped at `limit`; nullopt when nothing is left.
  std::optional<std::chrono::milliseconds> timeLeft(const std::optional<Clock::time_point>& deadline,
                                                    std::chrono::milliseconds limit) const;

  const Task& task_;
  EvaluatorOptions options_;
  std::filesystem::path work_dir_;
  struct Lane {
    std::string device;              // CUDA_VISIBLE_DEVICES value; "" for the default lane
    std::unique_ptr<WorkerProcess> worker;
    std::unique_ptr<WorkerClient> client;
    nlohmann::json hello;
    bool alive = true;
  };
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::vector<std::string> lane_notes_;
  mutable std::mutex lanes_mu_;      // alive flags (read by measuring threads)
  std::shared_ptr<WorkerPool> pool_;
  std::map<std::string, Variant> variants_;
  std::map<std::string, std::shared_future<CompileOutcome>> compiles_;
  std::vector<std::shared_future<CompileOutcome>> ahead_;  // warmCasesAhead's jobs
  std::vector<std::shared_future<CompileOutcome>> first_case_ahead_;  // those of case 0 (shares)
  nlohmann::json hello_;
  double worker_start_s_ = 0;
  mutable std::mutex deadline_mu_;   // compile jobs read the deadline on the pool's threads
  std::optional<Clock::time_point> compile_deadline_, run_deadline_;
  std::optional<std::chrono::milliseconds> compile_limit_;
};

}  // namespace tf

// A fixed set of workers, each driven by its own thread. Jobs are functions that get a
// worker; submit() returns a future for the job's value. Used for parallel compiles on
// the CPU cores while one measurement worker owns the GPU.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "worker/worker_process.h"

namespace tf {

class WorkerPool {
 public:
  // `size` workers named "<options.name> <i>". Nothing starts until start() or a job.
  WorkerPool(const WorkerOptions& options, int size);
  // Drops queued jobs and kills the workers (a compile in flight is not waited for).
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Starts every worker in parallel; returns the replies (ok or the start failure).
  std::vector<WorkerReply> startAll();

  template <class F>
  auto submit(F&& job) -> std::future<decltype(job(std::declval<WorkerProcess&>()))> {
    using R = decltype(job(std::declval<WorkerProcess&>()));
    auto task = std::make_shared<std::packaged_task<R(WorkerProcess&)>>(std::forward<F>(job));
    auto future = task->get_future();
    enqueue([task](WorkerProcess& w) { (*task)(w); });
    return future;
  }

  int size() const { return static_cast<int>(workers_.size()); }
  // Jobs queued or running.
  int pending() const;
  WorkerProcess& worker(int i) { return *workers_[static_cast<size_t>(i)]; }

 private:
  void enqueue(std::function<void(WorkerProcess&)> job);
  void loop(int index);

  std::vector<std::unique_ptr<WorkerProcess>> workers_;
  std::vector<std::thread> threads_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void(WorkerProcess&)>> jobs_;
  int running_ = 0;
  bool stopping_ = false;
};

}  // namespace tf

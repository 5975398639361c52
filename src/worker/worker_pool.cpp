#include "worker/worker_pool.h"

#include <fmt/format.h>

namespace tf {

WorkerPool::WorkerPool(const WorkerOptions& options, int size) {
  for (int i = 0; i < size; ++i) {
    WorkerOptions o = options;
    o.name = size > 1 ? fmt::format("{} {}", options.name, i + 1) : options.name;
    workers_.push_back(std::make_unique<WorkerProcess>(std::move(o)));
  }
  for (int i = 0; i < size; ++i) threads_.emplace_back([this, i] { loop(i); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    jobs_.clear();  // their futures report broken promises; nobody waits on them any more
  }
  cv_.notify_all();
  for (auto& w : workers_) w->interrupt();
  for (auto& t : threads_) t.join();
  for (auto& w : workers_) w->shutdown();
}

std::vector<WorkerReply> WorkerPool::startAll() {
  // One start job per worker thread: each thread takes exactly one, since a start job
  // blocks its thread until the worker answers hello.
  std::vector<std::promise<WorkerReply>> promises(workers_.size());
  std::vector<std::thread> starters;
  for (size_t i = 0; i < workers_.size(); ++i) {
    starters.emplace_back([this, i, &promises] { promises[i].set_value(workers_[i]->ensureStarted()); });
  }
  std::vector<WorkerReply> out;
  for (auto& t : starters) t.join();
  for (auto& p : promises) out.push_back(p.get_future().get());
  return out;
}

int WorkerPool::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(jobs_.size()) + running_;
}

void WorkerPool::enqueue(std::function<void(WorkerProcess&)> job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void WorkerPool::loop(int index) {
  while (true) {
    std::function<void(WorkerProcess&)> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (stopping_ && jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
      ++running_;
    }
    job(*workers_[static_cast<size_t>(index)]);
    {
      std::lock_guard<std::mutex> lock(mu_);
      --running_;
    }
  }
}

}  // namespace tf

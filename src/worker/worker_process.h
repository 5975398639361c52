// One Python worker process, owned by the C++ core.
//
// Entry points: WorkerProcess::call (send one request, wait for its reply with a
// timeout). The process is started lazily and replaced after a timeout, a crash or a
// protocol error, so that a candidate that hangs the GPU or corrupts the CUDA context
// costs one request, never the run. Not thread-safe: one thread uses a worker at a time
// (WorkerPool hands them out).
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <atomic>
#include <memory>
#include <string>
#include <string_view>

#include "util/subprocess.h"
#include "worker/protocol.h"

namespace tf {

struct WorkerOptions {
  std::string python = "python3";
  std::filesystem::path package_dir;        // the folder that holds tritonforge_worker/
  std::vector<std::string> module_args;     // default: {"-m", "tritonforge_worker"}
  std::map<std::string, std::string> env;   // extra environment for the worker
  std::string name = "worker";              // for messages
  std::chrono::milliseconds start_timeout{120000};
  nlohmann::json hello_args = nlohmann::json::object();  // {"probe_torch": false} for parse-only use
};

// Picks the interpreter: `flag` if set, else $TRITONFORGE_PYTHON, else "python3".
std::string choosePython(const std::string& flag);

// The options of a compile worker made from a measuring worker's: named so, and run at a
// lower CPU priority (nice 10), so that compiles on every core never delay the process that
// launches timed kernels.
WorkerOptions compileWorkerOptions(WorkerOptions measuring);

class WorkerProcess {
 public:
  explicit WorkerProcess(WorkerOptions options);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Sends one request and waits up to `timeout` for its reply. Starts the worker first
  // if needed (the start has its own timeout). Never throws for worker failures.
  WorkerReply call(std::string_view op, const nlohmann::json& args, std::chrono::milliseconds timeout);

  // Starts the worker if it is not running; returns the failure if it could not.
  WorkerReply ensureStarted();

  // Asks the worker to exit, then kills it if it does not within a second.
  void shutdown();

  bool running() const { return proc_ != nullptr; }
  // Kills the current process from any thread; the request in flight (if any) returns as a
  // crash. For shutting down a pool without waiting for long compiles.
  void interrupt();
  int starts() const { return starts_; }
  // The hello reply of the current (or last) process.
  const nlohmann::json& helloInfo() const { return hello_; }
  // The last bytes the worker wrote on stderr.
  std::string stderrTail(size_t max_bytes = 4096) const;
  const WorkerOptions& options() const { return options_; }

 private:
  WorkerReply roundTrip(std::string_view op, const nlohmann::json& args, std::chrono::milliseconds timeout);
  void drainStderr(int timeout_ms);
  void killProcess();
  WorkerReply failure(WorkerReply::Status status, std::string message, double seconds);

  WorkerOptions options_;
  std::unique_ptr<Subprocess> proc_;
  std::atomic<pid_t> pid_{-1};   // proc_'s process group, readable from other threads
  std::string out_buf_;
  std::string err_ring_;       // bounded tail of stderr
  size_t err_mark_ = 0;        // stderr bytes seen before the current request
  uint64_t next_id_ = 1;
  int starts_ = 0;
  nlohmann::json hello_;
};

}  // namespace tf

// Child processes with pipes, in their own process group so that a hung child and
// everything it started (ptxas, ncu's target) can be killed together. No child outlives
// this process, whatever ends it: each runs under a watchdog (a fork of this process, in the
// child's group) that kills the group when this process's end of a pipe closes, which the
// kernel does on any death, SIGKILL included.
//
// Entry points: Subprocess::spawn (long-lived children such as the worker) and
// runCommand (run to completion with a timeout, output captured).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tf {

struct SpawnOptions {
  std::vector<std::string> argv;                // argv[0] is looked up on PATH
  std::map<std::string, std::string> env_set;   // added to (or replacing in) the environment
  std::vector<std::string> env_unset;
  std::filesystem::path cwd;                    // empty: inherit
};

class Subprocess {
 public:
  // Throws EnvironmentError when the program cannot be started (not found, not executable).
  static Subprocess spawn(const SpawnOptions& options);

  Subprocess(Subprocess&& other) noexcept;
  Subprocess& operator=(Subprocess&& other) noexcept;
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;
  ~Subprocess();  // kills the group and reaps the child if still running

  // The program's own pid (signal it to signal the program; the watchdog mirrors its end).
  pid_t pid() const { return pid_; }
  // The process group of the program and everything it started (kill(-group(), sig)).
  pid_t group() const { return watcher_; }
  int stdinFd() const { return in_; }
  int stdoutFd() const { return out_; }
  int stderrFd() const { return err_; }

  // Writes everything; false when the child closed its end (EPIPE) or another error.
  bool writeAll(std::string_view data);
  void closeStdin();
  // Sends `sig` to the child's whole process group.
  void killGroup(int sig);
  // Reaps the child if it has exited; returns its raw wait status.
  std::optional<int> tryWait();
  // Waits at most `timeout`, then kills the group and waits for good.
  int waitOrKill(std::chrono::milliseconds timeout);
  bool reaped() const { return reaped_; }

 private:
  Subprocess() = default;
  void closeAll();
  pid_t pid_ = -1;      // the program
  pid_t watcher_ = -1;  // its watchdog: this process's child, leader of the program's group
  int in_ = -1, out_ = -1, err_ = -1;
  int life_ = -1;  // the watchdog's pipe: closed (this process gone, or the object destroyed), it kills the group
  bool reaped_ = false;
  int status_ = 0;
};

// "exit code 3", "killed by signal 9 (SIGKILL)".
std::string describeWaitStatus(int status);

struct CommandResult {
  int status = 0;          // raw wait status
  bool timed_out = false;
  std::string out;
  std::string err;
  bool ok() const;         // exited with code 0 and did not time out
};

// Runs a command to completion, feeding `input` on stdin, with a wall-clock limit
// after which its whole process group is killed. Throws EnvironmentError when the
// program cannot be started.
CommandResult runCommand(const SpawnOptions& options, std::chrono::milliseconds timeout,
                         std::string_view input = {});

// Runs a command to completion in the foreground of the user's session: its output is relayed
// to this process's stdout and stderr as it comes, its stdin is closed, and SIGINT, SIGTERM or
// SIGHUP sent to this process are passed on to its whole process group. Returns the raw wait
// status. Throws EnvironmentError when the program cannot be started. With `stdout_copy`, the
// program's standard output is also kept there (its first 64 MiB).
int runRelayed(const SpawnOptions& options, std::string* stdout_copy = nullptr);

// True when `program` can be found on PATH (or is an executable path).
bool programOnPath(const std::string& program);

}  // namespace tf

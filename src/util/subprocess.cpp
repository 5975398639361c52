#include "util/subprocess.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <thread>
#include <utility>

#include "util/error.h"

extern char** environ;

namespace tf {
namespace {

// Writing to a child that has died must return EPIPE, not kill this process.
const bool kSigpipeIgnored = [] {
  signal(SIGPIPE, SIG_IGN);
  return true;
}();

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    // Close-on-exec from the start: another thread's child must not inherit it in between.
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw EnvironmentError(fmt::format("cannot create a pipe: {}", strerror(errno)));
    r = fds[0];
    w = fds[1];
  }
};

std::vector<std::string> buildEnvironment(const SpawnOptions& options) {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    auto eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    env[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
  }
  for (const auto& name : options.env_unset) env.erase(name);
  for (const auto& [k, v] : options.env_set) env[k] = v;
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

const char* signalName(int sig) {
  switch (sig) {
    case SIGKILL: return "SIGKILL";
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGTERM: return "SIGTERM";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGINT: return "SIGINT";
    case SIGPIPE: return "SIGPIPE";
    default: return "signal";
  }
}

}  // namespace

namespace {

// The first executable `dir/program` over the folders of `path` (a PATH value); empty when none.
std::string findOnPath(const std::string& program, std::string_view path) {
  while (true) {
    auto colon = path.find(':');
    std::string dir(path.substr(0, colon));
    if (dir.empty()) dir = ".";
    std::string full = dir + "/" + program;
    if (access(full.c_str(), X_OK) == 0) return full;
    if (colon == std::string_view::npos) return "";
    path.remove_prefix(colon + 1);
  }
}

// The program's path, looked up as execvp would, before the fork (nothing may allocate after
// it); empty when it is not found.
std::string resolveProgram(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = getenv("PATH");
  return findOnPath(program, path ? path : "/usr/local/bin:/usr/bin:/bin");
}

// Closes every descriptor from 3 up except `a` and `b` (both >= 3). close_range where the
// kernel has it.
void closeAllBut(int a, int b) {
  auto range = [](unsigned lo, unsigned hi) {
    if (lo > hi) return;
#ifdef SYS_close_range
    if (syscall(SYS_close_range, lo, hi, 0) == 0) return;
#endif
    long max = sysconf(_SC_OPEN_MAX);
    unsigned top = max > 0 ? static_cast<unsigned>(max) - 1 : 4095;
    for (unsigned fd = lo; fd <= hi && fd <= top; ++fd) close(static_cast<int>(fd));
  };
  if (a > b) std::swap(a, b);
  range(3, static_cast<unsigned>(a) - 1);
  range(static_cast<unsigned>(a) + 1, static_cast<unsigned>(b) - 1);
  range(static_cast<unsigned>(b) + 1, ~0U);
}

// The watchdog: the forked copy of this process that the child runs under. It forks the
// program, then waits for either to end: the program (its exit status becomes the
// watchdog's own, so the parent sees the program's), or the parent (its end of `life`
// closes, however the parent died, SIGKILL included), whereupon the whole process group
// is killed. Only async-signal-safe calls: this is a fork of a threaded process.
void onChildExit(int) {}

[[noreturn]] void watchdog(int life, int exec_status, const char* path, char* const* argv, char* const* envp,
                           const char* cwd) {
  // SIGCHLD stays blocked except inside ppoll, so that the program's end cannot slip in
  // between the check and the wait.
  sigset_t chld, waiting;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, &waiting);
  sigdelset(&waiting, SIGCHLD);
  struct sigaction on_child {};
  on_child.sa_handler = onChildExit;
  sigaction(SIGCHLD, &on_child, nullptr);
  // On exec_status the parent reads the program's pid (positive), then end-of-file once the
  // program is executed (the pipe is close-on-exec), or -errno when it could not be.
  auto fail = [exec_status](int e) {
    int code = -e;
    (void)!::write(exec_status, &code, sizeof code);
    _exit(127);
  };
  pid_t child = fork();
  if (child < 0) fail(errno);
  if (child == 0) {
    close(life);
    sigprocmask(SIG_SETMASK, &waiting, nullptr);
    if (cwd[0] != '\0' && chdir(cwd) != 0) fail(errno);
    execve(path, argv, envp);
    fail(errno);
  }
  int pid_code = static_cast<int>(child);
  (void)!::write(exec_status, &pid_code, sizeof pid_code);
  close(exec_status);
  // The program's pipes are its own; the parent sees end-of-file when the program closes them.
  for (int fd = 0; fd <= 2; ++fd) close(fd);
  while (true) {
    int status = 0;
    pid_t r = waitpid(child, &status, WNOHANG);
    if (r == child) {
      if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
      int sig = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
      struct rlimit no_core {0, 0};
      setrlimit(RLIMIT_CORE, &no_core);
      ::kill(0, sig);  // the program's group, the watchdog with it: its status is the program's
      _exit(128 + sig);
    }
    pollfd p{life, POLLIN, 0};
    if (ppoll(&p, 1, nullptr, &waiting) > 0) ::kill(0, SIGKILL);  // the parent is gone
  }
}

}  // namespace

Subprocess Subprocess::spawn(const SpawnOptions& options) {
  if (options.argv.empty()) throw EnvironmentError("spawn: empty command");
  std::string path = resolveProgram(options.argv[0]);
  if (path.empty()) throw EnvironmentError(fmt::format("cannot start '{}': {}", options.argv[0], strerror(ENOENT)));
  Pipe in, out, err, life, exec_status;
  std::vector<char*> argv;
  for (const auto& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  auto env_strings = buildEnvironment(options);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string cwd = options.cwd.string();

  pid_t pid = fork();
  if (pid < 0) throw EnvironmentError(fmt::format("cannot start '{}': {}", options.argv[0], strerror(errno)));
  if (pid == 0) {
    // Handlers of this process (temporary-file cleanup) must not run in the watchdog; the
    // signals a shell resets come back to their defaults; nothing stays blocked.
    for (int sig = 1; sig < NSIG; ++sig) {
      struct sigaction old {};
      if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, nullptr, &old) != 0) continue;
      bool handled = (old.sa_flags & SA_SIGINFO) ? old.sa_sigaction != nullptr
                                                 : (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN);
      if (handled || sig == SIGPIPE || sig == SIGINT) {
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        sigaction(sig, &dfl, nullptr);
      }
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    setpgid(0, 0);
    if (dup2(in.r, 0) < 0 || dup2(out.w, 1) < 0 || dup2(err.w, 2) < 0) _exit(127);
    int watch = fcntl(life.r, F_DUPFD_CLOEXEC, 3);
    int status_fd = fcntl(exec_status.w, F_DUPFD_CLOEXEC, 3);
    if (watch < 0 || status_fd < 0) _exit(127);
    // Every other descriptor of this process (other children's pipes above all) is closed:
    // the watchdog never execs, so close-on-exec would not close them.
    closeAllBut(watch, status_fd);
    watchdog(watch, status_fd, path.c_str(), argv.data(), envp.data(), cwd.c_str());
  }
  setpgid(pid, pid);  // as the child does: whichever runs first, the group exists before any kill
  close(in.r);
  close(out.w);
  close(err.w);
  close(life.r);
  close(exec_status.w);
  // The program's pid, then end-of-file when it was executed, or -errno when it was not.
  int program = -1, child_errno = 0, code = 0;
  ssize_t n;
  while ((n = ::read(exec_status.r, &code, sizeof code)) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof code)) {
      child_errno = EIO;
      break;
    }
    if (code > 0) program = code;
    else child_errno = -code;
  }
  close(exec_status.r);
  Subprocess p;
  p.watcher_ = pid;
  p.pid_ = program > 0 ? program : pid;
  p.in_ = in.w;
  p.out_ = out.r;
  p.err_ = err.r;
  p.life_ = life.w;
  if (child_errno != 0 || program <= 0) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    p.reaped_ = true;
    p.status_ = status;
    throw EnvironmentError(fmt::format("cannot start '{}': {}", options.argv[0], strerror(child_errno ? child_errno : EIO)));
  }
  return p;
}

Subprocess::Subprocess(Subprocess&& o) noexcept { *this = std::move(o); }

Subprocess& Subprocess::operator=(Subprocess&& o) noexcept {
  if (this == &o) return *this;
  if (watcher_ > 0 && !reaped_) {
    killGroup(SIGKILL);
    waitOrKill(std::chrono::milliseconds(0));
  }
  closeAll();
  pid_ = o.pid_;
  watcher_ = o.watcher_;
  in_ = o.in_;
  out_ = o.out_;
  err_ = o.err_;
  reaped_ = o.reaped_;
  status_ = o.status_;
  life_ = o.life_;
  o.pid_ = o.watcher_ = -1;
  o.in_ = o.out_ = o.err_ = o.life_ = -1;
  o.reaped_ = true;
  return *this;
}

Subprocess::~Subprocess() {
  if (watcher_ > 0 && !reaped_) {
    killGroup(SIGKILL);
    waitOrKill(std::chrono::milliseconds(0));
  }
  closeAll();
}

void Subprocess::closeAll() {
  for (int* fd : {&in_, &out_, &err_, &life_}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
}

bool Subprocess::writeAll(std::string_view data) {
  if (in_ < 0) return false;
  while (!data.empty()) {
    ssize_t n = ::write(in_, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void Subprocess::closeStdin() {
  if (in_ >= 0) close(in_);
  in_ = -1;
}

void Subprocess::killGroup(int sig) {
  if (watcher_ <= 0 || reaped_) return;
  if (::kill(-watcher_, sig) != 0) ::kill(watcher_, sig);
}

std::optional<int> Subprocess::tryWait() {
  if (reaped_) return status_;
  if (watcher_ <= 0) return std::nullopt;
  int status = 0;
  pid_t r = waitpid(watcher_, &status, WNOHANG);
  if (r == watcher_) {
    reaped_ = true;
    status_ = status;
    // Children of the group (ptxas, a profiled program) may outlive the leader.
    ::kill(-watcher_, SIGKILL);
    return status;
  }
  return std::nullopt;
}

int Subprocess::waitOrKill(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (auto s = tryWait()) return *s;
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  killGroup(SIGKILL);
  int status = 0;
  while (waitpid(watcher_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  status_ = status;
  return status;
}

std::string describeWaitStatus(int status) {
  if (WIFEXITED(status)) return fmt::format("exit code {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    return fmt::format("killed by signal {} ({})", sig, signalName(sig));
  }
  return fmt::format("wait status {}", status);
}

bool CommandResult::ok() const { return !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0; }

CommandResult runCommand(const SpawnOptions& options, std::chrono::milliseconds timeout,
                         std::string_view input) {
  Subprocess p = Subprocess::spawn(options);
  CommandResult result;
  // Feed stdin from a thread so that a child that writes before it reads cannot deadlock us.
  std::thread feeder([&p, input] {
    p.writeAll(input);
    p.closeStdin();
  });
  auto deadline = std::chrono::steady_clock::now() + timeout;
  bool out_open = true, err_open = true;
  char buf[65536];
  while (out_open || err_open) {
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      result.timed_out = true;
      break;
    }
    pollfd fds[2] = {{p.stdoutFd(), POLLIN, 0}, {p.stderrFd(), POLLIN, 0}};
    if (!out_open) fds[0].fd = -1;
    if (!err_open) fds[1].fd = -1;
    int ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count());
    int r = poll(fds, 2, std::min(ms, 1000));
    if (r < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        (i == 0 ? out_open : err_open) = false;
        continue;
      }
      (i == 0 ? result.out : result.err).append(buf, static_cast<size_t>(n));
    }
  }
  if (result.timed_out) p.killGroup(SIGKILL);
  result.status = p.waitOrKill(std::chrono::milliseconds(result.timed_out ? 0 : 5000));
  feeder.join();
  return result;
}

namespace {

volatile sig_atomic_t g_relay_signal = 0;

void rememberSignal(int sig) { g_relay_signal = sig; }

void writeAllTo(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // our own stdout closed: the output is dropped, the program goes on
    data += n;
    size -= static_cast<size_t>(n);
  }
}

}  // namespace

int runRelayed(const SpawnOptions& options, std::string* stdout_copy) {
  Subprocess p = Subprocess::spawn(options);
  p.closeStdin();
  const int forwarded[] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction act {}, old[3];
  act.sa_handler = rememberSignal;
  sigemptyset(&act.sa_mask);
  g_relay_signal = 0;
  for (int i = 0; i < 3; ++i) sigaction(forwarded[i], &act, &old[i]);
  bool out_open = true, err_open = true;
  char buf[65536];
  while (out_open || err_open) {
    if (int sig = g_relay_signal) {
      g_relay_signal = 0;
      p.killGroup(sig);
    }
    pollfd fds[2] = {{out_open ? p.stdoutFd() : -1, POLLIN, 0}, {err_open ? p.stderrFd() : -1, POLLIN, 0}};
    int r = poll(fds, 2, 200);
    if (r < 0 && errno != EINTR) break;
    for (int i = 0; i < 2 && r > 0; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        (i == 0 ? out_open : err_open) = false;
        continue;
      }
      writeAllTo(i == 0 ? STDOUT_FILENO : STDERR_FILENO, buf, static_cast<size_t>(n));
      if (i == 0 && stdout_copy && stdout_copy->size() < (size_t{64} << 20)) stdout_copy->append(buf, static_cast<size_t>(n));
    }
  }
  // Both pipes closed: the program is ending (or closed them itself and goes on: wait for it,
  // still passing signals on).
  std::optional<int> status;
  while (!(status = p.tryWait())) {
    if (int sig = g_relay_signal) {
      g_relay_signal = 0;
      p.killGroup(sig);
    }
    usleep(20000);
  }
  for (int i = 0; i < 3; ++i) sigaction(forwarded[i], &old[i], nullptr);
  return *status;
}

bool programOnPath(const std::string& program) {
  if (program.empty()) return false;
  if (program.find('/') != std::string::npos) return access(program.c_str(), X_OK) == 0;
  const char* path = getenv("PATH");
  return path && *path && !findOnPath(program, path).empty();
}

}  // namespace tf

#include "util/subprocess.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include "util/error.h"

extern char** environ;

namespace tf {
namespace {

// Writing to a child that has died must return EPIPE, not kill this process.
const bool kSigpipeIgnored = [] {
  signal(SIGPIPE, SIG_IGN);
  return true;
}();

void setCloexec(int fd) { fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC); }

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int fds[2];
    if (pipe(fds) != 0) throw EnvironmentError(fmt::format("cannot create a pipe: {}", strerror(errno)));
    r = fds[0];
    w = fds[1];
    setCloexec(r);
    setCloexec(w);
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

Subprocess Subprocess::spawn(const SpawnOptions& options) {
  if (options.argv.empty()) throw EnvironmentError("spawn: empty command");
  Pipe in, out, err;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.r, 0);
  posix_spawn_file_actions_adddup2(&actions, out.w, 1);
  posix_spawn_file_actions_adddup2(&actions, err.w, 2);
  std::string cwd = options.cwd.string();
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none, defaults;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGINT);
  posix_spawnattr_setsigdefault(&attr, &defaults);

  std::vector<char*> argv;
  for (const auto& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  auto env_strings = buildEnvironment(options);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_t pid = -1;
  int rc = posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(in.r);
  close(out.w);
  close(err.w);
  if (rc != 0) {
    close(in.w);
    close(out.r);
    close(err.r);
    throw EnvironmentError(fmt::format("cannot start '{}': {}", options.argv[0], strerror(rc)));
  }
  Subprocess p;
  p.pid_ = pid;
  p.in_ = in.w;
  p.out_ = out.r;
  p.err_ = err.r;
  return p;
}

Subprocess::Subprocess(Subprocess&& o) noexcept { *this = std::move(o); }

Subprocess& Subprocess::operator=(Subprocess&& o) noexcept {
  if (this == &o) return *this;
  if (pid_ > 0 && !reaped_) {
    killGroup(SIGKILL);
    waitOrKill(std::chrono::milliseconds(0));
  }
  closeAll();
  pid_ = o.pid_;
  in_ = o.in_;
  out_ = o.out_;
  err_ = o.err_;
  reaped_ = o.reaped_;
  status_ = o.status_;
  o.pid_ = -1;
  o.in_ = o.out_ = o.err_ = -1;
  o.reaped_ = true;
  return *this;
}

Subprocess::~Subprocess() {
  if (pid_ > 0 && !reaped_) {
    killGroup(SIGKILL);
    waitOrKill(std::chrono::milliseconds(0));
  }
  closeAll();
}

void Subprocess::closeAll() {
  for (int* fd : {&in_, &out_, &err_}) {
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
  if (pid_ <= 0 || reaped_) return;
  if (::kill(-pid_, sig) != 0) ::kill(pid_, sig);
}

std::optional<int> Subprocess::tryWait() {
  if (reaped_) return status_;
  if (pid_ <= 0) return std::nullopt;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    reaped_ = true;
    status_ = status;
    // Children of the group (ptxas, a profiled program) may outlive the leader.
    ::kill(-pid_, SIGKILL);
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
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
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

bool programOnPath(const std::string& program) {
  if (program.empty()) return false;
  if (program.find('/') != std::string::npos) return access(program.c_str(), X_OK) == 0;
  const char* path = getenv("PATH");
  if (!path) return false;
  std::string_view rest(path);
  while (!rest.empty()) {
    auto colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    if (dir.empty()) dir = ".";
    if (access((dir + "/" + program).c_str(), X_OK) == 0) return true;
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return false;
}

}  // namespace tf

// Child processes never outlive the process that started them, whatever ends it: each runs
// under a watchdog that kills its group when the parent's end of a pipe closes
// (src/util/subprocess.h). And what spawn promises still holds: exit statuses, signals,
// a program that cannot start.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "support/test_support.h"
#include "util/error.h"
#include "util/subprocess.h"
#include "worker/worker_process.h"

namespace tf {
namespace {

namespace fs = std::filesystem;

// Alive and not a zombie (a zombie has ended; only its parent has not collected it yet).
bool running(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return false;
  auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z' && stat[close + 2] != 'X';
}

pid_t parentOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return -1;
  auto close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  // ") S PPID ..."
  return static_cast<pid_t>(std::atol(stat.c_str() + close + 4));
}

bool endsWithin(pid_t pid, std::chrono::milliseconds limit) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (!running(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return !running(pid);
}

// A helper process (a fork of this test) spawns `sh -c 'echo $$; exec sleep 60'` and hands
// the sleep's pid back; then the helper is ended with `sig`.
pid_t orphanedSleep(int sig) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  pid_t helper = fork();
  if (helper == 0) {
    close(fds[0]);
    try {
      SpawnOptions o;
      o.argv = {"sh", "-c", "echo $$; exec sleep 60"};
      Subprocess p = Subprocess::spawn(o);
      std::string line;
      char c;
      while (::read(p.stdoutFd(), &c, 1) == 1 && c != '\n') line.push_back(c);
      pid_t child = static_cast<pid_t>(std::stol(line));
      (void)!::write(fds[1], &child, sizeof child);
      p.closeStdin();
      // Keep `p` alive: the helper dies of `sig` while its child runs.
      while (true) pause();
    } catch (...) {
      _exit(3);
    }
  }
  close(fds[1]);
  pid_t child = -1;
  EXPECT_EQ(::read(fds[0], &child, sizeof child), static_cast<ssize_t>(sizeof child));
  close(fds[0]);
  EXPECT_TRUE(running(child));
  ::kill(helper, sig);
  int status = 0;
  waitpid(helper, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig);
  return child;
}

TEST(Subprocess, ChildEndsWhenItsParentIsKilledWithSigkill) {
  pid_t child = orphanedSleep(SIGKILL);
  EXPECT_TRUE(endsWithin(child, std::chrono::milliseconds(5000))) << "pid " << child << " outlived its parent";
  if (running(child)) ::kill(child, SIGKILL);
}

TEST(Subprocess, ChildEndsWhenItsParentDiesOfSigterm) {
  pid_t child = orphanedSleep(SIGTERM);
  EXPECT_TRUE(endsWithin(child, std::chrono::milliseconds(5000))) << "pid " << child << " outlived its parent";
  if (running(child)) ::kill(child, SIGKILL);
}

TEST(Subprocess, ExitStatusesAndSignalsAreTheProgramsOwn) {
  SpawnOptions o;
  o.argv = {"sh", "-c", "exit 7"};
  EXPECT_EQ(describeWaitStatus(runCommand(o, std::chrono::seconds(10)).status), "exit code 7");
  o.argv = {"sh", "-c", "kill -SEGV $$"};
  EXPECT_EQ(describeWaitStatus(runCommand(o, std::chrono::seconds(10)).status), "killed by signal 11 (SIGSEGV)");
  o.argv = {"sh", "-c", "read x; echo \"got $x\"; echo err >&2"};
  CommandResult r = runCommand(o, std::chrono::seconds(10), "hello\n");
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.out, "got hello\n");
  EXPECT_EQ(r.err, "err\n");
}

TEST(Subprocess, TheWorkingFolderAndEnvironmentAreSet) {
  fs::path dir = test::tempDir("spawn-cwd");
  SpawnOptions o;
  o.argv = {"sh", "-c", "pwd; echo \"$TF_SPAWN_TEST\""};
  o.cwd = dir;
  o.env_set = {{"TF_SPAWN_TEST", "set"}};
  CommandResult r = runCommand(o, std::chrono::seconds(10));
  EXPECT_EQ(r.out, fs::canonical(dir).string() + "\nset\n");
}

TEST(Subprocess, AProgramThatCannotStartIsAnEnvironmentError) {
  SpawnOptions o;
  o.argv = {"/nonexistent/program"};
  EXPECT_THROW(Subprocess::spawn(o), EnvironmentError);
  o.argv = {"no-such-program-anywhere-tf"};
  EXPECT_THROW(Subprocess::spawn(o), EnvironmentError);
  o.argv = {"true"};
  o.cwd = "/nonexistent/folder";
  EXPECT_THROW(Subprocess::spawn(o), EnvironmentError);
}

// A child does not inherit another child's pipe: the first sees end-of-file on its stdin
// when this process closes its end, though a second child was started meanwhile.
TEST(Subprocess, AChildHoldsNoOtherChildsPipes) {
  SpawnOptions cat;
  cat.argv = {"cat"};
  Subprocess first = Subprocess::spawn(cat);
  SpawnOptions sleeper;
  sleeper.argv = {"sleep", "30"};
  Subprocess second = Subprocess::spawn(sleeper);
  first.closeStdin();
  EXPECT_EQ(describeWaitStatus(first.waitOrKill(std::chrono::milliseconds(5000))), "exit code 0");
  second.killGroup(SIGKILL);
  second.waitOrKill(std::chrono::milliseconds(1000));
}

// --- the tool itself, killed while its worker runs a candidate ---------------------------

std::string fakePython() { return (test::sourceDir() / "tests/worker_fakes/fake_gpu_python").string(); }

// The processes whose environment holds `marker` (a variable set for one tritonforge run,
// inherited by everything it starts).
std::vector<pid_t> processesMarked(const std::string& marker) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "environ", std::ios::binary);
    std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    pid_t pid = static_cast<pid_t>(std::stol(name));
    if (env.find(marker) != std::string::npos && running(pid)) out.push_back(pid);
  }
  return out;
}

TEST(Subprocess, NoWorkerOutlivesATritonforgeKilledWithSigkill) {
  fs::path out = test::tempDir("sigkill-out");
  std::string marker = "TF_SIGKILL_TEST_MARKER=" + std::to_string(getpid());
  SpawnOptions o;
  o.argv = {test::tritonforgeBinary().string(), "--python", fakePython(), "optimize",
            (test::sourceDir() / "examples/softmax/task.toml").string(), "--no-db", "--out", out.string(),
            "--jobs", "1", "--budget", "300"};
  o.env_set = {{"TF_SIGKILL_TEST_MARKER", std::to_string(getpid())},
               {"TF_FAKE_REAL_PYTHON", choosePython("")},
               {"TF_FAKE_RUN_S", "60"}};
  Subprocess p = Subprocess::spawn(o);
  // Wait until tritonforge has started workers (processes beyond itself and its watchdog).
  // The snapshot that shows them is the one used: short-lived processes (a probe) come and go,
  // so a second look may count fewer.
  std::vector<pid_t> before;
  for (int i = 0; i < 600; ++i) {
    before = processesMarked(marker);
    if (before.size() >= 4 || p.tryWait()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_FALSE(p.reaped()) << "tritonforge ended before it started its workers";
  // tritonforge is p's process, or its child when p is a watchdog; the forks of tritonforge
  // (its children's watchdogs) run the same binary, so the parent tells them apart.
  ASSERT_GE(before.size(), 4u);
  pid_t tool = -1;
  for (pid_t pid : before) {
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec);
    if (ec || !fs::equivalent(exe, test::tritonforgeBinary(), ec)) continue;
    if (pid == p.pid() || parentOf(pid) == p.pid()) tool = pid;
  }
  ASSERT_GT(tool, 0);
  ::kill(tool, SIGKILL);
  p.waitOrKill(std::chrono::milliseconds(5000));
  std::vector<pid_t> left;
  for (int i = 0; i < 250; ++i) {
    left = processesMarked(marker);
    if (left.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(left.empty()) << left.size() << " processes outlived tritonforge, the first pid " << left.front();
  for (pid_t pid : left) ::kill(pid, SIGKILL);
}

}  // namespace
}  // namespace tf

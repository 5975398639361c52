// Temporary folders: made exclusively under $TMPDIR, removed when done, and removed too when
// SIGINT or SIGTERM ends the process, which still dies of that signal.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <thread>

#include "support/test_support.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/subprocess.h"
#include "util/temp_dir.h"
#include "worker/worker_process.h"

namespace tf {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Sets TMPDIR for the scope of one test.
class ScopedTmpdir {
 public:
  explicit ScopedTmpdir(const fs::path& p) {
    if (const char* old = std::getenv("TMPDIR")) old_ = old;
    setenv("TMPDIR", p.c_str(), 1);
  }
  ~ScopedTmpdir() {
    if (old_) setenv("TMPDIR", old_->c_str(), 1);
    else unsetenv("TMPDIR");
  }

 private:
  std::optional<std::string> old_;
};

TEST(TempDir, IsMadePrivatelyUnderTmpdirAndRemovedWithItsContents) {
  fs::path root = test::tempDir("tmpdir");
  ScopedTmpdir scoped(root);
  EXPECT_EQ(tempRoot(), root);
  fs::path made;
  {
    TempDir a("tf-unit-");
    TempDir b("tf-unit-");
    made = a.path();
    EXPECT_EQ(a.path().parent_path(), root);
    EXPECT_EQ(a.path().filename().string().rfind("tf-unit-", 0), 0u) << a.path();
    EXPECT_NE(a.path(), b.path());
    struct stat st {};
    ASSERT_EQ(::stat(a.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    test::writeFile(a.path() / "x" / "y" / "z.py", "pass\n");
    EXPECT_EQ(entries(root).size(), 2u);
  }
  EXPECT_FALSE(fs::exists(made));
  EXPECT_TRUE(entries(root).empty());
}

TEST(TempDir, KeptFolderStays) {
  fs::path root = test::tempDir("tmpdir");
  ScopedTmpdir scoped(root);
  fs::path made;
  {
    TempDir a("tf-keep-");
    a.keep();
    made = a.path();
  }
  EXPECT_TRUE(fs::is_directory(made));
}

TEST(TempDir, UnwritableTmpdirIsAnEnvironmentErrorNamingIt) {
  ScopedTmpdir scoped("/nonexistent/tmp");
  try {
    TempDir a("tf-x-");
    FAIL() << "made " << a.path();
  } catch (const EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/tmp: cannot create a temporary folder"), std::string::npos)
        << e.what();
  }
}

TEST(WriteFileAtomic, LeavesNoTemporaryFileAndKeepsTheModeOfTheFileItReplaces) {
  fs::path dir = test::tempDir("atomic");
  writeFileAtomic(dir / "a.txt", "one");
  EXPECT_EQ(test::readFile(dir / "a.txt"), "one");
  ::chmod((dir / "a.txt").c_str(), 0750);
  writeFileAtomic(dir / "a.txt", "two");
  EXPECT_EQ(test::readFile(dir / "a.txt"), "two");
  struct stat st {};
  ASSERT_EQ(::stat((dir / "a.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0750u);
  EXPECT_EQ(entries(dir), std::vector<std::string>{"a.txt"});
}

// --- a tritonforge process killed mid-run ------------------------------------------------

std::string fakePython() { return (test::sourceDir() / "tests/worker_fakes/fake_gpu_python").string(); }

struct KilledRun {
  std::vector<std::string> seen;   // what the run had made in TMPDIR when it was killed
  std::vector<std::string> left;   // what is there afterwards
  int status = 0;                  // raw wait status
};

// Starts `tritonforge ARGS` with TMPDIR = a private folder and the fake GPU worker (whose
// `run` takes 5 s), waits until something appears in TMPDIR, lets it run a moment longer,
// sends `sig` to tritonforge alone and waits for it.
KilledRun killMidRun(std::vector<std::string> args, int sig) {
  fs::path tmp = test::tempDir("private-tmp");
  SpawnOptions o;
  o.argv = {test::tritonforgeBinary().string(), "--python", fakePython()};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.env_set = {{"TMPDIR", tmp.string()}, {"TF_FAKE_REAL_PYTHON", choosePython("")}, {"TF_FAKE_RUN_S", "5"}};
  // A job started in the background by a shell ignores SIGINT, and its children inherit
  // that (tritonforge keeps an ignored signal ignored): the child gets default actions.
  struct sigaction dfl {}, old_int {}, old_term {};
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGINT, &dfl, &old_int);
  sigaction(SIGTERM, &dfl, &old_term);
  Subprocess p = Subprocess::spawn(o);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  KilledRun r;
  for (int i = 0; i < 1200 && r.seen.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    r.seen = entries(tmp);
    if (p.tryWait()) break;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  if (!p.reaped()) ::kill(p.pid(), sig);
  r.status = p.waitOrKill(std::chrono::milliseconds(20000));
  r.left = entries(tmp);
  return r;
}

void expectCleanDeath(const KilledRun& r, int sig, const std::string& prefix) {
  ASSERT_EQ(r.seen.size(), 1u) << "the run made no temporary folder in TMPDIR before it was killed";
  EXPECT_EQ(r.seen[0].rfind(prefix, 0), 0u) << r.seen[0];
  EXPECT_TRUE(WIFSIGNALED(r.status) && WTERMSIG(r.status) == sig) << describeWaitStatus(r.status);
  EXPECT_TRUE(r.left.empty()) << "left behind: " << r.left.front();
}

std::vector<std::string> profileArgs() {
  return {"profile", (test::sourceDir() / "examples/softmax/task.toml").string(), "--ncu", "--no-roofline", "--json"};
}

TEST(SignalCleanup, ProfileKilledWithSigtermLeavesNoFolderAndDiesOfSigterm) {
  expectCleanDeath(killMidRun(profileArgs(), SIGTERM), SIGTERM, "tritonforge-profile-");
}

TEST(SignalCleanup, ProfileKilledWithSigintLeavesNoFolderAndDiesOfSigint) {
  expectCleanDeath(killMidRun(profileArgs(), SIGINT), SIGINT, "tritonforge-profile-");
}

// optimize's work folder (src/search/loop.cpp) is a TempDir too.
TEST(SignalCleanup, OptimizeKilledWithSigtermLeavesNoFolder) {
  fs::path out = test::tempDir("optimize-out");
  KilledRun r = killMidRun({"optimize", (test::sourceDir() / "examples/softmax/task.toml").string(), "--no-db",
                            "--out", out.string(), "--jobs", "1", "--budget", "300"},
                           SIGTERM);
  ASSERT_FALSE(r.seen.empty());
  EXPECT_TRUE(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGTERM) << describeWaitStatus(r.status);
  EXPECT_TRUE(r.left.empty()) << "left behind: " << r.left.front();
}

}  // namespace
}  // namespace tf

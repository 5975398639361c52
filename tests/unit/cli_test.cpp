// The CLI end to end on a machine without a GPU: bad input gets one line and exit 2 with
// nothing written; `optimize` does the analysis and compile checks and exits 3.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "support/test_support.h"
#include "util/build_info.h"
#include "util/hash.h"

#include <algorithm>
#include <regex>

namespace tf {
namespace {

namespace fs = std::filesystem;

std::pair<int, std::string> tf(const std::string& args) {
  return test::runShell(test::tritonforgeBinary().string() + " " + args);
}

// Copies an example into a fresh folder so that tests can break it.
fs::path copyExample(const std::string& name) {
  fs::path dir = test::tempDir("ex-" + name);
  fs::copy(test::sourceDir() / "examples" / name, dir, fs::copy_options::recursive);
  return dir;
}

void expectOneLineError(const std::string& args, const std::string& needle) {
  test::expectOneLineError(test::tritonforgeBinary().string() + " " + args, needle);
}

TEST(Cli, BadFlagsAndMissingFiles) {
  expectOneLineError("optimize", "task is required");
  expectOneLineError("optimize /nonexistent/task.toml", "/nonexistent/task.toml: task file not found");
  expectOneLineError("frobnicate", "unknown command 'frobnicate' (commands: analyze");
  expectOneLineError("analyze " + (test::sourceDir() / "examples/matmul/task.toml").string(),
                     "task.toml: analyze takes the kernel's Python source, not a task file");
  expectOneLineError("optimize " + (test::sourceDir() / "examples/matmul/task.toml").string() + " --budget -1",
                     "--budget");
  expectOneLineError("optimize " + (test::sourceDir() / "examples/matmul/task.toml").string() + " --bogus", "--bogus");
  expectOneLineError("optimize " + (test::sourceDir() / "examples/matmul/task.toml").string() + " --strategy magic",
                     "unknown search strategy 'magic'");
}

TEST(Cli, VersionNamesTheVersionAndTheCommit) {
  auto [rc, out] = tf("--version");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_EQ(out, toolVersionLine() + "\n");
  // The commit is a short hash (with -dirty for a changed tree) or "unknown" outside a checkout.
  EXPECT_TRUE(std::regex_match(out, std::regex(R"(tritonforge \d+\.\d+\.\d+ \(commit ([0-9a-f]{7,40}(-dirty)?|unknown)\)\n)")))
      << out;
  EXPECT_EQ(std::string(toolVersion()), TRITONFORGE_VERSION);
  // Built from a git checkout (as here, unless the sources came as an archive): a real commit.
  // Which one is not compared with HEAD: a commit made after the build would fail that.
  auto [git_rc, top] = test::runShell("git -C " + test::sourceDir().string() + " rev-parse --show-toplevel 2>/dev/null");
  while (!top.empty() && (top.back() == '\n' || top.back() == '\r')) top.pop_back();
  std::error_code ec;
  if (git_rc == 0 && fs::equivalent(top, test::sourceDir(), ec)) EXPECT_NE(std::string(toolCommit()), "unknown");
}

TEST(Cli, KernelThatDoesNotParse) {
  fs::path dir = copyExample("matmul");
  std::string text = test::readFile(dir / "matmul.py");
  int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  test::writeFile(dir / "matmul.py", text + "\ndef broken(:\n    pass\n");
  expectOneLineError("optimize " + (dir / "task.toml").string() + " --out " + (dir / "out").string(),
                     (dir / "matmul.py").string() + ":" + std::to_string(lines + 2) + ":12: syntax error");
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(Cli, TaskNamingAMissingLauncherOrHarnessFunction) {
  fs::path dir = copyExample("softmax");
  std::string task = test::readFile(dir / "task.toml");
  test::writeFile(dir / "task.toml", std::regex_replace(task, std::regex("launcher = \"softmax\""), "launcher = \"soft\""));
  expectOneLineError("optimize " + (dir / "task.toml").string(), "key 'launcher': softmax.py defines no function or class 'soft'");
  test::writeFile(dir / "task.toml", task);
  test::writeFile(dir / "softmax_harness.py", "import torch\ndef make_inputs(case, seed):\n    return ()\n");
  expectOneLineError("optimize " + (dir / "task.toml").string(), "softmax_harness.py defines no function 'reference'");
}

// A backward task whose launcher calls no autograd Function with a backward, and a launch
// that cannot be followed: one line each, naming what and where, exit 2, nothing written.
TEST(Cli, LaunchesThatCannotBeFollowedAreNamed) {
  fs::path dir = copyExample("softmax");
  std::string task = test::readFile(dir / "task.toml");
  test::writeFile(dir / "task.toml", "direction = \"backward\"\n" + task);
  expectOneLineError("optimize " + (dir / "task.toml").string() + " --out " + (dir / "out").string(),
                     "the backward of the launcher 'softmax' launches no @triton.jit kernel");
  expectOneLineError("optimize " + (dir / "task.toml").string() + " --out " + (dir / "out").string(),
                     "reaches no torch.autograd.Function with a backward method");
  test::writeFile(dir / "task.toml", task);
  std::string source = test::readFile(dir / "softmax.py");
  test::writeFile(dir / "softmax.py", std::regex_replace(source, std::regex("softmax_rows\\["),
                                                         "getattr(sys.modules[__name__], 'softmax_rows')["));
  expectOneLineError("optimize " + (dir / "task.toml").string() + " --out " + (dir / "out").string(),
                     "`getattr(sys.modules[__name__], 'softmax_rows')[...](...)` launches a computed value");
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(Cli, AnalyzeBadSources) {
  fs::path dir = test::tempDir("bad-src");
  test::writeFile(dir / "empty.py", "\n\n");
  expectOneLineError("analyze " + (dir / "empty.py").string(), "empty.py: source is empty");
  test::writeFile(dir / "latin1.py", "x = '\xe9'\n");
  expectOneLineError("analyze " + (dir / "latin1.py").string(), "latin1.py:1: source is not valid UTF-8");
  expectOneLineError("analyze " + dir.string(), "is a directory");
  test::writeFile(dir / "nokernel.py", "def f():\n    return 1\n");
  expectOneLineError("analyze " + (dir / "nokernel.py").string(), "no @triton.jit kernel found");
  test::writeFile(dir / "syntax.py", "import triton\nx = (\n");
  expectOneLineError("analyze " + (dir / "syntax.py").string(), "syntax.py:2:");
}

TEST(Cli, AnalyzeJson) {
  auto [rc, out] = tf("analyze --json " + (test::sourceDir() / "examples/matmul/matmul.py").string() + " 2>/dev/null");
  ASSERT_EQ(rc, 0) << out;
  auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["schema"], "tritonforge.analyze/2");
  ASSERT_EQ(j["kernels"].size(), 1u);
  EXPECT_EQ(j["kernels"][0]["name"], "matmul_kernel");
  EXPECT_EQ(j["kernels"][0]["facts"]["dots"][0]["m"], "BLOCK_M");
  EXPECT_EQ(j["launches"][0]["function"], "matmul");
  EXPECT_EQ(j["tunables"]["matmul"].size(), 5u);
}

TEST(Cli, OptimizeWithoutAGpuAnalyzesAndCompiles) {
  if (test::gpuAvailable()) GTEST_SKIP() << "a GPU is visible: this test is for machines without one";
  fs::path dir = copyExample("matmul");
  std::string before = hashHex(test::readFile(dir / "matmul.py"));
  fs::path out = dir / "out";
  auto [rc, text] = tf("optimize " + (dir / "task.toml").string() + " --out " + out.string());
  EXPECT_EQ(rc, 3) << text;
  EXPECT_NE(text.find("No CUDA GPU"), std::string::npos) << text;
  EXPECT_NE(text.find("need a CUDA GPU"), std::string::npos) << text;
  auto j = nlohmann::json::parse(test::readFile(out / "matmul" / "result.json"));
  EXPECT_EQ(j["status"], "no-gpu");
  EXPECT_EQ(j["tool"]["version"], TRITONFORGE_VERSION);
  EXPECT_EQ(j["tool"]["commit"], toolCommit());
  ASSERT_EQ(j["compile_checks"].size(), 1u);
  const auto& check = j["compile_checks"][0];
  if (check["status"] == "ok") {
    EXPECT_EQ(check["result"]["num_warps"], 4);
    EXPECT_GT(check["result"]["cubin"]["registers"].get<int>(), 0);
  } else {
    // Only acceptable when the worker's python has no Triton at all.
    EXPECT_NE(check.dump().find("triton"), std::string::npos) << check.dump();
  }
  EXPECT_EQ(hashHex(test::readFile(dir / "matmul.py")), before);  // the user's file is untouched
}

TEST(Cli, RefusesToWriteOverTheTaskSource) {
  fs::path root = test::tempDir("own");
  fs::copy(test::sourceDir() / "examples/matmul", root / "matmul", fs::copy_options::recursive);
  // OUT/NAME is the example's own folder: the optimized source would replace matmul.py.
  std::string before = test::readFile(root / "matmul/matmul.py");
  expectOneLineError("optimize " + (root / "matmul/task.toml").string() + " --out " + root.string(),
                     "refusing to write the optimized source over the task's own file");
  EXPECT_EQ(test::readFile(root / "matmul/matmul.py"), before);
  EXPECT_FALSE(fs::exists(root / "matmul/result.json"));
}

// --- flags out of range: one line naming the flag, exit 2, before anything runs

std::string matmulTask() { return (test::sourceDir() / "examples/matmul/task.toml").string(); }

TEST(CliFlags, OptimizeJobsBelowZero) {
  expectOneLineError("optimize " + matmulTask() + " --jobs -1", "--jobs must be between 1 and 1024 (or 0");
}

TEST(CliFlags, OptimizeJobsAbove1024) {
  expectOneLineError("optimize " + matmulTask() + " --jobs 1025", "--jobs must be between 1 and 1024 (or 0");
}

TEST(CliFlags, OptimizeCompileTimeoutZero) {
  expectOneLineError("optimize " + matmulTask() + " --compile-timeout 0", "--compile-timeout must be a number of seconds > 0");
}

TEST(CliFlags, OptimizeCompileTimeoutNotFinite) {
  expectOneLineError("optimize " + matmulTask() + " --compile-timeout nan", "--compile-timeout must be a number of seconds > 0");
  expectOneLineError("optimize " + matmulTask() + " --compile-timeout inf", "--compile-timeout must be a number of seconds > 0");
  expectOneLineError("optimize " + matmulTask() + " --compile-timeout 1e300", "--compile-timeout must be a number of seconds > 0");
}

TEST(CliFlags, OptimizeRunTimeoutNegative) {
  expectOneLineError("optimize " + matmulTask() + " --run-timeout -5", "--run-timeout must be a number of seconds > 0");
}

TEST(CliFlags, OptimizeRunTimeoutNotFinite) {
  expectOneLineError("optimize " + matmulTask() + " --run-timeout inf", "--run-timeout must be a number of seconds > 0");
}

TEST(CliFlags, OptimizeBudgetNotFinite) {
  expectOneLineError("optimize " + matmulTask() + " --budget inf", "--budget must be a number > 0");
  expectOneLineError("optimize " + matmulTask() + " --budget nan", "--budget must be a number > 0");
}

TEST(CliFlags, OptimizeTimingMsNotFinite) {
  expectOneLineError("optimize " + matmulTask() + " --timing-ms nan", "--timing-ms must be a number > 0");
}

TEST(CliFlags, ProfileRunTimeoutZero) {
  expectOneLineError("profile " + matmulTask() + " --run-timeout 0", "--run-timeout must be a number of seconds > 0");
}

TEST(CliFlags, ProfileNcuTimeoutNotFinite) {
  expectOneLineError("profile " + matmulTask() + " --ncu-timeout nan", "--ncu-timeout must be a number of seconds > 0");
  expectOneLineError("profile " + matmulTask() + " --ncu-timeout -1", "--ncu-timeout must be a number of seconds > 0");
}

TEST(CliFlags, ProfileBudgetMsNotFinite) {
  expectOneLineError("profile " + matmulTask() + " --budget-ms inf", "--budget-ms must be a number > 0");
}

// --- files given as --db that are not tritonforge results databases: refused, untouched

// A foreign SQLite database and a file of random bytes, with their hashes.
struct ForeignFiles {
  fs::path dir, sqlite, random;
};

ForeignFiles foreignFiles() {
  ForeignFiles f;
  f.dir = test::tempDir("foreign-db");
  f.sqlite = f.dir / "other.sqlite";
  sqlite3* raw = nullptr;
  EXPECT_EQ(sqlite3_open(f.sqlite.c_str(), &raw), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(raw, "CREATE TABLE notes (x); INSERT INTO notes VALUES ('hi');", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  f.random = f.dir / "random.bin";
  std::string bytes;
  uint64_t x = 88172645463325252ULL;
  for (int i = 0; i < 8192; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    bytes.push_back(static_cast<char>(x & 0xff));
  }
  test::writeFile(f.random, bytes);
  return f;
}

int filesIn(const fs::path& dir) {
  return static_cast<int>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

void expectRefusedUntouched(const std::string& args, const fs::path& file) {
  std::string before = hashHex(test::readFile(file));
  int files = filesIn(file.parent_path());
  expectOneLineError(args, file.string() + ": not a tritonforge results database");
  EXPECT_EQ(hashHex(test::readFile(file)), before) << args;
  EXPECT_EQ(filesIn(file.parent_path()), files) << "a journal or WAL file appeared: " << args;
}

TEST(CliDb, RefusesAForeignSqliteDatabaseUntouched) {
  ForeignFiles f = foreignFiles();
  ASSERT_EQ(test::readFile(f.sqlite).substr(0, 15), "SQLite format 3");
  expectRefusedUntouched("db --db " + f.sqlite.string() + " list", f.sqlite);
  expectRefusedUntouched("db --db " + f.sqlite.string() + " show 1", f.sqlite);
  expectRefusedUntouched("db --db " + f.sqlite.string() + " export --format json", f.sqlite);
}

TEST(CliDb, RefusesARandomBytesFileUntouched) {
  ForeignFiles f = foreignFiles();
  expectRefusedUntouched("db --db " + f.random.string() + " list", f.random);
  expectRefusedUntouched("db list --db " + f.random.string(), f.random);
  expectRefusedUntouched("db --db " + f.random.string() + " export", f.random);
}

TEST(CliDb, ReadingCommandsCreateNoDatabase) {
  fs::path dir = test::tempDir("no-db");
  expectOneLineError("db --db " + (dir / "missing.sqlite").string() + " list", "no results database there");
  EXPECT_FALSE(fs::exists(dir / "missing.sqlite"));
}

TEST(CliDb, OptimizeRefusesAForeignSqliteDatabaseUntouched) {
  ForeignFiles f = foreignFiles();
  fs::path dir = copyExample("matmul");
  expectRefusedUntouched("optimize " + (dir / "task.toml").string() + " --out " + (dir / "out").string() + " --db " +
                             f.sqlite.string(),
                         f.sqlite);
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(CliDb, OptimizeRefusesARandomBytesFileUntouched) {
  ForeignFiles f = foreignFiles();
  fs::path dir = copyExample("matmul");
  expectRefusedUntouched("optimize " + (dir / "task.toml").string() + " --out " + (dir / "out").string() + " --db " +
                             f.random.string(),
                         f.random);
  EXPECT_FALSE(fs::exists(dir / "out"));
}

}  // namespace
}  // namespace tf

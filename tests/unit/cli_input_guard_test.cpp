// Inputs that are not what they seem: a device or a FIFO where a file is expected, a file too
// large to be a source, an output that names an input, a results database that cannot be
// written or is in use by a live run. Each gets one line and exit 2, promptly, and leaves
// the user's files as they were.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <string>

#include "store/results_db.h"
#include "support/test_support.h"
#include "util/hash.h"

namespace tf {
namespace {

namespace fs = std::filesystem;

// Every command runs under a memory cap (a read without a limit dies of bad_alloc there, not
// by taking the machine's memory) and a time limit (a FIFO opened for reading blocks).
std::string guarded(const std::string& args) {
  return "ulimit -v 6000000 2>/dev/null; timeout 60 " + test::tritonforgeBinary().string() + " " + args;
}

void expectOneLineError(const std::string& args, const std::string& needle) {
  auto start = std::chrono::steady_clock::now();
  test::expectOneLineError(guarded(args), needle);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(s, 30.0) << args << " took " << s << " s to refuse";
}

fs::path copyExample(const std::string& name) {
  fs::path dir = test::tempDir("guard-" + name);
  fs::copy(test::sourceDir() / "examples" / name, dir, fs::copy_options::recursive);
  return dir;
}

// The example's task with `key = "value"` in place of its own line for that key.
fs::path taskWith(const fs::path& dir, const std::string& key, const std::string& value) {
  std::string task = test::readFile(dir / "task.toml");
  task = std::regex_replace(task, std::regex("\n" + key + " = \"[^\"]*\""), "\n" + key + " = \"" + value + "\"");
  test::writeFile(dir / "task.toml", task);
  return dir / "task.toml";
}

fs::path makeFifo(const std::string& name) {
  fs::path p = test::tempDir("fifo") / name;
  EXPECT_EQ(mkfifo(p.c_str(), 0600), 0);
  return p;
}

TEST(CliInputs, ADeviceIsNoSource) {
  fs::path dir = copyExample("softmax");
  fs::path task = taskWith(dir, "source", "/dev/zero");
  expectOneLineError("optimize " + task.string() + " --no-db --out " + (dir / "out").string(),
                     "key 'source': '/dev/zero' is not a regular file");
  expectOneLineError("profile " + task.string(), "key 'source': '/dev/zero' is not a regular file");
  expectOneLineError("check " + task.string() + " --baseline " + (dir / "none.json").string(),
                     "key 'source': '/dev/zero' is not a regular file");
  expectOneLineError("analyze /dev/zero", "/dev/zero: source is a character device, expected a regular file");
  expectOneLineError("transform /dev/zero --kernel k --pass autotune", "/dev/zero: source is a character device");
  expectOneLineError("export /dev/zero", "/dev/zero: optimize result is a character device");
  expectOneLineError("diagnose --ncu-csv /dev/zero", "/dev/zero: Nsight Compute CSV is a character device");
  expectOneLineError("tune --replay /dev/zero", "/dev/zero: sweep is a character device");
  expectOneLineError("optimize /dev/zero", "/dev/zero: task file is a character device");
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(CliInputs, AFifoIsRefusedWithoutWaitingForAWriter) {
  fs::path fifo = makeFifo("kernel.py");
  expectOneLineError("analyze " + fifo.string(), fifo.string() + ": source is a FIFO, expected a regular file");
  expectOneLineError("optimize " + fifo.string(), fifo.string() + ": task file is a FIFO");
  expectOneLineError("export " + fifo.string(), fifo.string() + ": optimize result is a FIFO");
  fs::path dir = copyExample("softmax");
  fs::path task = taskWith(dir, "harness", fifo.string());
  expectOneLineError("optimize " + task.string() + " --no-db", "key 'harness': '" + fifo.string() + "' is not a regular file");
}

TEST(CliInputs, ASourceTooLargeIsRefusedAtOnce) {
  fs::path dir = copyExample("softmax");
  std::string text = test::readFile(dir / "softmax.py");
  std::string big = text;
  while (big.size() <= (8u << 20)) big += "\n# " + std::string(4000, 'x');
  test::writeFile(dir / "softmax.py", big);
  expectOneLineError("analyze " + (dir / "softmax.py").string(),
                     (dir / "softmax.py").string() + ": source is larger than 8 MiB");
  expectOneLineError("optimize " + (dir / "task.toml").string() + " --no-db --out " + (dir / "out").string(),
                     "kernel source is larger than 8 MiB");
  EXPECT_FALSE(fs::exists(dir / "out"));
  std::string task = test::readFile(dir / "task.toml");
  test::writeFile(dir / "task.toml", task + "\n#" + std::string(1u << 20, 'x') + "\n");
  expectOneLineError("optimize " + (dir / "task.toml").string(), "task file is larger than 1 MiB");
}

// --- outputs never replace inputs

// A results database with one run, written as a run would write it.
fs::path makeDb(const fs::path& dir) {
  fs::path p = dir / "r.sqlite";
  auto db = ResultsDb::open(p);
  RunInfo info;
  info.task_name = "add";
  info.task_hash = "t1";
  int64_t run = db->beginRun(info);
  MeasurementKey key{"t1", "b1", "v1", R"({"k.BLOCK":128})", R"({"N":1024})", {}};
  db->putMeasurement(key, "ok", 0.5, {{"median_ms", 0.5}}, run);
  db->finishRun(run, "done", nlohmann::json::object());
  return p;
}

TEST(CliOutputs, DbExportNeverWritesOverTheDatabase) {
  fs::path dir = test::tempDir("db-over");
  fs::path db = makeDb(dir);
  std::string before = hashHex(test::readFile(db));
  expectOneLineError("db --db " + db.string() + " export -o " + db.string(),
                     "the output would be written over the results database this command reads");
  // Another spelling of the same file.
  expectOneLineError("db --db " + db.string() + " export -o " + (dir / "." / "r.sqlite").string(),
                     "the output would be written over the results database");
  EXPECT_EQ(hashHex(test::readFile(db)), before);
  auto [rc, out] = test::runShell(test::tritonforgeBinary().string() + " db --db " + db.string() + " list");
  EXPECT_EQ(rc, 0) << out;
}

TEST(CliOutputs, ExportNeverWritesOverItsInput) {
  fs::path dir = test::tempDir("export-over");
  fs::path db = makeDb(dir);
  std::string before = hashHex(test::readFile(db));
  expectOneLineError("export " + db.string() + " --format table -o " + db.string(),
                     "the output would be written over the result this command reads");
  expectOneLineError("export " + db.string() + " -o " + db.string(), "the output would be written over the result");
  EXPECT_EQ(hashHex(test::readFile(db)), before);
}

TEST(CliOutputs, CheckNeverWritesItsReportOverAnInput) {
  fs::path dir = copyExample("softmax");
  fs::path base = dir / "baseline.json";
  test::writeFile(base, "{}");
  std::string before = hashHex(test::readFile(dir / "softmax.py"));
  std::string task = (dir / "task.toml").string();
  expectOneLineError("check " + task + " --baseline " + base.string() + " --junit " + task,
                     "the output would be written over the task file this command reads");
  expectOneLineError("check " + task + " --baseline " + base.string() + " --junit " + base.string(),
                     "the output would be written over the baseline file");
  expectOneLineError("check " + task + " --baseline " + base.string() + " --junit " + (dir / "softmax.py").string(),
                     "the output would be written over the kernel source");
  EXPECT_EQ(hashHex(test::readFile(dir / "softmax.py")), before);
  EXPECT_EQ(test::readFile(base), "{}");
}

// --- the results database of a run

TEST(CliDbGuard, AReadOnlyDatabaseIsRefusedBeforeTheSearch) {
  fs::path dir = test::tempDir("ro-db");
  fs::path db = makeDb(dir);
  ASSERT_EQ(::chmod(db.c_str(), 0444), 0);
  std::string before = hashHex(test::readFile(db));
  fs::path ex = copyExample("softmax");
  expectOneLineError("optimize " + (ex / "task.toml").string() + " --out " + (ex / "out").string() + " --db " +
                         db.string(),
                     db.string() + ": the results database is read-only");
  EXPECT_EQ(hashHex(test::readFile(db)), before);
  EXPECT_FALSE(fs::exists(db.string() + "-wal"));
  EXPECT_FALSE(fs::exists(db.string() + "-shm"));
  EXPECT_FALSE(fs::exists(ex / "out"));
  ::chmod(db.c_str(), 0644);
}

TEST(CliDbGuard, NoDatabaseIsCreatedForATaskThatIsRefused) {
  fs::path ex = copyExample("softmax");
  fs::path task = taskWith(ex, "launcher", "no_such_launcher");
  fs::path db = test::tempDir("refused-db") / "new.sqlite";
  expectOneLineError("optimize " + task.string() + " --db " + db.string(), "no_such_launcher");
  EXPECT_FALSE(fs::exists(db));
}

TEST(CliDbGuard, AnEmptySqliteFileOfAnotherProgramIsRefusedUntouched) {
  fs::path dir = test::tempDir("uv-db");
  fs::path db = dir / "other.sqlite";
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "PRAGMA user_version = 42;", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  std::string before = hashHex(test::readFile(db));
  fs::path ex = copyExample("softmax");
  expectOneLineError("optimize " + (ex / "task.toml").string() + " --out " + (ex / "out").string() + " --db " +
                         db.string(),
                     "not a tritonforge results database (an SQLite database without tables, with user_version 42)");
  expectOneLineError("db --db " + db.string() + " list", "not a tritonforge results database");
  EXPECT_EQ(hashHex(test::readFile(db)), before);
}

TEST(CliFlags, OptimizeMaxCandidatesBelowZero) {
  expectOneLineError("optimize " + (test::sourceDir() / "examples/softmax/task.toml").string() + " --max-candidates -1",
                     "--max-candidates must be 0 (no cap) or more, not -1");
}

// A live run is not an interrupted one: a second process does not resume it, and `db list`
// says it is running; once its process is gone (SIGKILL), it is interrupted and resumable.
TEST(ResultsDbRuns, ALiveRunIsToldFromADeadOne) {
  fs::path dir = test::tempDir("live-run");
  fs::path path = dir / "r.sqlite";
  MeasureEnv env;
  env.gpu = "NVIDIA H200";
  { ResultsDb::open(path); }
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t other = fork();
  if (other == 0) {
    close(ready[0]);
    auto db = ResultsDb::open(path);
    RunInfo info;
    info.task_name = "add";
    info.task_hash = "t1";
    info.env = env;
    int64_t id = db->beginRun(info);
    (void)!::write(ready[1], &id, sizeof id);
    while (true) pause();
  }
  close(ready[1]);
  int64_t id = 0;
  ASSERT_EQ(::read(ready[0], &id, sizeof id), static_cast<ssize_t>(sizeof id));
  close(ready[0]);
  {
    auto db = ResultsDb::open(path);
    EXPECT_TRUE(db->isLive(id));
    EXPECT_FALSE(db->lastUnfinishedRun("t1", env).has_value()) << "a live run was taken for an interrupted one";
    ASSERT_EQ(db->unfinishedRuns("t1", env).size(), 1u);
    auto [rc, out] = test::runShell(test::tritonforgeBinary().string() + " db --db " + path.string() + " list --json");
    EXPECT_NE(out.find("\"status\": \"running\""), std::string::npos) << out;
  }
  ::kill(other, SIGKILL);
  waitpid(other, nullptr, 0);
  auto db = ResultsDb::open(path);
  EXPECT_FALSE(db->isLive(id));
  auto dead = db->lastUnfinishedRun("t1", env);
  ASSERT_TRUE(dead.has_value());
  EXPECT_EQ(dead->id, id);
  auto [rc, out] = test::runShell(test::tritonforgeBinary().string() + " db --db " + path.string() + " list --json");
  EXPECT_NE(out.find("\"status\": \"unfinished\""), std::string::npos) << out;
}

}  // namespace
}  // namespace tf

// The results database: rows keyed by everything that determines a measurement, runs
// that stay unfinished when killed, traces in order, and files it must refuse.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <set>

#include "store/results_db.h"
#include "support/test_support.h"
#include "util/build_info.h"
#include "util/error.h"
#include "util/hash.h"

namespace tf {
namespace {

MeasureEnv env(const std::string& gpu, const std::string& driver, const std::string& triton, int protocol) {
  MeasureEnv e;
  e.gpu = gpu;
  e.driver = driver;
  e.triton = triton;
  e.worker_protocol = protocol;
  return e;
}

MeasureEnv h200() { return env("NVIDIA H200", "580.159.04", "3.6.0", 1); }

MeasurementKey key(const std::string& variant, const std::string& case_key, MeasureEnv env = h200()) {
  return {"task1", "base1", variant, R"({"k.BLOCK":128})", case_key, env};
}

TEST(ResultsDb, StoresAndFindsMeasurementsByVariantAndEnvironment) {
  auto dir = test::tempDir("db");
  auto db = ResultsDb::open(dir / "r.sqlite");
  RunInfo info;
  info.task_name = "add";
  info.task_hash = "task1";
  info.env = h200();
  int64_t run = db->beginRun(info);
  db->putMeasurement(key("v1", R"({"N":1})"), "ok", 0.5, {{"status", "ok"}}, run);
  db->putMeasurement(key("v1", R"({"N":2})"), "ok", 0.7, {{"status", "ok"}}, run);
  db->putMeasurement(key("v2", "*"), "compile-error", std::nullopt, {{"message", "no"}}, run);
  auto v1 = db->measurementsOfVariant("task1", "v1", h200());
  ASSERT_EQ(v1.size(), 2u);
  EXPECT_EQ(v1[0].key.case_key, R"({"N":1})");
  EXPECT_DOUBLE_EQ(*v1[0].time_ms, 0.5);
  EXPECT_EQ(v1[0].run_id, run);
  EXPECT_EQ(v1[0].tool_version, TRITONFORGE_VERSION);
  EXPECT_EQ(v1[0].tool_commit, toolCommit());
  EXPECT_EQ(v1[0].key.env.worker_protocol, 1);
  auto v2 = db->measurementsOfVariant("task1", "v2", h200());
  ASSERT_EQ(v2.size(), 1u);
  EXPECT_FALSE(v2[0].time_ms.has_value());
  EXPECT_EQ(v2[0].data["message"], "no");
  // Another driver, GPU, Triton or protocol is another measurement.
  for (MeasureEnv other : {env("NVIDIA H200", "575.0", "3.6.0", 1), env("NVIDIA H100", "580.159.04", "3.6.0", 1),
                           env("NVIDIA H200", "580.159.04", "3.5.0", 1), env("NVIDIA H200", "580.159.04", "3.6.0", 2)}) {
    EXPECT_TRUE(db->measurementsOfVariant("task1", "v1", other).empty()) << other.gpu << other.driver << other.triton;
  }
  EXPECT_TRUE(db->measurementsOfVariant("task2", "v1", h200()).empty());
  EXPECT_EQ(db->measurementsFor("task1", "base1", h200()).size(), 3u);
  EXPECT_TRUE(db->measurementsFor("task1", "base2", h200()).empty());
}

TEST(ResultsDb, TheSameKeyIsReplacedNotDuplicated) {
  auto dir = test::tempDir("db");
  auto db = ResultsDb::open(dir / "r.sqlite");
  db->putMeasurement(key("v1", "c"), "ok", 0.5, {}, 0);
  db->putMeasurement(key("v1", "c"), "ok", 0.4, {}, 0);
  auto rows = db->measurementsOfVariant("task1", "v1", h200());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(*rows[0].time_ms, 0.4);
}

TEST(ResultsDb, RunsStayUnfinishedUntilFinishedAndSurviveReopening) {
  auto dir = test::tempDir("db");
  int64_t a = 0, b = 0;
  {
    auto db = ResultsDb::open(dir / "r.sqlite");
    RunInfo info;
    info.task_name = "add";
    info.task_hash = "task1";
    info.env = h200();
    info.seed = 7;
    a = db->beginRun(info);
    db->appendTrace(a, 0, 0.1, "run", {{"x", 1}});
    db->appendTrace(a, 1, 0.2, "baseline", {{"y", 2}});
    info.resumed_from = a;
    b = db->beginRun(info);
    db->finishRun(b, "done", {{"speedup", 2.0}});
  }
  auto db = ResultsDb::open(dir / "r.sqlite");
  auto unfinished = db->lastUnfinishedRun("task1", h200());
  ASSERT_TRUE(unfinished.has_value());
  EXPECT_EQ(unfinished->id, a);
  EXPECT_TRUE(unfinished->finished_at.empty());
  EXPECT_EQ(unfinished->info.seed, 7u);
  EXPECT_EQ(unfinished->trace_events, 2);
  EXPECT_FALSE(db->lastUnfinishedRun("task1", env("other", "", "", 1)).has_value());
  auto done = db->run(b);
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->status, "done");
  EXPECT_EQ(*done->info.resumed_from, a);
  EXPECT_DOUBLE_EQ(done->summary["speedup"].get<double>(), 2.0);
  auto trace = db->trace(a);
  ASSERT_EQ(trace.size(), 2u);
  EXPECT_EQ(trace[0].kind, "run");
  EXPECT_EQ(trace[1].data["y"], 2);
  auto runs = db->runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].id, b);  // newest first
}

TEST(ResultsDb, RefusesANewerSchemaAndAPathItCannotCreate) {
  auto dir = test::tempDir("db");
  { ResultsDb::open(dir / "r.sqlite"); }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open((dir / "r.sqlite").c_str(), &raw), SQLITE_OK);
  sqlite3_exec(raw, "UPDATE meta SET value = '99' WHERE key = 'schema'", nullptr, nullptr, nullptr);
  sqlite3_close(raw);
  try {
    ResultsDb::open(dir / "r.sqlite");
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("schema 99"), std::string::npos) << e.what();
  }
  test::writeFile(dir / "file", "x");
  EXPECT_THROW(ResultsDb::open(dir / "file" / "r.sqlite"), UserError);
}

// Every field of the environment, none left at its default.
MeasureEnv fullEnv() {
  MeasureEnv e;
  e.gpu = "NVIDIA H200";
  e.driver = "580.159.04";
  e.triton = "3.6.0";
  e.worker_protocol = 1;
  e.tool_version = "0.1.0";
  e.torch = "2.9.1+cu128";
  e.cuda = "12.8";
  e.timing = R"({"budget_ms":250,"flush":true,"max_reps":2000,"method":"auto","min_reps":10})";
  return e;
}

TEST(ResultsDb, AMeasurementIsReusedOnlyWhenEveryFieldOfTheEnvironmentAgrees) {
  auto dir = test::tempDir("db");
  auto db = ResultsDb::open(dir / "r.sqlite");
  RunInfo info;
  info.task_hash = "task1";
  info.env = fullEnv();
  int64_t run = db->beginRun(info);
  db->putMeasurement(key("v1", "c", fullEnv()), "ok", 0.5, {}, run);
  auto found = [&](const MeasureEnv& env) {
    return db->measurementsOfVariant("task1", "v1", env).size() + db->measurementsFor("task1", "base1", env).size() +
           db->unfinishedRuns("task1", env).size();
  };
  // All agree: the row is found by variant, by base, and its run among the unfinished ones
  // (live here, so not one to resume: lastUnfinishedRun skips it; ResultsDbRuns tests that).
  EXPECT_EQ(found(fullEnv()), 3u);
  auto rows = db->measurementsOfVariant("task1", "v1", fullEnv());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].key.env.key(), fullEnv().key());
  EXPECT_EQ(rows[0].tool_version, "0.1.0");
  // One field differs: nothing is found.
  MeasureEnv e = fullEnv();
  e.gpu = "NVIDIA H100";
  EXPECT_EQ(found(e), 0u) << "gpu";
  e = fullEnv();
  e.driver = "575.57.08";
  EXPECT_EQ(found(e), 0u) << "driver";
  e = fullEnv();
  e.triton = "3.5.1";
  EXPECT_EQ(found(e), 0u) << "triton";
  e = fullEnv();
  e.worker_protocol = 2;
  EXPECT_EQ(found(e), 0u) << "worker protocol";
  e = fullEnv();
  e.tool_version = "0.2.0";
  EXPECT_EQ(found(e), 0u) << "tritonforge version";
  e = fullEnv();
  e.torch = "2.8.0+cu128";
  EXPECT_EQ(found(e), 0u) << "torch";
  e = fullEnv();
  e.cuda = "12.9";
  EXPECT_EQ(found(e), 0u) << "CUDA runtime";
  e = fullEnv();
  e.timing = R"({"budget_ms":100,"flush":true,"max_reps":2000,"method":"auto","min_reps":10})";
  EXPECT_EQ(found(e), 0u) << "timing settings";
  // The same key in another environment is another row, not a replacement.
  db->putMeasurement(key("v1", "c", e), "ok", 0.7, {}, run);
  ASSERT_EQ(db->measurementsOfVariant("task1", "v1", fullEnv()).size(), 1u);
  EXPECT_DOUBLE_EQ(*db->measurementsOfVariant("task1", "v1", fullEnv())[0].time_ms, 0.5);
}

TEST(ResultsDb, MeasureEnvOfTakesEveryFieldFromTheHelloAndTheTimingSettings) {
  nlohmann::json hello = {{"protocol", 1},       {"triton", "3.6.0"}, {"torch", "2.9.1+cu128"},
                          {"cuda_runtime", "12.8"}, {"gpu", {{"name", "NVIDIA H200"}, {"driver", "580.159.04"}}}};
  nlohmann::json timing = {{"budget_ms", 250.0}, {"min_reps", 10}, {"max_reps", 2000}, {"flush", true}, {"method", "auto"}};
  MeasureEnv env = measureEnvOf(hello, timing);
  EXPECT_EQ(env.gpu, "NVIDIA H200");
  EXPECT_EQ(env.driver, "580.159.04");
  EXPECT_EQ(env.triton, "3.6.0");
  EXPECT_EQ(env.worker_protocol, 1);
  EXPECT_EQ(env.tool_version, TRITONFORGE_VERSION);
  EXPECT_EQ(env.torch, "2.9.1+cu128");
  EXPECT_EQ(env.cuda, "12.8");
  EXPECT_EQ(env.timing, R"({"budget_ms":250,"flush":true,"max_reps":2000,"method":"auto","min_reps":10})");
  // The same settings written differently are the same environment; other settings are not.
  nlohmann::json same = {{"method", "auto"}, {"flush", true}, {"max_reps", 2000}, {"min_reps", 10.0}, {"budget_ms", 250}};
  EXPECT_EQ(measureEnvOf(hello, same).key(), env.key());
  nlohmann::json other = timing;
  other["flush"] = false;
  EXPECT_NE(measureEnvOf(hello, other).key(), env.key());
  // A worker without torch (null fields) gives empty fields, not an exception.
  nlohmann::json bare = {{"protocol", 1}, {"triton", nullptr}, {"torch", nullptr}, {"gpu", nullptr}};
  MeasureEnv b = measureEnvOf(bare, timing);
  EXPECT_EQ(b.gpu, "");
  EXPECT_EQ(b.torch, "");
  EXPECT_EQ(b.cuda, "");
}

// The schema tritonforge wrote before the environment had torch, CUDA, the tool version and
// the timing settings in its key (copied from schema 1).
const char* kSchema1 = R"sql(
PRAGMA journal_mode=WAL;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (id INTEGER PRIMARY KEY, started_at TEXT NOT NULL, finished_at TEXT, status TEXT NOT NULL,
  task_name TEXT NOT NULL, task_path TEXT NOT NULL, task_hash TEXT NOT NULL, source_hash TEXT NOT NULL,
  gpu TEXT NOT NULL, driver TEXT NOT NULL, triton TEXT NOT NULL, worker_protocol INTEGER NOT NULL,
  tool_version TEXT NOT NULL, strategy TEXT NOT NULL, seed INTEGER NOT NULL, options TEXT NOT NULL,
  resumed_from INTEGER, summary TEXT);
CREATE TABLE measurements (id INTEGER PRIMARY KEY, task_hash TEXT NOT NULL, base_hash TEXT NOT NULL,
  variant_hash TEXT NOT NULL, params TEXT NOT NULL, case_key TEXT NOT NULL, gpu TEXT NOT NULL, driver TEXT NOT NULL,
  triton TEXT NOT NULL, worker_protocol INTEGER NOT NULL, tool_version TEXT NOT NULL, status TEXT NOT NULL,
  time_ms REAL, data TEXT NOT NULL, run_id INTEGER, created_at TEXT NOT NULL,
  UNIQUE (task_hash, base_hash, variant_hash, params, case_key, gpu, driver, triton, worker_protocol));
CREATE TABLE trace (run_id INTEGER NOT NULL, seq INTEGER NOT NULL, t REAL NOT NULL, kind TEXT NOT NULL,
  data TEXT NOT NULL, PRIMARY KEY (run_id, seq));
INSERT INTO meta VALUES ('schema', '1');
INSERT INTO runs VALUES (1, '2026-11-01T00:00:00Z', NULL, 'running', 'add', '/t/task.toml', 'task1', 's1',
  'NVIDIA H200', '580.159.04', '3.6.0', 1, '0.1.0', 'auto', 0, '{}', NULL, NULL);
INSERT INTO measurements VALUES (1, 'task1', 'base1', 'v1', '{"k.BLOCK":128}', 'c', 'NVIDIA H200', '580.159.04',
  '3.6.0', 1, '0.1.0', 'ok', 0.5, '{}', 1, '2026-11-01T00:00:01Z');
)sql";

std::string fileHash(const std::filesystem::path& p) { return hashHex(test::readFile(p)); }

std::set<std::string> filesIn(const std::filesystem::path& dir) {
  std::set<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

TEST(ResultsDb, ASchema1DatabaseIsListedAsItIsAndItsRowsAreNeverReused) {
  auto dir = test::tempDir("db");
  auto path = dir / "old.sqlite";
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, kSchema1, nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  // Read-only: listed and exported, the file untouched.
  std::string before = fileHash(path);
  {
    auto db = ResultsDb::open(path, DbAccess::kReadOnly);
    EXPECT_EQ(db->schema(), 1);
    auto runs = db->runs();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].info.task_name, "add");
    EXPECT_EQ(runs[0].measurements, 1);
    ASSERT_EQ(db->measurementsOfRun(0).size(), 1u);
    EXPECT_EQ(db->measurementsOfRun(0)[0].key.env.gpu, "NVIDIA H200");
    EXPECT_TRUE(db->measurementsOfVariant("task1", "v1", h200()).empty());
  }
  EXPECT_EQ(fileHash(path), before);
  // Read-write: migrated; the old row is kept and listed, but matches no environment,
  // not even one that agrees on every field schema 1 had.
  auto db = ResultsDb::open(path);
  EXPECT_EQ(db->schema(), kResultsDbSchema);
  ASSERT_EQ(db->measurementsOfRun(0).size(), 1u);
  EXPECT_EQ(db->measurementsOfRun(0)[0].tool_commit, "");
  EXPECT_DOUBLE_EQ(*db->measurementsOfRun(0)[0].time_ms, 0.5);
  ASSERT_EQ(db->runs().size(), 1u);
  EXPECT_EQ(db->runs()[0].measurements, 1);
  MeasureEnv old = h200();
  old.tool_version = "0.1.0";
  EXPECT_TRUE(db->measurementsOfVariant("task1", "v1", old).empty());
  EXPECT_TRUE(db->measurementsFor("task1", "base1", old).empty());
  EXPECT_FALSE(db->lastUnfinishedRun("task1", old).has_value());
  // New rows under the same task, variant and case are stored beside the old one.
  db->putMeasurement(key("v1", "c", old), "ok", 0.4, {}, 0);
  ASSERT_EQ(db->measurementsOfVariant("task1", "v1", old).size(), 1u);
  EXPECT_EQ(db->measurementsOfRun(0).size(), 2u);
}

// Schema 2: the environment as now, without the commit of the tritonforge that wrote a row.
const char* kSchema2 = R"sql(
PRAGMA journal_mode=WAL;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (id INTEGER PRIMARY KEY, started_at TEXT NOT NULL, finished_at TEXT, status TEXT NOT NULL,
  task_name TEXT NOT NULL, task_path TEXT NOT NULL, task_hash TEXT NOT NULL, source_hash TEXT NOT NULL,
  gpu TEXT NOT NULL, driver TEXT NOT NULL, triton TEXT NOT NULL, worker_protocol INTEGER NOT NULL,
  tool_version TEXT NOT NULL, strategy TEXT NOT NULL, seed INTEGER NOT NULL, options TEXT NOT NULL,
  resumed_from INTEGER, summary TEXT, torch TEXT, cuda TEXT, timing TEXT, env_key TEXT);
CREATE TABLE measurements (id INTEGER PRIMARY KEY, task_hash TEXT NOT NULL, base_hash TEXT NOT NULL,
  variant_hash TEXT NOT NULL, params TEXT NOT NULL, case_key TEXT NOT NULL, gpu TEXT NOT NULL, driver TEXT NOT NULL,
  triton TEXT NOT NULL, worker_protocol INTEGER NOT NULL, tool_version TEXT NOT NULL, status TEXT NOT NULL,
  time_ms REAL, data TEXT NOT NULL, run_id INTEGER, created_at TEXT NOT NULL, torch TEXT, cuda TEXT, timing TEXT,
  env_key TEXT, UNIQUE (task_hash, base_hash, variant_hash, params, case_key, env_key));
CREATE TABLE trace (run_id INTEGER NOT NULL, seq INTEGER NOT NULL, t REAL NOT NULL, kind TEXT NOT NULL,
  data TEXT NOT NULL, PRIMARY KEY (run_id, seq));
INSERT INTO meta VALUES ('schema', '2');
)sql";

TEST(ResultsDb, ASchema2DatabaseGetsTheCommitColumnAndItsRowsAreStillReused) {
  auto dir = test::tempDir("db");
  auto path = dir / "v2.sqlite";
  MeasureEnv e = h200();
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, kSchema2, nullptr, nullptr, nullptr), SQLITE_OK);
  // One run and one measurement in the environment of today's key (what schema 2 wrote).
  std::string rows = fmt::format(
      "INSERT INTO runs VALUES (1, '2026-11-01T00:00:00Z', '2026-11-01T00:01:00Z', 'done', 'add', '/t/task.toml', "
      "'task1', 's1', '{0}', '{1}', '{2}', {3}, '{4}', 'auto', 0, '{{}}', NULL, NULL, '', '', '', '{5}');"
      "INSERT INTO measurements VALUES (1, 'task1', 'base1', 'v1', '{{\"k.BLOCK\":128}}', 'c', '{0}', '{1}', '{2}', "
      "{3}, '{4}', 'ok', 0.5, '{{}}', 1, '2026-11-01T00:00:01Z', '', '', '', '{5}');",
      e.gpu, e.driver, e.triton, e.worker_protocol, e.tool_version, e.key());
  ASSERT_EQ(sqlite3_exec(raw, rows.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(raw);
  sqlite3_close(raw);
  std::string before = fileHash(path);
  {
    auto db = ResultsDb::open(path, DbAccess::kReadOnly);
    EXPECT_EQ(db->schema(), 2);
    ASSERT_EQ(db->runs().size(), 1u);
    EXPECT_EQ(db->runs()[0].tool_commit, "");
    ASSERT_EQ(db->measurementsOfVariant("task1", "v1", e).size(), 1u);
  }
  EXPECT_EQ(fileHash(path), before);
  auto db = ResultsDb::open(path);
  EXPECT_EQ(db->schema(), 3);
  // The commit is provenance, not part of the key: the old row is still found.
  auto old = db->measurementsOfVariant("task1", "v1", e);
  ASSERT_EQ(old.size(), 1u);
  EXPECT_EQ(old[0].tool_commit, "");
  // New rows carry this binary's commit.
  RunInfo info;
  info.task_name = "add";
  info.task_hash = "task1";
  info.env = e;
  int64_t run = db->beginRun(info);
  db->putMeasurement(key("v2", "c", e), "ok", 0.4, {}, run);
  EXPECT_EQ(db->run(run)->tool_commit, toolCommit());
  EXPECT_EQ(db->run(1)->tool_commit, "");
  ASSERT_EQ(db->measurementsOfVariant("task1", "v2", e).size(), 1u);
  EXPECT_EQ(db->measurementsOfVariant("task1", "v2", e)[0].tool_commit, toolCommit());
  db.reset();
  // Opened again: already schema 3, nothing to migrate.
  EXPECT_EQ(ResultsDb::open(path)->schema(), 3);
}

void expectRefused(const std::filesystem::path& path, DbAccess access) {
  std::string before = fileHash(path);
  std::set<std::string> files = filesIn(path.parent_path());
  try {
    ResultsDb::open(path, access);
    ADD_FAILURE() << "expected a UserError for " << path;
  } catch (const UserError& e) {
    std::string m = e.what();
    EXPECT_EQ(m.rfind(path.string() + ": not a tritonforge results database", 0), 0u) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  EXPECT_EQ(fileHash(path), before) << path;
  EXPECT_EQ(filesIn(path.parent_path()), files) << "no journal or WAL file beside " << path;
}

TEST(ResultsDb, AForeignSqliteFileIsRefusedUntouched) {
  auto dir = test::tempDir("db");
  auto path = dir / "other.sqlite";
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE t (x); INSERT INTO t VALUES (1);", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  expectRefused(path, DbAccess::kReadWrite);
  expectRefused(path, DbAccess::kReadOnly);
}

TEST(ResultsDb, ANonSqliteFileIsRefusedUntouched) {
  auto dir = test::tempDir("db");
  auto path = dir / "random.bin";
  std::string bytes;
  for (int i = 0; i < 4096; ++i) bytes.push_back(static_cast<char>((i * 7919 + 13) % 251));
  test::writeFile(path, bytes);
  expectRefused(path, DbAccess::kReadWrite);
  expectRefused(path, DbAccess::kReadOnly);
  test::writeFile(dir / "short.txt", "SQLite");
  expectRefused(dir / "short.txt", DbAccess::kReadWrite);
}

TEST(ResultsDb, ReadOnlyNeverCreatesAFileAndReadWriteCreatesAnEmptyOne) {
  auto dir = test::tempDir("db");
  EXPECT_THROW(ResultsDb::open(dir / "missing.sqlite", DbAccess::kReadOnly), UserError);
  EXPECT_FALSE(std::filesystem::exists(dir / "missing.sqlite"));
  test::writeFile(dir / "empty.sqlite", "");
  EXPECT_THROW(ResultsDb::open(dir / "empty.sqlite", DbAccess::kReadOnly), UserError);
  EXPECT_EQ(std::filesystem::file_size(dir / "empty.sqlite"), 0u);
  auto db = ResultsDb::open(dir / "empty.sqlite");
  EXPECT_EQ(db->schema(), kResultsDbSchema);
  db->putMeasurement(key("v1", "c"), "ok", 0.5, {}, 0);
  EXPECT_EQ(db->measurementsOfVariant("task1", "v1", h200()).size(), 1u);
}

TEST(ResultsDb, ReadingOnlyLeavesTheDirectoryAsItWasAndSeesWhatAWriterHolds) {
  auto dir = test::tempDir("db");
  auto path = dir / "r.sqlite";
  {
    auto db = ResultsDb::open(path);
    db->putMeasurement(key("v1", "c"), "ok", 0.5, {}, 0);
  }
  // Closed: no -wal or -shm file, and reading creates none.
  std::set<std::string> files = filesIn(dir);
  std::string before = fileHash(path);
  {
    auto db = ResultsDb::open(path, DbAccess::kReadOnly);
    EXPECT_EQ(db->measurementsOfRun(0).size(), 1u);
  }
  EXPECT_EQ(filesIn(dir), files);
  EXPECT_EQ(fileHash(path), before);
  // A writer holds rows in its WAL file: a reader sees them.
  auto writer = ResultsDb::open(path);
  writer->putMeasurement(key("v2", "c"), "ok", 0.6, {}, 0);
  auto reader = ResultsDb::open(path, DbAccess::kReadOnly);
  EXPECT_EQ(reader->measurementsOfRun(0).size(), 2u);
}

TEST(ResultsDb, DefaultPathIsInTheUserCache) {
  setenv("TRITONFORGE_CACHE_DIR", "/tmp/tf-cache-test", 1);
  EXPECT_EQ(ResultsDb::defaultPath(), std::filesystem::path("/tmp/tf-cache-test/results.sqlite"));
  unsetenv("TRITONFORGE_CACHE_DIR");
}

}  // namespace
}  // namespace tf

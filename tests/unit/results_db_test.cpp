// The results database: rows keyed by everything that determines a measurement, runs
// that stay unfinished when killed, traces in order, and files it must refuse.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "store/results_db.h"
#include "support/test_support.h"
#include "util/error.h"

namespace tf {
namespace {

MeasureEnv h200() { return {"NVIDIA H200", "580.159.04", "3.6.0", 1}; }

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
  EXPECT_EQ(v1[0].key.env.worker_protocol, 1);
  auto v2 = db->measurementsOfVariant("task1", "v2", h200());
  ASSERT_EQ(v2.size(), 1u);
  EXPECT_FALSE(v2[0].time_ms.has_value());
  EXPECT_EQ(v2[0].data["message"], "no");
  // Another driver, GPU, Triton or protocol is another measurement.
  for (MeasureEnv other : {MeasureEnv{"NVIDIA H200", "575.0", "3.6.0", 1}, MeasureEnv{"NVIDIA H100", "580.159.04", "3.6.0", 1},
                           MeasureEnv{"NVIDIA H200", "580.159.04", "3.5.0", 1}, MeasureEnv{"NVIDIA H200", "580.159.04", "3.6.0", 2}}) {
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
  EXPECT_FALSE(db->lastUnfinishedRun("task1", MeasureEnv{"other", "", "", 1}).has_value());
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

TEST(ResultsDb, DefaultPathIsInTheUserCache) {
  setenv("TRITONFORGE_CACHE_DIR", "/tmp/tf-cache-test", 1);
  EXPECT_EQ(ResultsDb::defaultPath(), std::filesystem::path("/tmp/tf-cache-test/results.sqlite"));
  unsetenv("TRITONFORGE_CACHE_DIR");
}

}  // namespace
}  // namespace tf

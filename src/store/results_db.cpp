#include "store/results_db.h"

#include <fmt/format.h>

#include <ctime>

#include "store/sqlite.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/paths.h"

namespace tf {
namespace fs = std::filesystem;

namespace {

const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  status TEXT NOT NULL,
  task_name TEXT NOT NULL,
  task_path TEXT NOT NULL,
  task_hash TEXT NOT NULL,
  source_hash TEXT NOT NULL,
  gpu TEXT NOT NULL,
  driver TEXT NOT NULL,
  triton TEXT NOT NULL,
  worker_protocol INTEGER NOT NULL,
  tool_version TEXT NOT NULL,
  strategy TEXT NOT NULL,
  seed INTEGER NOT NULL,
  options TEXT NOT NULL,
  resumed_from INTEGER,
  summary TEXT
);
CREATE TABLE IF NOT EXISTS measurements (
  id INTEGER PRIMARY KEY,
  task_hash TEXT NOT NULL,
  base_hash TEXT NOT NULL,
  variant_hash TEXT NOT NULL,
  params TEXT NOT NULL,
  case_key TEXT NOT NULL,
  gpu TEXT NOT NULL,
  driver TEXT NOT NULL,
  triton TEXT NOT NULL,
  worker_protocol INTEGER NOT NULL,
  tool_version TEXT NOT NULL,
  status TEXT NOT NULL,
  time_ms REAL,
  data TEXT NOT NULL,
  run_id INTEGER,
  created_at TEXT NOT NULL,
  UNIQUE (task_hash, base_hash, variant_hash, params, case_key, gpu, driver, triton, worker_protocol)
);
CREATE INDEX IF NOT EXISTS measurements_by_variant
  ON measurements (task_hash, variant_hash, gpu, driver, triton, worker_protocol);
CREATE INDEX IF NOT EXISTS measurements_by_base
  ON measurements (task_hash, base_hash, gpu, driver, triton, worker_protocol);
CREATE INDEX IF NOT EXISTS measurements_by_run ON measurements (run_id);
CREATE TABLE IF NOT EXISTS trace (
  run_id INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  t REAL NOT NULL,
  kind TEXT NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
);
)sql";

nlohmann::json parseJson(const std::string& text) {
  if (text.empty()) return nullptr;
  return nlohmann::json::parse(text, nullptr, false);
}

const char* kMeasurementColumns =
    "id, task_hash, base_hash, variant_hash, params, case_key, gpu, driver, triton, worker_protocol, "
    "tool_version, status, time_ms, data, run_id, created_at";

MeasurementRow readMeasurement(const SqliteStatement& s) {
  MeasurementRow r;
  r.id = s.integer(0);
  r.key.task_hash = s.text(1);
  r.key.base_hash = s.text(2);
  r.key.variant_hash = s.text(3);
  r.key.params = s.text(4);
  r.key.case_key = s.text(5);
  r.key.env.gpu = s.text(6);
  r.key.env.driver = s.text(7);
  r.key.env.triton = s.text(8);
  r.key.env.worker_protocol = static_cast<int>(s.integer(9));
  r.tool_version = s.text(10);
  r.status = s.text(11);
  r.time_ms = s.optReal(12);
  r.data = parseJson(s.text(13));
  r.run_id = s.integer(14);
  r.created_at = s.text(15);
  return r;
}

const char* kRunColumns =
    "id, started_at, finished_at, status, task_name, task_path, task_hash, source_hash, gpu, driver, triton, "
    "worker_protocol, tool_version, strategy, seed, options, resumed_from, summary, "
    "(SELECT COUNT(*) FROM measurements m WHERE m.run_id = runs.id), "
    "(SELECT COUNT(*) FROM trace t WHERE t.run_id = runs.id)";

RunRow readRun(const SqliteStatement& s) {
  RunRow r;
  r.id = s.integer(0);
  r.started_at = s.text(1);
  r.finished_at = s.text(2);
  r.status = s.text(3);
  r.info.task_name = s.text(4);
  r.info.task_path = s.text(5);
  r.info.task_hash = s.text(6);
  r.info.source_hash = s.text(7);
  r.info.env.gpu = s.text(8);
  r.info.env.driver = s.text(9);
  r.info.env.triton = s.text(10);
  r.info.env.worker_protocol = static_cast<int>(s.integer(11));
  r.tool_version = s.text(12);
  r.info.strategy = s.text(13);
  r.info.seed = static_cast<uint64_t>(s.integer(14));
  r.info.options = parseJson(s.text(15));
  if (!s.isNull(16)) r.info.resumed_from = s.integer(16);
  r.summary = parseJson(s.text(17));
  r.measurements = s.integer(18);
  r.trace_events = s.integer(19);
  return r;
}

void bindEnv(SqliteStatement& s, int first, const MeasureEnv& env) {
  s.bind(first, env.gpu).bind(first + 1, env.driver).bind(first + 2, env.triton);
  s.bind(first + 3, static_cast<int64_t>(env.worker_protocol));
}

}  // namespace

fs::path ResultsDb::defaultPath() { return userCacheDir() / "results.sqlite"; }

ResultsDb::ResultsDb(std::unique_ptr<SqliteDb> db) : db_(std::move(db)) {}
ResultsDb::~ResultsDb() = default;

const fs::path& ResultsDb::path() const { return db_->path(); }

std::unique_ptr<ResultsDb> ResultsDb::open(const fs::path& path) {
  auto db = std::make_unique<SqliteDb>(path);
  // WAL: a commit is durable once written to the log, which a killed process cannot undo;
  // NORMAL skips the fsync per commit (only a power loss could drop the last commits).
  db->exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;");
  {
    SqliteTransaction tx(*db);
    db->exec(kSchema);
    SqliteStatement get(*db, "SELECT value FROM meta WHERE key = 'schema'");
    if (get.step()) {
      int v = std::atoi(get.text(0).c_str());
      if (v > kResultsDbSchema) {
        throw UserError(fmt::format("{}: the results database has schema {}, newer than this tritonforge ({}); "
                                    "use another --db",
                                    path.string(), v, kResultsDbSchema));
      }
    } else {
      SqliteStatement put(*db, "INSERT INTO meta (key, value) VALUES ('schema', ?1)");
      put.bind(1, std::to_string(kResultsDbSchema)).run();
    }
    tx.commit();
  }
  return std::unique_ptr<ResultsDb>(new ResultsDb(std::move(db)));
}

void ResultsDb::putMeasurement(const MeasurementKey& key, const std::string& status, std::optional<double> time_ms,
                               const nlohmann::json& data, int64_t run_id) {
  SqliteStatement s(*db_,
                    "INSERT OR REPLACE INTO measurements (task_hash, base_hash, variant_hash, params, case_key, gpu, "
                    "driver, triton, worker_protocol, tool_version, status, time_ms, data, run_id, created_at) "
                    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)");
  s.bind(1, key.task_hash).bind(2, key.base_hash).bind(3, key.variant_hash).bind(4, key.params);
  s.bind(5, key.case_key);
  bindEnv(s, 6, key.env);
  s.bind(10, std::string(TRITONFORGE_VERSION)).bind(11, status).bind(12, time_ms).bind(13, data.dump());
  if (run_id > 0) s.bind(14, run_id);
  else s.bindNull(14);
  s.bind(15, utcTimestamp());
  s.run();
}

std::vector<MeasurementRow> ResultsDb::measurementsOfVariant(const std::string& task_hash,
                                                             const std::string& variant_hash, const MeasureEnv& env) {
  SqliteStatement s(*db_, fmt::format("SELECT {} FROM measurements WHERE task_hash = ?1 AND variant_hash = ?2 AND "
                                      "gpu = ?3 AND driver = ?4 AND triton = ?5 AND worker_protocol = ?6 ORDER BY id",
                                      kMeasurementColumns));
  s.bind(1, task_hash).bind(2, variant_hash);
  bindEnv(s, 3, env);
  std::vector<MeasurementRow> out;
  while (s.step()) out.push_back(readMeasurement(s));
  return out;
}

std::vector<MeasurementRow> ResultsDb::measurementsFor(const std::string& task_hash, const std::string& base_hash,
                                                       const MeasureEnv& env) {
  SqliteStatement s(*db_, fmt::format("SELECT {} FROM measurements WHERE task_hash = ?1 AND base_hash = ?2 AND "
                                      "gpu = ?3 AND driver = ?4 AND triton = ?5 AND worker_protocol = ?6 ORDER BY id",
                                      kMeasurementColumns));
  s.bind(1, task_hash).bind(2, base_hash);
  bindEnv(s, 3, env);
  std::vector<MeasurementRow> out;
  while (s.step()) out.push_back(readMeasurement(s));
  return out;
}

std::vector<MeasurementRow> ResultsDb::measurementsOfRun(int64_t run_id) {
  std::string where = run_id > 0 ? "WHERE run_id = ?1 " : "";
  SqliteStatement s(*db_, fmt::format("SELECT {} FROM measurements {}ORDER BY id", kMeasurementColumns, where));
  if (run_id > 0) s.bind(1, run_id);
  std::vector<MeasurementRow> out;
  while (s.step()) out.push_back(readMeasurement(s));
  return out;
}

int64_t ResultsDb::beginRun(const RunInfo& info) {
  SqliteStatement s(*db_,
                    "INSERT INTO runs (started_at, status, task_name, task_path, task_hash, source_hash, gpu, driver, "
                    "triton, worker_protocol, tool_version, strategy, seed, options, resumed_from) "
                    "VALUES (?1, 'running', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)");
  s.bind(1, utcTimestamp()).bind(2, info.task_name).bind(3, info.task_path).bind(4, info.task_hash);
  s.bind(5, info.source_hash);
  bindEnv(s, 6, info.env);
  s.bind(10, std::string(TRITONFORGE_VERSION)).bind(11, info.strategy);
  s.bind(12, static_cast<int64_t>(info.seed)).bind(13, info.options.dump());
  if (info.resumed_from) s.bind(14, *info.resumed_from);
  else s.bindNull(14);
  s.run();
  return db_->lastInsertId();
}

void ResultsDb::finishRun(int64_t run_id, const std::string& status, const nlohmann::json& summary) {
  SqliteStatement s(*db_, "UPDATE runs SET finished_at = ?1, status = ?2, summary = ?3 WHERE id = ?4");
  s.bind(1, utcTimestamp()).bind(2, status).bind(3, summary.dump()).bind(4, run_id);
  s.run();
}

std::optional<RunRow> ResultsDb::lastUnfinishedRun(const std::string& task_hash, const MeasureEnv& env) {
  SqliteStatement s(*db_, fmt::format("SELECT {} FROM runs WHERE task_hash = ?1 AND gpu = ?2 AND driver = ?3 AND "
                                      "triton = ?4 AND worker_protocol = ?5 AND finished_at IS NULL "
                                      "ORDER BY id DESC LIMIT 1",
                                      kRunColumns));
  s.bind(1, task_hash);
  bindEnv(s, 2, env);
  if (!s.step()) return std::nullopt;
  return readRun(s);
}

std::optional<RunRow> ResultsDb::run(int64_t run_id) {
  SqliteStatement s(*db_, fmt::format("SELECT {} FROM runs WHERE id = ?1", kRunColumns));
  s.bind(1, run_id);
  if (!s.step()) return std::nullopt;
  return readRun(s);
}

std::vector<RunRow> ResultsDb::runs(int limit) {
  SqliteStatement s(*db_, fmt::format("SELECT {} FROM runs ORDER BY id DESC LIMIT ?1", kRunColumns));
  s.bind(1, static_cast<int64_t>(limit));
  std::vector<RunRow> out;
  while (s.step()) out.push_back(readRun(s));
  return out;
}

void ResultsDb::appendTrace(int64_t run_id, int seq, double t, const std::string& kind, const nlohmann::json& data) {
  SqliteStatement s(*db_, "INSERT OR REPLACE INTO trace (run_id, seq, t, kind, data) VALUES (?1, ?2, ?3, ?4, ?5)");
  s.bind(1, run_id).bind(2, static_cast<int64_t>(seq)).bind(3, t).bind(4, kind).bind(5, data.dump());
  s.run();
}

std::vector<TraceRow> ResultsDb::trace(int64_t run_id) {
  SqliteStatement s(*db_, "SELECT run_id, seq, t, kind, data FROM trace WHERE run_id = ?1 ORDER BY seq");
  s.bind(1, run_id);
  std::vector<TraceRow> out;
  while (s.step()) {
    TraceRow r;
    r.run_id = s.integer(0);
    r.seq = static_cast<int>(s.integer(1));
    r.t = s.real(2);
    r.kind = s.text(3);
    r.data = parseJson(s.text(4));
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace tf

#include "store/results_db.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/run_lock.h"
#include "store/sqlite.h"
#include "util/build_info.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/paths.h"
#include "util/text.h"

namespace tf {
namespace fs = std::filesystem;

namespace {

// Schema 3. The measurements table is written by a function: a schema-1 file gets it under
// another name first, filled from the old table (ResultsDb::open's migration).
std::string measurementsTable(const std::string& name) {
  return fmt::format(R"sql(
CREATE TABLE IF NOT EXISTS {} (
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
  torch TEXT,
  cuda TEXT,
  timing TEXT,
  env_key TEXT,
  tool_commit TEXT,
  UNIQUE (task_hash, base_hash, variant_hash, params, case_key, env_key)
);
)sql",
                     name);
}

const char* kIndexes = R"sql(
CREATE INDEX IF NOT EXISTS measurements_by_variant ON measurements (task_hash, variant_hash, env_key);
CREATE INDEX IF NOT EXISTS measurements_by_base ON measurements (task_hash, base_hash, env_key);
CREATE INDEX IF NOT EXISTS measurements_by_run ON measurements (run_id);
)sql";

const char* kOtherTables = R"sql(
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
  summary TEXT,
  torch TEXT,
  cuda TEXT,
  timing TEXT,
  env_key TEXT,
  tool_commit TEXT
);
CREATE TABLE IF NOT EXISTS trace (
  run_id INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  t REAL NOT NULL,
  kind TEXT NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
);
)sql";

// Schema 1 -> 2, inside the caller's transaction. Old rows get NULL in the new columns:
// their key lacks torch, CUDA, the tool version and the timing settings, so they must never
// stand for a new measurement, and NULL equals nothing. The measurements table is rebuilt in
// the current layout (with schema 3's column); migrateFrom2 follows.
void migrateFrom1(SqliteDb& db) {
  db.exec("ALTER TABLE runs ADD COLUMN torch TEXT; ALTER TABLE runs ADD COLUMN cuda TEXT; "
          "ALTER TABLE runs ADD COLUMN timing TEXT; ALTER TABLE runs ADD COLUMN env_key TEXT;");
  // SQLite cannot change a UNIQUE constraint in place: a new table, the rows copied over.
  db.exec(measurementsTable("measurements_v2"));
  db.exec("INSERT INTO measurements_v2 (id, task_hash, base_hash, variant_hash, params, case_key, gpu, driver, "
          "triton, worker_protocol, tool_version, status, time_ms, data, run_id, created_at) "
          "SELECT id, task_hash, base_hash, variant_hash, params, case_key, gpu, driver, triton, worker_protocol, "
          "tool_version, status, time_ms, data, run_id, created_at FROM measurements;");
  db.exec("DROP TABLE measurements; ALTER TABLE measurements_v2 RENAME TO measurements;");
  db.exec(kIndexes);
  db.exec("UPDATE meta SET value = '2' WHERE key = 'schema';");
}

bool hasColumn(SqliteDb& db, const char* table, const char* column) {
  SqliteStatement s(db, fmt::format("SELECT 1 FROM pragma_table_info('{}') WHERE name = ?1", table));
  s.bind(1, std::string_view(column));
  return s.step();
}

// Schema 2 -> 3, inside the caller's transaction: the commit of the tritonforge that wrote a
// row (provenance, not part of the key). Old rows get NULL: their commit was not recorded.
void migrateFrom2(SqliteDb& db) {
  for (const char* table : {"runs", "measurements"}) {
    if (!hasColumn(db, table, "tool_commit")) db.exec(fmt::format("ALTER TABLE {} ADD COLUMN tool_commit TEXT;", table));
  }
  db.exec("UPDATE meta SET value = '3' WHERE key = 'schema';");
}

// "PRAGMA application_id" of the files this tool makes ("TfRs"): lets file(1) and others
// tell them apart; not relied upon, schema-1 files have none.
constexpr int kApplicationId = 0x54665273;

[[noreturn]] void notOurs(const fs::path& path, const std::string& why) {
  // `why` may quote the file's own text (its schema value).
  throw UserError(oneLine(fmt::format("{}: not a tritonforge results database ({}); it was left as it is: "
                                      "give another --db",
                                      path.string(), why)));
}

[[noreturn]] void refuseNewer(const fs::path& path, int schema) {
  throw UserError(fmt::format("{}: the results database has schema {}, newer than this tritonforge ({}); "
                              "use another --db",
                              path.string(), schema, kResultsDbSchema));
}

// Reads the first bytes without SQLite: SQLite would take any file for a database until the
// first query, and a read-write connection must never be opened on a foreign file.
void checkSqliteHeader(const fs::path& path) {
  auto head = readFileHead(path, 16);
  if (!head) throw UserError(fmt::format("{}: cannot read the results database", path.string()));
  if (*head != std::string("SQLite format 3\0", 16)) notOurs(path, "not an SQLite file");
}

// The schema of a tritonforge results database, 0 for an SQLite file without any table (as
// another tritonforge leaves it for a moment while it creates one); refuses any other file.
int schemaOf(SqliteDb& db, const fs::path& path) {
  if (!SqliteStatement(db, "SELECT 1 FROM sqlite_master").step()) return 0;
  if (!db.hasTable("meta")) notOurs(path, "an SQLite database without tritonforge's 'meta' table");
  SqliteStatement get(db, "SELECT value FROM meta WHERE key = 'schema'");
  if (!get.step()) notOurs(path, "its 'meta' table has no schema");
  std::string text = get.text(0);
  int v = std::atoi(text.c_str());
  if (v < 1 || std::to_string(v) != text) notOurs(path, fmt::format("schema '{}'", text));
  for (const char* t : {"runs", "measurements", "trace"}) {
    if (!db.hasTable(t)) notOurs(path, fmt::format("schema {} without the '{}' table", v, t));
  }
  return v;
}

nlohmann::json parseJson(const std::string& text) {
  if (text.empty()) return nullptr;
  return nlohmann::json::parse(text, nullptr, false);
}

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
  r.key.env.tool_version = r.tool_version;
  r.status = s.text(11);
  r.time_ms = s.optReal(12);
  r.data = parseJson(s.text(13));
  r.run_id = s.integer(14);
  r.created_at = s.text(15);
  r.key.env.torch = s.text(16);
  r.key.env.cuda = s.text(17);
  r.key.env.timing = s.text(18);
  r.tool_commit = s.text(19);
  return r;
}

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
  r.info.env.tool_version = r.tool_version;
  r.info.strategy = s.text(13);
  r.info.seed = static_cast<uint64_t>(s.integer(14));
  r.info.options = parseJson(s.text(15));
  if (!s.isNull(16)) r.info.resumed_from = s.integer(16);
  r.summary = parseJson(s.text(17));
  r.measurements = s.integer(18);
  r.trace_events = s.integer(19);
  r.info.env.torch = s.text(20);
  r.info.env.cuda = s.text(21);
  r.info.env.timing = s.text(22);
  r.tool_commit = s.text(23);
  return r;
}

// Binds the 8 columns gpu, driver, triton, worker_protocol, tool_version, torch, cuda, timing
// and then env_key, from parameter `first` on.
void bindEnv(SqliteStatement& s, int first, const MeasureEnv& env) {
  s.bind(first, env.gpu).bind(first + 1, env.driver).bind(first + 2, env.triton);
  s.bind(first + 3, static_cast<int64_t>(env.worker_protocol)).bind(first + 4, env.tool_version);
  s.bind(first + 5, env.torch).bind(first + 6, env.cuda).bind(first + 7, env.timing).bind(first + 8, env.key());
}

const char* kEnvColumns = "gpu, driver, triton, worker_protocol, tool_version, torch, cuda, timing, env_key";

}  // namespace

fs::path ResultsDb::defaultPath() { return userCacheDir() / "results.sqlite"; }

ResultsDb::ResultsDb(std::unique_ptr<SqliteDb> db, int schema) : db_(std::move(db)), schema_(schema) {}
// A run this object began and never finished ends with it: it is no longer going on (the
// process may live on, as a test's does).
ResultsDb::~ResultsDb() {
  for (int64_t id : live_runs_) releaseRunLock(path(), id);
}

const fs::path& ResultsDb::path() const { return db_->path(); }

std::string ResultsDb::v2(const char* column) const { return schema_ >= 2 ? column : "NULL"; }
std::string ResultsDb::v3(const char* column) const { return schema_ >= 3 ? column : "NULL"; }

std::string ResultsDb::measurementColumns() const {
  return fmt::format("id, task_hash, base_hash, variant_hash, params, case_key, gpu, driver, triton, worker_protocol, "
                     "tool_version, status, time_ms, data, run_id, created_at, {}, {}, {}, {}",
                     v2("torch"), v2("cuda"), v2("timing"), v3("tool_commit"));
}

std::string ResultsDb::runColumns() const {
  return fmt::format("id, started_at, finished_at, status, task_name, task_path, task_hash, source_hash, gpu, driver, "
                     "triton, worker_protocol, tool_version, strategy, seed, options, resumed_from, summary, "
                     "(SELECT COUNT(*) FROM measurements m WHERE m.run_id = runs.id), "
                     "(SELECT COUNT(*) FROM trace t WHERE t.run_id = runs.id), {}, {}, {}, {}",
                     v2("torch"), v2("cuda"), v2("timing"), v3("tool_commit"));
}

namespace {

// A run must be able to store what it measures: refused before anything is opened (SQLite
// would leave -wal and -shm files beside a file it then cannot write). A file with no write
// permission bit is read-only by its owner's choice, even for root, who could write it.
void checkWritable(const fs::path& path, bool exists) {
  if (exists) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && ((st.st_mode & 0222) == 0 || ::access(path.c_str(), W_OK) != 0)) {
      throw UserError(fmt::format("{}: the results database is read-only, so nothing could be stored; make it "
                                  "writable, give another --db, or --no-db",
                                  path.string()));
    }
  }
  // SQLite writes its journal files (-wal, -shm) beside the database; a missing folder is
  // created, so the nearest existing one must be writable.
  fs::path dir = fs::absolute(path).parent_path();
  std::error_code ec;
  while (!dir.empty() && !fs::exists(dir, ec) && dir != dir.parent_path()) dir = dir.parent_path();
  if (!fs::is_directory(dir, ec)) {
    throw UserError(fmt::format("{}: {} is not a folder, so the results database cannot be made there", path.string(),
                                dir.string()));
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    throw UserError(fmt::format("{}: the folder {} is not writable, and SQLite writes its journal beside the database; "
                                "give another --db, or --no-db",
                                path.string(), dir.string()));
  }
}

// An SQLite file without tables is a results database in the making (another tritonforge
// sets WAL mode, then creates the tables) only while it carries nothing else of anyone's:
// a user_version or a foreign application_id says another program made it.
void checkEmptySqlite(SqliteDb& db, const fs::path& path) {
  SqliteStatement uv(db, "PRAGMA user_version");
  int64_t user_version = uv.step() ? uv.integer(0) : 0;
  SqliteStatement app(db, "PRAGMA application_id");
  int64_t app_id = app.step() ? app.integer(0) : 0;
  if (user_version != 0) notOurs(path, fmt::format("an SQLite database without tables, with user_version {}", user_version));
  if (app_id != 0 && app_id != kApplicationId) {
    notOurs(path, fmt::format("an SQLite database without tables, with application_id {}", app_id));
  }
}

}  // namespace

void ResultsDb::checkUsable(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    checkWritable(path, false);
    return;
  }
  open(path, DbAccess::kCheckOnly);
}

std::unique_ptr<ResultsDb> ResultsDb::open(const fs::path& path, DbAccess access) {
  std::error_code ec;
  auto st = fs::status(path, ec);
  bool exists = !ec && fs::exists(st);
  if (exists && fs::is_directory(st)) {
    throw UserError(fmt::format("{}: is a directory, not a results database", path.string()));
  }
  if (exists && !fs::is_regular_file(st)) notOurs(path, "not a regular file");
  bool empty = !exists || fs::file_size(path, ec) == 0;
  if (access == DbAccess::kReadOnly) {
    if (!exists) throw UserError(fmt::format("{}: no results database there", path.string()));
    if (empty) notOurs(path, "an empty file");
  } else {
    checkWritable(path, exists);
  }
  int schema = 0;
  if (!empty) {
    // Identified through a read-only connection before anything may write.
    checkSqliteHeader(path);
    auto ro = std::make_unique<SqliteDb>(path, SqliteDb::Mode::kReadOnly);
    schema = schemaOf(*ro, path);
    if (schema == 0 && access == DbAccess::kReadOnly) notOurs(path, "an SQLite database without tables");
    if (schema == 0) checkEmptySqlite(*ro, path);
    if (schema > kResultsDbSchema) refuseNewer(path, schema);
    if (access != DbAccess::kReadWrite) return std::unique_ptr<ResultsDb>(new ResultsDb(std::move(ro), schema));
  }
  if (access == DbAccess::kCheckOnly) return nullptr;
  auto db = std::make_unique<SqliteDb>(path);
  if (sqlite3_db_readonly(db->handle(), "main") == 1) {
    throw UserError(fmt::format("{}: SQLite opened the results database read-only, so nothing could be stored; give "
                                "another --db, or --no-db",
                                path.string()));
  }
  // WAL: a commit is durable once written to the log, which a killed process cannot undo;
  // NORMAL skips the fsync per commit (only a power loss could drop the last commits).
  db->exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;");
  {
    SqliteTransaction tx(*db);
    // Another tritonforge may have created the tables since the file was looked at.
    schema = schemaOf(*db, path);
    if (schema == 0) {
      db->exec(kOtherTables);
      db->exec(measurementsTable("measurements"));
      db->exec(kIndexes);
      SqliteStatement put(*db, "INSERT INTO meta (key, value) VALUES ('schema', ?1)");
      put.bind(1, std::to_string(kResultsDbSchema)).run();
      db->exec(fmt::format("PRAGMA application_id = {}", kApplicationId));
    } else {
      if (schema > kResultsDbSchema) refuseNewer(path, schema);
      if (schema == 1) migrateFrom1(*db);
      if (schema <= 2) migrateFrom2(*db);
    }
    tx.commit();
  }
  return std::unique_ptr<ResultsDb>(new ResultsDb(std::move(db), kResultsDbSchema));
}

void ResultsDb::putMeasurement(const MeasurementKey& key, const std::string& status, std::optional<double> time_ms,
                               const nlohmann::json& data, int64_t run_id) {
  SqliteStatement s(*db_, fmt::format("INSERT OR REPLACE INTO measurements (task_hash, base_hash, variant_hash, params, "
                                      "case_key, status, time_ms, data, run_id, created_at, {}, tool_commit) VALUES (?1, "
                                      "?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, "
                                      "?20)",
                                      kEnvColumns));
  s.bind(1, key.task_hash).bind(2, key.base_hash).bind(3, key.variant_hash).bind(4, key.params);
  s.bind(5, key.case_key).bind(6, status).bind(7, time_ms).bind(8, data.dump());
  if (run_id > 0) s.bind(9, run_id);
  else s.bindNull(9);
  s.bind(10, utcTimestamp());
  bindEnv(s, 11, key.env);
  s.bind(20, std::string_view(toolCommit()));
  s.run();
}

std::vector<MeasurementRow> ResultsDb::measurementsOfVariant(const std::string& task_hash,
                                                             const std::string& variant_hash, const MeasureEnv& env) {
  SqliteStatement s(*db_, fmt::format("SELECT {} FROM measurements WHERE task_hash = ?1 AND variant_hash = ?2 AND "
                                      "{} = ?3 ORDER BY id",
                                      measurementColumns(), v2("env_key")));
  s.bind(1, task_hash).bind(2, variant_hash).bind(3, env.key());
  std::vector<MeasurementRow> out;
  while (s.step()) out.push_back(readMeasurement(s));
  return out;
}

std::vector<MeasurementRow> ResultsDb::measurementsFor(const std::string& task_hash, const std::string& base_hash,
                                                       const MeasureEnv& env) {
  SqliteStatement s(*db_, fmt::format("SELECT {} FROM measurements WHERE task_hash = ?1 AND base_hash = ?2 AND "
                                      "{} = ?3 ORDER BY id",
                                      measurementColumns(), v2("env_key")));
  s.bind(1, task_hash).bind(2, base_hash).bind(3, env.key());
  std::vector<MeasurementRow> out;
  while (s.step()) out.push_back(readMeasurement(s));
  return out;
}

std::vector<MeasurementRow> ResultsDb::measurementsOfRun(int64_t run_id) {
  std::string where = run_id > 0 ? "WHERE run_id = ?1 " : "";
  SqliteStatement s(*db_, fmt::format("SELECT {} FROM measurements {}ORDER BY id", measurementColumns(), where));
  if (run_id > 0) s.bind(1, run_id);
  std::vector<MeasurementRow> out;
  while (s.step()) out.push_back(readMeasurement(s));
  return out;
}

int64_t ResultsDb::beginRun(const RunInfo& info) {
  // The row and its lock appear together: no other process sees the run unfinished and
  // unlocked (dead) in between.
  SqliteTransaction tx(*db_);
  SqliteStatement s(*db_, fmt::format("INSERT INTO runs (started_at, status, task_name, task_path, task_hash, "
                                      "source_hash, strategy, seed, options, resumed_from, {}, tool_commit) VALUES (?1, "
                                      "'running', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
                                      "?18, ?19)",
                                      kEnvColumns));
  s.bind(1, utcTimestamp()).bind(2, info.task_name).bind(3, info.task_path).bind(4, info.task_hash);
  s.bind(5, info.source_hash).bind(6, info.strategy).bind(7, static_cast<int64_t>(info.seed));
  s.bind(8, info.options.dump());
  if (info.resumed_from) s.bind(9, *info.resumed_from);
  else s.bindNull(9);
  bindEnv(s, 10, info.env);
  s.bind(19, std::string_view(toolCommit()));
  s.run();
  int64_t id = db_->lastInsertId();
  acquireRunLock(path(), id);
  live_runs_.push_back(id);
  tx.commit();
  return id;
}

void ResultsDb::finishRun(int64_t run_id, const std::string& status, const nlohmann::json& summary) {
  SqliteStatement s(*db_, "UPDATE runs SET finished_at = ?1, status = ?2, summary = ?3 WHERE id = ?4");
  s.bind(1, utcTimestamp()).bind(2, status).bind(3, summary.dump()).bind(4, run_id);
  s.run();
  releaseRunLock(path(), run_id);
  live_runs_.erase(std::remove(live_runs_.begin(), live_runs_.end(), run_id), live_runs_.end());
}

bool ResultsDb::isLive(int64_t run_id) const { return runIsLive(path(), run_id); }

RunRow ResultsDb::readRunRow(const SqliteStatement& s) const {
  RunRow r = readRun(s);
  r.live = r.finished_at.empty() && isLive(r.id);
  return r;
}

std::vector<RunRow> ResultsDb::unfinishedRuns(const std::string& task_hash, const MeasureEnv& env) {
  SqliteStatement s(*db_, fmt::format("SELECT {} FROM runs WHERE task_hash = ?1 AND {} = ?2 AND finished_at IS NULL "
                                      "ORDER BY id DESC",
                                      runColumns(), v2("env_key")));
  s.bind(1, task_hash).bind(2, env.key());
  std::vector<RunRow> out;
  while (s.step()) out.push_back(readRunRow(s));
  return out;
}

std::optional<RunRow> ResultsDb::lastUnfinishedRun(const std::string& task_hash, const MeasureEnv& env) {
  for (auto& r : unfinishedRuns(task_hash, env)) {
    if (!r.live) return std::move(r);
  }
  return std::nullopt;
}

std::optional<RunRow> ResultsDb::run(int64_t run_id) {
  SqliteStatement s(*db_, fmt::format("SELECT {} FROM runs WHERE id = ?1", runColumns()));
  s.bind(1, run_id);
  if (!s.step()) return std::nullopt;
  return readRunRow(s);
}

std::vector<RunRow> ResultsDb::runs(int limit) {
  SqliteStatement s(*db_, fmt::format("SELECT {} FROM runs ORDER BY id DESC LIMIT ?1", runColumns()));
  s.bind(1, static_cast<int64_t>(limit));
  std::vector<RunRow> out;
  while (s.step()) out.push_back(readRunRow(s));
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

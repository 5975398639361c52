// The results database (SQLite, one file, per-user cache by default): every measurement a
// run makes, keyed by what determines it, the runs, and their decision traces.
//
//   measurements  one row per (task, base source, variant, parameters, case, environment):
//                 status, median time, the measurement as JSON, the run that made it; the
//                 environment (MeasureEnv: GPU, driver, Triton, torch, CUDA, worker protocol,
//                 tritonforge version, timing settings) in columns and as one key, env_key
//   runs          one row per `optimize`: task, environment, strategy, seed, options;
//                 finished_at stays NULL for a run that was killed
//   trace         the decisions of a run in order (docs/search.md lists the kinds)
//   meta          schema = kResultsDbSchema
//
// Every run and measurement row also records tool_commit, the git commit of the tritonforge
// that wrote it (provenance: not part of the key, so a rebuild at another commit still reuses
// the rows of the same version; a change in how measuring works bumps the version or the
// worker protocol, which are in the key).
//
// Every write commits on its own (WAL journal), so that a run killed with SIGKILL loses
// nothing it had written; the next `optimize` of the same task reuses those rows.
//
// Schema 1 keyed rows by GPU, driver, Triton and protocol only. Opening such a file for
// writing migrates it: its rows keep their columns and get a NULL env_key, which no lookup
// matches, so they are listed and exported but never reused. Schema 2 lacked tool_commit;
// its rows get NULL there and stay reusable. Opened read-only, an older file is read as it is. A file that is not a tritonforge results database is refused before anything
// is written to it.
// Entry points: ResultsDb::open, putMeasurement / measurementsFor, beginRun / finishRun,
// appendTrace. docs/search.md describes the schema.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "store/measure_env.h"

namespace tf {

class SqliteDb;
class SqliteStatement;

inline constexpr int kResultsDbSchema = 3;

enum class DbAccess {
  kReadWrite,  // creates the file when it is missing or empty; migrates an older schema
  kReadOnly,   // the file must exist; nothing is written to it
  kCheckOnly,  // as kReadWrite would check it, but nothing is created or written (open returns null)
};

struct MeasurementKey {
  std::string task_hash;     // the task as given: source, harness, launcher, check settings
  std::string base_hash;     // the source the parameters apply to (the original, or a pass's output)
  std::string variant_hash;  // the source that was measured
  std::string params;        // canonical JSON of the configuration
  std::string case_key;      // canonical JSON of the case; "*" for a failure before any case ran
  MeasureEnv env;
};

struct MeasurementRow {
  int64_t id = 0;
  MeasurementKey key;
  std::string status;                // CandidateStatus text
  std::optional<double> time_ms;     // median; empty for a failure
  nlohmann::json data;               // the measurement (or compile outcome) as JSON
  int64_t run_id = 0;
  std::string tool_version;          // key.env.tool_version
  std::string tool_commit;           // of the tritonforge that wrote the row; empty before schema 3
  std::string created_at;
};

struct RunInfo {
  std::string task_name, task_path, task_hash, source_hash;
  MeasureEnv env;
  std::string strategy;
  uint64_t seed = 0;
  nlohmann::json options = nlohmann::json::object();
  std::optional<int64_t> resumed_from;
};

struct RunRow {
  int64_t id = 0;
  RunInfo info;
  std::string started_at, finished_at;   // finished_at empty: still running, or killed
  bool live = false;                     // unfinished and its process alive (ResultsDb::isLive)
  std::string status;                    // "running", or what finishRun was given
  std::string tool_version;
  std::string tool_commit;               // of the tritonforge that began the run; empty before schema 3
  nlohmann::json summary;
  int64_t measurements = 0;              // rows this run wrote
  int64_t trace_events = 0;
};

struct TraceRow {
  int64_t run_id = 0;
  int seq = 0;
  double t = 0;                          // seconds since the run started
  std::string kind;
  nlohmann::json data;
};

class ResultsDb {
 public:
  // Opens the database (creating it with kReadWrite). Throws UserError naming the file when
  // it cannot, when the file is not a tritonforge results database (left as it was), or
  // when it was written by a newer schema.
  static std::unique_ptr<ResultsDb> open(const std::filesystem::path& path, DbAccess access = DbAccess::kReadWrite);
  // Checks, before a run, that `path` can serve it as a results database (as open with
  // kReadWrite would), creating and changing nothing. Throws UserError like open.
  static void checkUsable(const std::filesystem::path& path);
  // userCacheDir()/results.sqlite
  static std::filesystem::path defaultPath();
  ~ResultsDb();

  const std::filesystem::path& path() const;
  // The schema of the file: kResultsDbSchema, or an older one opened read-only.
  int schema() const { return schema_; }

  // --- measurements
  // Inserts or replaces the row of `key`; committed before it returns.
  void putMeasurement(const MeasurementKey& key, const std::string& status, std::optional<double> time_ms,
                      const nlohmann::json& data, int64_t run_id);
  // The rows of one variant in `env` (any parameters, any base): what reuse looks up.
  std::vector<MeasurementRow> measurementsOfVariant(const std::string& task_hash, const std::string& variant_hash,
                                                    const MeasureEnv& env);
  // Every row of a task on one base source in `env`, oldest first: what a resumed run preloads.
  std::vector<MeasurementRow> measurementsFor(const std::string& task_hash, const std::string& base_hash,
                                              const MeasureEnv& env);
  // Rows written by one run, or all rows when run_id is 0, oldest first.
  std::vector<MeasurementRow> measurementsOfRun(int64_t run_id);

  // --- runs
  // A run is live from beginRun to finishRun, or to its process's end (store/run_lock.h).
  int64_t beginRun(const RunInfo& info);
  void finishRun(int64_t run_id, const std::string& status, const nlohmann::json& summary);
  // True while the process that began the run lives and has not finished it.
  bool isLive(int64_t run_id) const;
  // The runs of the task in `env` that have not finished, newest first: live ones and those
  // whose process died (interrupted), told apart by RunRow::live.
  std::vector<RunRow> unfinishedRuns(const std::string& task_hash, const MeasureEnv& env);
  // The most recent run of the task in `env` that never finished and whose process is gone
  // (interrupted), if any; a live run is never taken for an interrupted one.
  std::optional<RunRow> lastUnfinishedRun(const std::string& task_hash, const MeasureEnv& env);
  std::optional<RunRow> run(int64_t run_id);
  std::vector<RunRow> runs(int limit = 100);

  // --- trace
  void appendTrace(int64_t run_id, int seq, double t, const std::string& kind, const nlohmann::json& data);
  std::vector<TraceRow> trace(int64_t run_id);

 private:
  ResultsDb(std::unique_ptr<SqliteDb> db, int schema);
  // The columns added by schema 2 (3), or NULL in their place when reading an older file.
  std::string v2(const char* column) const;
  std::string v3(const char* column) const;
  std::string measurementColumns() const;
  std::string runColumns() const;
  // A run's row with `live` filled in.
  RunRow readRunRow(const SqliteStatement& s) const;
  std::unique_ptr<SqliteDb> db_;
  int schema_ = kResultsDbSchema;
  std::vector<int64_t> live_runs_;  // begun here, not finished: their locks go with this object
};

}  // namespace tf

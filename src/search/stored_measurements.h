// What the results database (store/results_db.h) means to a run: measurements stored under
// this task and environment that can be reused instead of measured again (a variant whose
// every case is stored, or the cases an interrupted run got to), the run's own row and its
// trace, and the rows the run writes. A database that fails mid-run is noted once and then
// left alone: the run goes on without storing.
#pragma once

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "search/candidate.h"
#include "store/results_db.h"
#include "task/task.h"

namespace tf {

struct Base;
class Space;
class Trace;

// Failures that are a property of the variant, not of the moment: worth reusing.
bool reusableStatus(CandidateStatus s);

class StoredMeasurements {
 public:
  // Opens the database; nullptr (with a note) when it cannot be opened.
  static std::unique_ptr<StoredMeasurements> open(const std::filesystem::path& path, const Task& task,
                                                  std::string task_hash, MeasureEnv env, bool reuse,
                                                  std::vector<std::string>* notes);

  // Starts this run's row; returns the id of the interrupted run of the same task it resumes.
  std::optional<int64_t> beginRun(const RunInfo& info, int64_t* run_id);
  void finishRun(const std::string& status, const nlohmann::json& summary);
  // Commits each event of `trace` as it is added.
  void attachTrace(Trace& trace);

  // What is known of a variant: its compile failure, or its cases in order until the first
  // failure or the first case not stored (then `complete` is false and only the missing
  // cases need measuring). nullopt when nothing reusable is stored.
  struct Known {
    CandidateRecord rec;
    bool complete = false;
  };
  std::optional<Known> lookup(const std::string& variant_hash, const std::vector<MeasurementRow>* given = nullptr);
  // Every row of the task on base source `base_hash`, grouped by variant in storage order.
  std::vector<std::pair<std::string, std::vector<MeasurementRow>>> variantsOfBase(const std::string& base_hash);

  void put(const CandidateRecord& rec, const std::string& base_hash, const std::string& case_key,
           const std::string& status, std::optional<double> time_ms, const nlohmann::json& data);

  // The database's key of case i.
  std::string caseKey(size_t i) const { return task_.cases[i].dump(); }
  // The best configurations earlier finished runs found on this GPU (MeasureEnv::gpu), at
  // most `max`, as tunable id -> value: first this task's runs (by speed-up), then those of
  // other tasks whose best configuration names only tunables in `tunable_ids` (the same
  // kernel parameters), each with its origin for the trace and result.json.
  std::vector<std::pair<Config, std::string>> warmStarts(const std::vector<std::string>& tunable_ids, size_t max);

  const std::filesystem::path& path() const;
  int64_t runId() const { return run_id_; }
  bool reuse() const { return reuse_; }

 private:
  StoredMeasurements(std::unique_ptr<ResultsDb> db, const Task& task, std::string task_hash, MeasureEnv env, bool reuse,
                     std::vector<std::string>* notes);
  void failed(const std::string& what);

  std::unique_ptr<ResultsDb> db_;
  const Task& task_;
  std::string task_hash_;
  MeasureEnv env_;
  bool reuse_;
  std::vector<std::string>* notes_;
  bool failed_ = false;
  int64_t run_id_ = 0;
};

}  // namespace tf

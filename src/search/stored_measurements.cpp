#include "search/stored_measurements.h"

#include <fmt/format.h>

#include <algorithm>

#include "search/trace.h"
#include "util/error.h"

namespace tf {

bool reusableStatus(CandidateStatus s) {
  return s != CandidateStatus::kTimeout && s != CandidateStatus::kCrash && s != CandidateStatus::kNotRun &&
         s != CandidateStatus::kPruned;
}

std::unique_ptr<StoredMeasurements> StoredMeasurements::open(const std::filesystem::path& path, const Task& task,
                                                             std::string task_hash, MeasureEnv env, bool reuse,
                                                             std::vector<std::string>* notes) {
  std::unique_ptr<ResultsDb> db;
  try {
    db = ResultsDb::open(path);
  } catch (const UserError& e) {
    if (notes) notes->push_back(fmt::format("results database unavailable, nothing is stored: {}", e.what()));
    return nullptr;
  }
  return std::unique_ptr<StoredMeasurements>(
      new StoredMeasurements(std::move(db), task, std::move(task_hash), std::move(env), reuse, notes));
}

StoredMeasurements::StoredMeasurements(std::unique_ptr<ResultsDb> db, const Task& task, std::string task_hash,
                                       MeasureEnv env, bool reuse, std::vector<std::string>* notes)
    : db_(std::move(db)), task_(task), task_hash_(std::move(task_hash)), env_(std::move(env)), reuse_(reuse),
      notes_(notes) {}

const std::filesystem::path& StoredMeasurements::path() const { return db_->path(); }

std::vector<std::pair<Config, std::string>> StoredMeasurements::warmStarts(const std::vector<std::string>& tunable_ids,
                                                                           size_t max) {
  struct Found {
    bool same_task;
    double speedup;
    int64_t run;
    Config config;
    std::string origin;
  };
  std::vector<Found> found;
  std::vector<RunRow> runs;
  try {
    runs = db_->runs(1000);
  } catch (const std::exception&) {
    return {};  // a database that cannot be read gives no warm start; the run goes on

  }
  for (const RunRow& r : runs) {
    // Finished runs on this GPU model whose best beat the kernel as written.
    if (r.status != "done" || r.info.env.gpu != env_.gpu || !r.summary.is_object()) continue;
    if (!r.summary.contains("best") || !r.summary["best"].is_object()) continue;
    const auto& best = r.summary["best"];
    if (!best.contains("config") || !best["config"].is_object() || best["config"].empty()) continue;
    bool same_task = r.info.task_hash == task_hash_;
    Config c;
    bool fits = true;
    for (const auto& [id, v] : best["config"].items()) {
      if (std::find(tunable_ids.begin(), tunable_ids.end(), id) == tunable_ids.end()) {
        fits = false;
        break;
      }
      if (v.is_number_integer()) c[id] = v.get<int64_t>();
    }
    if (!fits || c.empty()) continue;
    std::string origin = same_task ? fmt::format("warm start: run #{} of this task", r.id)
                                   : fmt::format("warm start: run #{} of {} (same parameters, same GPU)", r.id,
                                                 r.info.task_name);
    found.push_back({same_task, r.summary.value("speedup", 1.0), r.id, std::move(c), std::move(origin)});
  }
  // This task's runs first, each group fastest first; the newest run breaks ties.
  std::stable_sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    if (a.same_task != b.same_task) return a.same_task;
    if (a.speedup != b.speedup) return a.speedup > b.speedup;
    return a.run > b.run;
  });
  std::vector<std::pair<Config, std::string>> out;
  for (auto& f : found) {
    if (out.size() >= max) break;
    bool dup = std::any_of(out.begin(), out.end(), [&](const auto& o) { return o.first == f.config; });
    if (!dup) out.emplace_back(std::move(f.config), std::move(f.origin));
  }
  return out;
}

void StoredMeasurements::failed(const std::string& what) {
  if (failed_) return;
  failed_ = true;
  if (notes_) notes_->push_back(fmt::format("writing to the results database failed; later results are not stored: {}", what));
}

std::optional<int64_t> StoredMeasurements::beginRun(const RunInfo& info, int64_t* run_id) {
  std::optional<int64_t> resumed;
  try {
    // The newest unfinished run whose process is gone is resumed; a live one never is.
    std::optional<RunRow> prev;
    for (auto& r : db_->unfinishedRuns(task_hash_, env_)) {
      if (!r.live) {
        if (!prev) prev = std::move(r);
      } else if (notes_) {
        notes_->push_back(fmt::format("run #{} of this task is running in another process now: it is not resumed "
                                      "(on one GPU, the two runs' timings disturb each other)",
                                      r.id));
      }
    }
    if (prev) {
      resumed = prev->id;
      if (notes_) {
        notes_->push_back(fmt::format("run #{} of this task was interrupted; its {} measurements are reused", prev->id,
                                      prev->measurements));
      }
    }
    RunInfo i = info;
    i.env = env_;
    i.task_hash = task_hash_;
    i.resumed_from = resumed;
    run_id_ = db_->beginRun(i);
  } catch (const UserError& e) {
    failed(e.what());
  }
  *run_id = run_id_;
  return resumed;
}

void StoredMeasurements::finishRun(const std::string& status, const nlohmann::json& summary) {
  if (failed_) return;
  try {
    db_->finishRun(run_id_, status, summary);
  } catch (const UserError& e) {
    failed(e.what());
  }
}

void StoredMeasurements::attachTrace(Trace& trace) {
  trace.setSink([this](const TraceEvent& e) {
    if (failed_) return;
    try {
      db_->appendTrace(run_id_, e.seq, e.t, e.kind, e.data);
    } catch (const UserError& err) {
      failed(err.what());
    }
  });
}

void StoredMeasurements::put(const CandidateRecord& rec, const std::string& base_hash, const std::string& case_key,
                             const std::string& status, std::optional<double> time_ms, const nlohmann::json& data) {
  if (failed_) return;
  MeasurementKey key{task_hash_, base_hash, rec.source_hash, configKey(rec.config), case_key, env_};
  try {
    db_->putMeasurement(key, status, time_ms, data, run_id_);
  } catch (const UserError& e) {
    failed(e.what());
  }
}

std::vector<std::pair<std::string, std::vector<MeasurementRow>>> StoredMeasurements::variantsOfBase(
    const std::string& base_hash) {
  std::vector<std::pair<std::string, std::vector<MeasurementRow>>> out;
  if (!reuse_ || failed_) return out;
  std::vector<MeasurementRow> rows;
  try {
    rows = db_->measurementsFor(task_hash_, base_hash, env_);
  } catch (const UserError& e) {
    failed(e.what());
    return out;
  }
  std::map<std::string, size_t> index;
  for (auto& r : rows) {
    auto it = index.find(r.key.variant_hash);
    if (it == index.end()) {
      it = index.emplace(r.key.variant_hash, out.size()).first;
      out.emplace_back(r.key.variant_hash, std::vector<MeasurementRow>{});
    }
    out[it->second].second.push_back(std::move(r));
  }
  return out;
}

std::optional<StoredMeasurements::Known> StoredMeasurements::lookup(const std::string& variant_hash,
                                                                    const std::vector<MeasurementRow>* given) {
  if (!reuse_ || failed_) return std::nullopt;
  std::vector<MeasurementRow> rows;
  try {
    rows = given ? *given : db_->measurementsOfVariant(task_hash_, variant_hash, env_);
  } catch (const UserError& e) {
    failed(e.what());
    return std::nullopt;
  }
  if (rows.empty()) return std::nullopt;
  Known k;
  CandidateRecord& rec = k.rec;
  rec.reused = true;
  rec.origin = fmt::format("database (run #{})", rows.back().run_id);
  for (const auto& r : rows) {
    if (r.key.case_key != "*") continue;
    CandidateStatus s = candidateStatusFromString(r.status);
    if (!reusableStatus(s)) return std::nullopt;
    CaseMeasurement stored = CaseMeasurement::fromJson(r.data);
    rec.compile.status = s;
    rec.compile.message = stored.message;
    if (r.data.is_object() && r.data.contains("kernels") && r.data["kernels"].is_array()) rec.compile.kernels = r.data["kernels"];
    rec.status = s;
    rec.message = rec.compile.message;
    k.complete = true;
    return k;
  }
  rec.compile.status = CandidateStatus::kOk;
  for (size_t i = 0; i < task_.cases.size(); ++i) {
    const MeasurementRow* row = nullptr;
    for (const auto& r : rows) {
      if (r.key.case_key == caseKey(i)) row = &r;
    }
    if (!row) break;
    CaseMeasurement m = CaseMeasurement::fromJson(row->data);
    if (!reusableStatus(m.status) || (m.status == CandidateStatus::kOk && !m.timing)) break;
    rec.cases.push_back(m);
    if (m.status != CandidateStatus::kOk) {
      rec.status = m.status;
      rec.message = fmt::format("case {}: {}", task_.caseLabel(i), m.message);
      k.complete = true;
      return k;
    }
  }
  if (rec.cases.empty()) return std::nullopt;
  k.complete = rec.cases.size() == task_.cases.size();
  if (k.complete) rec.status = CandidateStatus::kOk;
  return k;
}

}  // namespace tf

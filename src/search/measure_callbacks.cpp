#include "search/measure_callbacks.h"

#include "search/run_state.h"
#include "search/scoring.h"
#include "search/stored_measurements.h"

namespace tf {

void MeasureCallbacks::caseMeasured(const CandidateRecord& rec, size_t case_index, const CaseMeasurement& m) {
  for (auto& c : callbacks_) c->caseMeasured(rec, case_index, m);
}

void MeasureCallbacks::compileFailed(const CandidateRecord& rec) {
  for (auto& c : callbacks_) c->compileFailed(rec);
}

void MeasureCallbacks::candidateDone(const CandidateRecord& rec, RunState& state) {
  for (auto& c : callbacks_) c->candidateDone(rec, state);
}

namespace {

class DatabaseCallback final : public MeasureCallback {
 public:
  DatabaseCallback(StoredMeasurements& stored, const RunState& state) : stored_(stored), state_(state) {}
  void caseMeasured(const CandidateRecord& rec, size_t case_index, const CaseMeasurement& m) override {
    // Stopped by the budget: nothing was measured. (A timeout or a crash is stored, and
    // never reused: a later run measures it again.)
    if (m.status == CandidateStatus::kNotRun) return;
    std::optional<double> t;
    if (m.status == CandidateStatus::kOk && m.timing) t = m.timing->median_ms;
    stored_.put(rec, baseHash(rec), stored_.caseKey(case_index), toString(m.status), t, m.toJson());
  }
  void compileFailed(const CandidateRecord& rec) override {
    if (!reusableStatus(rec.compile.status)) return;
    stored_.put(rec, baseHash(rec), "*", toString(rec.compile.status), std::nullopt, rec.compile.toJson());
  }

 private:
  std::string baseHash(const CandidateRecord& rec) const {
    return state_.bases.empty() ? rec.source_hash : state_.baseOf(rec).hash;
  }
  StoredMeasurements& stored_;
  const RunState& state_;
};

class TraceCallback final : public MeasureCallback {
 public:
  explicit TraceCallback(Trace& trace) : trace_(trace) {}
  void candidateDone(const CandidateRecord& r, RunState&) override {
    if (r.kind == CandidateKind::kBaseline || r.kind == CandidateKind::kStored) return;
    nlohmann::json j = {{"id", r.id},         {"round", r.round},   {"base", r.base},
                        {"origin", r.origin}, {"config", configJson(r.config)}, {"config_text", r.config_text},
                        {"status", toString(r.status)}, {"reused", r.reused}};
    if (!r.proposal.empty()) j["proposal"] = r.proposal;
    if (r.objective) j["objective"] = *r.objective;
    if (!r.regressed.empty()) j["regressed_cases"] = r.regressed;
    if (!r.message.empty()) j["message"] = r.message.substr(0, 300);
    if (r.compile.seconds > 0) j["compile_s"] = r.compile.seconds;
    if (r.done_s >= 0) j["done_s"] = r.done_s;
    if (r.status == CandidateStatus::kOk && r.cases.size() > 0) {
      nlohmann::json ms = nlohmann::json::array();
      for (const auto& c : r.cases) ms.push_back(c.timing ? nlohmann::json(c.timing->median_ms) : nlohmann::json(nullptr));
      j["time_ms"] = ms;
    }
    trace_.add("candidate", j);
  }

 private:
  Trace& trace_;
};

class StrategyCallback final : public MeasureCallback {
 public:
  void candidateDone(const CandidateRecord& r, RunState& state) override {
    if (r.kind != CandidateKind::kSearch || r.status == CandidateStatus::kNotRun || !state.search.tuner) return;
    std::optional<double> obj;
    if (r.status == CandidateStatus::kOk && r.objective) obj = searchObjective(r);
    state.search.tuner->observe({r.config, r.origin, r.proposal}, obj);
  }
};

class ProgressCallback final : public MeasureCallback {
 public:
  explicit ProgressCallback(const RunContext& ctx) : ctx_(ctx) {}
  void candidateDone(const CandidateRecord& r, RunState& state) override {
    if (r.kind == CandidateKind::kStored) return;
    ctx_.progress.candidate(r, r.kind == CandidateKind::kBaseline ? nullptr : state.best(),
                            static_cast<int>(state.result.candidates.size()), ctx_.clock.elapsed());
  }

 private:
  const RunContext& ctx_;
};

}  // namespace

std::unique_ptr<MeasureCallback> databaseCallback(StoredMeasurements& stored, const RunState& state) {
  return std::make_unique<DatabaseCallback>(stored, state);
}
std::unique_ptr<MeasureCallback> traceCallback(const RunContext& ctx) { return std::make_unique<TraceCallback>(ctx.trace); }
std::unique_ptr<MeasureCallback> strategyCallback() { return std::make_unique<StrategyCallback>(); }
std::unique_ptr<MeasureCallback> progressCallback(const RunContext& ctx) { return std::make_unique<ProgressCallback>(ctx); }

}  // namespace tf

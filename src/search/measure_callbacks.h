// What happens after a measurement, as callbacks in the manner of TVM MetaSchedule's measure
// callbacks: the stages that measure call MeasureCallbacks, and each concern (storing rows in
// the results database, tracing the candidate, telling the strategy, showing progress) is one
// callback. A stage never writes to the database, the trace or the strategy itself.
#pragma once

#include <memory>
#include <vector>

#include "search/candidate.h"
#include "worker/measurement.h"

namespace tf {

struct RunState;
struct RunContext;
class StoredMeasurements;

class MeasureCallback {
 public:
  virtual ~MeasureCallback() = default;
  // Case `case_index` of `rec` was just measured (it is rec.cases.back()).
  virtual void caseMeasured(const CandidateRecord& rec, size_t case_index, const CaseMeasurement& m) {}
  // `rec` did not compile (rec.compile says why).
  virtual void compileFailed(const CandidateRecord& rec) {}
  // `rec` is done (measured, reused, pruned or failed) and is the last of state.result.candidates.
  virtual void candidateDone(const CandidateRecord& rec, RunState& state) {}
};

class MeasureCallbacks {
 public:
  void add(std::unique_ptr<MeasureCallback> c) { callbacks_.push_back(std::move(c)); }
  void caseMeasured(const CandidateRecord& rec, size_t case_index, const CaseMeasurement& m);
  void compileFailed(const CandidateRecord& rec);
  void candidateDone(const CandidateRecord& rec, RunState& state);

 private:
  std::vector<std::unique_ptr<MeasureCallback>> callbacks_;
};

// Rows for every case measured and every compile failure that is a property of the variant.
std::unique_ptr<MeasureCallback> databaseCallback(StoredMeasurements& stored, const RunState& state);
// A "candidate" trace event for every candidate of the search and of pass trials.
std::unique_ptr<MeasureCallback> traceCallback(const RunContext& ctx);
// The strategy's observation of every configuration it proposed that was evaluated.
std::unique_ptr<MeasureCallback> strategyCallback();
// The progress line (candidates tried, best so far, elapsed).
std::unique_ptr<MeasureCallback> progressCallback(const RunContext& ctx);

}  // namespace tf

// Evaluating candidates: one round's proposals on the current base (pruned statically,
// written into the source, taken from the results database when known, else compiled in
// parallel and measured in the order their compiles finish), and the measurement of one
// compiled variant on every case. Everything a measurement leads to (database rows, the
// trace, the strategy, progress) happens in the measure callbacks.
#pragma once

#include <string>
#include <vector>

#include "search/run_state.h"

namespace tf {

struct Proposed {
  Config config;
  std::string origin;                // "bayes", "autotune config 2", "bayes in region P3 (...)"
  std::string proposal;              // the engine proposal it came from, "" for the strategy's own
  bool anchor = false;               // the round's passes are applied to it: measured before them
};

// A candidate whose source is already written: a pass's variant.
struct Prepared {
  CandidateRecord rec;               // kind, origin, proposal, config text; id and round are set here
  std::string text;
};

// Evaluates a round: configurations of the current base and prepared variants (passes),
// compiled together and measured in the order their compiles finish. Every one ends up in
// state.result.candidates (pruned, reused, failed, not run for lack of budget, or measured);
// returns the ids of the prepared ones, in order.
// on_measurement_worker: nothing goes to the compile pool (which may still be starting); each
// candidate compiles on the measurement worker at its first call, as the kernel as written does.
std::vector<int> evaluateBatch(const RunContext& ctx, RunState& state, const std::vector<Proposed>& proposals,
                               std::vector<Prepared> prepared = {}, bool on_measurement_worker = false);

// Measures `v` (compiled: `compiled`) on every case not in rec.cases yet (those came from
// the database), then scores it against the baseline. Stops at the first failing case.
// compiles_at_first_call: not compiled ahead (the kernel as written, a warm start): its first
// case's wall time includes the compile, no estimate of a measurement's.
void measureCandidate(const RunContext& ctx, RunState& state, CandidateRecord& rec, const Variant& v,
                      const CompileOutcome& compiled, bool compiles_at_first_call = false);

// Adds a finished candidate to the run and runs the callbacks on it.
const CandidateRecord& recordCandidate(const RunContext& ctx, RunState& state, CandidateRecord rec);

// Seconds a candidate's measurement of `cases` cases is expected to take (from what the
// baseline's took): the search starts no measurement that would run past its end.
double expectedMeasureSeconds(const RunState& state, size_t cases);

}  // namespace tf

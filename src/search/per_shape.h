// Per-shape results, the stage after the search: when the fastest verified candidates differ
// by case (a decode shape and a prefill shape, short rows and long ones), one drop-in source
// whose launcher picks among a few of them by a shape feature of its arguments
// (dispatch_plan.h picks, transform/dispatch_source.h writes). The merged source is a
// candidate like any other: verified and measured on every case, then also verified on
// shapes near the measured ones inside each bucket, and handed back only through the
// confirmation, against the kernel as written, slower on no case.
//
// The search keeps back the time this needs (dispatchSeconds) once a plan is worth it: at
// least kMinClaimedGain faster, over the cases, than the single best candidate.
#pragma once

#include <optional>
#include <vector>

#include "search/dispatch_plan.h"
#include "search/run_state.h"

namespace tf {

struct DispatchOutlook {
  DispatchPlan plan;
  std::vector<int> option_ids;       // the candidate behind each option of the plan's input
  std::vector<CaseFeatures> features;  // per case
  double single_best = 1;            // the best single candidate's objective
};

// The plan the run's measurements support now, when it beats the single best candidate by at
// least kMinClaimedGain; nullopt otherwise (also when the baseline's cases lack arguments).
std::optional<DispatchOutlook> dispatchOutlook(const RunState& state);

// What building, measuring and verifying the plan's source is expected to take.
double dispatchSeconds(const RunState& state, const DispatchOutlook& o);

// Compiles the source of the plan the measurements support now on the compile pool, while the
// search goes on (once per distinct source): the stage after the search then finds it
// compiled, and keeps back only its measurements. Nothing when no plan is worth it.
void compileDispatchAhead(const RunContext& ctx, RunState& state);

// The seconds the search should keep back for a dispatch now: dispatchSeconds of the plan the
// measurements support, 0 when none is worth it or it would take too much of the budget.
double dispatchKeepBack(const RunState& state);

void perShapeDispatch(const RunContext& ctx, RunState& state);

}  // namespace tf

// The kernel as written: measured on every case (or taken from the results database), the
// reference every candidate is scored against, what its launch tells the space (element
// sizes, derived values, programs) and the budget plan (the confirmation's reserve depends on
// how long a case takes); then, in prepareDiagnosis, the GPU's ceilings, each case's roofline
// time and its diagnosis. A kernel as written that fails or computes something else than the
// harness's reference is the user's problem: UserError.
#pragma once

#include <functional>

#include "search/run_state.h"

namespace tf {

// `before_measure`, when set, runs just before the kernel as written is measured (not when its
// measurement comes from the results database): the wait for compiles queued ahead of it.
void measureBaseline(const RunContext& ctx, RunState& state, const std::function<void()>& before_measure = {});

// After the baseline (and the warm start, which needs neither): the roofline of each case (the
// GPU's ceilings, the harness's work per case: the worker's first use of the harness when the
// baseline came from the database), the --within-roofline target, and the diagnosis of the
// kernel as written and of the best so far.
void prepareDiagnosis(const RunContext& ctx, RunState& state);

}  // namespace tf

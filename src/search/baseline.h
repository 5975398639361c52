// The kernel as written: measured on every case (or taken from the results database), the
// reference every candidate is scored against, what its launch tells the space (element
// sizes, derived values, programs), the GPU's ceilings and each case's roofline time, the
// budget plan (the confirmation's reserve depends on how long a case takes), and its
// diagnosis. A kernel as written that fails or computes something else than the harness's
// reference is the user's problem: UserError.
#pragma once

#include "search/run_state.h"

namespace tf {

void measureBaseline(const RunContext& ctx, RunState& state);

}  // namespace tf

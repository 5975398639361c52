// The confirmation: the best candidate and the kernel as written are measured again,
// alternately and with a longer timing budget, in a fresh measurement process (nothing of the
// search's process carries over: an autotuner's choice, caches), so that what is handed back
// does not rest on one lucky measurement. It is handed back only if it is faster overall
// beyond the noise and by at least kMinClaimedGain (3%), and slower on no case beyond that
// case's noise; otherwise the original is, and a smaller gain is reported as noise.
//
// The confirmation fits in what is left of the budget: its timing budget shrinks to fit, and
// when not even a short re-measurement fits, the search's own measurements decide, with a
// stricter margin (twice the noise), and the report says so.
#pragma once

#include "search/run_state.h"

namespace tf {

void confirm(const RunContext& ctx, RunState& state);

}  // namespace tf

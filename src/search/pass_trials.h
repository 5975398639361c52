// Pass trials: a pass the engine proposes is applied to the best configuration found on the
// current base (through the one PassApplier wrapper), compiled, measured and scored like any
// candidate; when it wins beyond the noise (and is slower on no case), its output becomes a
// new base whose parameters the search explores next.
#pragma once

#include "search/run_state.h"

namespace tf {

// Tries `p` once per base. Returns true when it won and the search moved to a new base.
bool tryPass(const RunContext& ctx, RunState& state, const Proposal& p);

// Makes the source `text` (measured by `rec`) the base searched from now on; builds its
// space, strategy and tuner. Returns false (traced) when its source cannot be parsed.
bool switchBase(const RunContext& ctx, RunState& state, const CandidateRecord& rec, const std::string& text,
                const std::string& origin);

// Builds the space, strategy and tuner of base `b`, and preloads what the database knows of it.
void startBase(const RunContext& ctx, RunState& state, int b, const SpaceHints& hints);

// Run-time facts that sharpen the space: element sizes, values of derived parameters, the
// programs each kernel's launch had.
void noteHints(const CandidateRecord& measured, const TunableSet& tunables, SpaceHints* hints);

}  // namespace tf

// The reasoning engine's part of a round: what the diagnosis found (of the kernel as written
// and of each new best), registered under ids the trace and the proposals cite; the engine's
// proposals, each traced once, split into parameter regions for the strategy and passes for
// the pass trials.
#pragma once

#include <vector>

#include "search/run_state.h"
#include "search/tuner.h"

namespace tf {

struct EngineRound {
  std::vector<RegionRequest> regions;
  std::vector<Proposal> passes;           // and rewrites (Proposal::Kind::kRewrite)
};

EngineRound engineRound(const RunContext& ctx, RunState& state);

// Diagnoses the source `rec` ran (through options.diagnose, or the built-in diagnosis from
// the compiled texts, the launch and the roofline) and registers what it found.
void diagnoseCandidate(const RunContext& ctx, RunState& state, const CandidateRecord& rec);

}  // namespace tf

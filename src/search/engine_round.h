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

// Launch options the search's space does not hold, proposed as `launch` passes once the space
// is exhausted (as every pass is then): a register limit (maxnreg) where registers alone keep
// another block of a kernel off an SM, at the limits that let one or two more fit (rounded
// down to the allocation unit, never below 32); and clusters of two programs (num_ctas=2) for
// a kernel with a dot on Hopper and later (`gpu`: the worker's hello, {"cc": [9, 0], ...}).
// An autotuned kernel gets them in each config of its literal list; one whose configs are
// computed or named is left. Returns every move considered, with why it was proposed or left.
nlohmann::json addLaunchOptions(const Base& base, const EngineInput& in, const nlohmann::json& gpu, EngineOutput* out);

// Diagnoses the source `rec` ran (through options.diagnose, or the built-in diagnosis from
// the compiled texts, the launch and the roofline) and registers what it found.
void diagnoseCandidate(const RunContext& ctx, RunState& state, const CandidateRecord& rec);

}  // namespace tf

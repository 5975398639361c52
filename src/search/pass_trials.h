// Pass trials: every pass the engine proposes (each finding's suggestions among them) is
// tried from the first round on, with its own parameters searched: the pass is applied
// (through the one PassApplier wrapper) for each parameter set worth trying, to the
// configuration the base is at (as written in the first round, its best configuration after
// that), and its variants are compiled and measured in the same batch as the strategy's
// configurations, competing with them. When the best variant wins beyond the noise (and is
// slower on no case), its output becomes a new base whose parameters the search explores
// next. Each pass is tried at most twice per base (as written, then on the best
// configuration); the trace says for every pass why it was or was not tried.
#pragma once

#include <string>
#include <vector>

#include "search/batch_evaluation.h"
#include "search/run_state.h"

namespace tf {

// The variants of one pass proposal in this round.
struct PassTrial {
  Proposal proposal;
  std::string anchor;                // the configuration it was applied to ("as written", ...)
  std::vector<nlohmann::json> params;  // per variant
  std::vector<int> candidates;       // ids, once evaluated
  int anchor_candidate = -1;         // the anchor measured in the same batch (a late anchor): judged against it
};

// Applies the round's pass proposals; returns the trials and appends their variants to
// `prepared` (evaluated with the round's batch). Skips are traced.
// `late_anchor`: the first round's configuration to apply them to instead of the kernel as
// written (lateAnchorReason).
std::vector<PassTrial> preparePassTrials(const RunContext& ctx, RunState& state, const std::vector<Proposal>& passes,
                                         std::vector<Prepared>* prepared, const Config* late_anchor = nullptr);

// Why the first round's passes should not be applied to the kernel as written, or "": its
// first call (the compile, an @triton.autotune list's benchmarking) took a fifth of the budget
// or more, and every variant of it would again (liger's JSD at BLOCK_SIZE=65536: 75 s on the H100, so a
// 150 s budget measured none of the round's three passes). The loop then applies them to the
// round's first configuration, measured first, and judges them against it.
std::string lateAnchorReason(const RunState& state);

// After the batch: traces each trial's result; the best winning variant becomes the new base.
// Returns true when the search moved to a new base.
bool concludePassTrials(const RunContext& ctx, RunState& state, std::vector<PassTrial>& trials, double best_before);

// Makes the source `text` (measured by `rec`) the base searched from now on; builds its
// space, strategy and tuner. Returns false (traced) when its source cannot be parsed.
bool switchBase(const RunContext& ctx, RunState& state, const CandidateRecord& rec, const std::string& text,
                const std::string& origin);

// Builds the space, strategy and tuner of base `b`, and preloads what the database knows of it.
void startBase(const RunContext& ctx, RunState& state, int b, const SpaceHints& hints);
// The search's share of its time before which an exhausted space is widened.
inline constexpr double kWidenBefore = 0.8;
// When the current base's space is exhausted: its domains widened (SpaceHints::wide, the
// dimensions frozen after failures kept), searched from the tuner's history with a strategy
// chosen for the wider space. False (traced with the reason) when already wide, when 80% of
// the search's time is used, or when the wider domains add nothing (no value, no valid
// configuration).
bool widenSpace(const RunContext& ctx, RunState& state);
// When the space cannot widen: the engine's rounds on this base add every pass that is
// switched on (as --effort full does from the start). False (traced) when they do already, when
// passes are off, or when 80% of the search's time is used.
bool proposeEveryPass(const RunContext& ctx, RunState& state);

// Run-time facts that sharpen the space: element sizes, values of derived parameters, the
// programs each kernel's launch had.
void noteHints(const CandidateRecord& measured, const TunableSet& tunables, SpaceHints* hints);

}  // namespace tf

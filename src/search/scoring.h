// How a measured candidate is judged against the kernel as written: its outputs must have the
// baseline's shapes and types; its objective is the geometric mean over cases of its time
// over the baseline's (lower is better; docs/search.md says why); and no case may be slower
// than as written beyond that case's noise, or it is not eligible to be handed back.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "search/candidate.h"

namespace tf {

// What candidates are scored against: the baseline's measurement of each case.
struct BaselineReference {
  std::vector<double> times_ms;
  std::vector<double> noise;                 // relative noise (IQR / median) per case
  std::vector<nlohmann::json> outputs;       // output shapes and dtypes per case
  std::vector<std::string> labels;           // "M=4096,N=4096"
  bool empty() const { return times_ms.empty(); }
};

// Noise never counts for less than this: timings of the same kernel differ by about half a
// percent from one measurement to the next on the H200 even when the IQR is tighter.
inline constexpr double kMinCaseTolerance = 0.01;
// The smallest gain handed back as one: a confirmed speed-up under 1.03x is reported as noise
// (measured on the H200: the same launcher timed in separate processes swings by several
// percent, up to 25% with heavy Python wrappers; a claim must survive that re-measurement).
inline constexpr double kMinClaimedGain = 0.03;

// How much slower than the baseline a case may measure and still count as not slower.
double caseTolerance(double baseline_noise, double candidate_noise);

double geomean(const std::vector<double>& xs);

// Sets rec.objective and rec.regressed from rec.cases (all verified). A case whose outputs
// differ in shape or type from the original's makes it wrong-result.
void scoreCandidate(CandidateRecord& rec, const BaselineReference& ref);

// The objective the strategy learns from: a candidate slower on some case counts as no better
// than the kernel as written (so the model steers away from it); an eligible one is its
// objective.
double searchObjective(const CandidateRecord& rec);

}  // namespace tf

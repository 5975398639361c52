// Per-shape results: when the fastest verified candidate differs from case to case, a plan
// that hands back a few of them behind one launcher, picked by one shape feature of the
// launcher's arguments (a tensor's dimension or an int argument). Pure logic over measured
// times: which options, which feature, which buckets; src/transform/dispatch_source.h writes
// the source and src/search/per_shape.cpp verifies and measures it.
//
// The rules, and why:
//   - The kernel as written is always an option: a bucket where nothing is faster beyond its
//     noise keeps it, and a shape outside every bucket runs it (nothing unverified is guessed).
//   - An option serves a bucket only if it is slower on none of the bucket's cases beyond
//     that case's tolerance (acceptance stays per case).
//   - At most kMaxDispatchVariants options beside the kernel as written, and cases that share
//     the feature's value share an option (the launcher cannot tell them apart).
//   - Buckets are intervals of the feature: adjacent cases served alike form one, split at the
//     geometric midpoint between neighbours served differently; the outermost reach half the
//     smallest and twice the largest value measured, no further.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace tf {

inline constexpr size_t kMaxDispatchVariants = 3;

// One feature a launcher's call can be told apart by: argument `index` (named `name`, "" when
// it has no name), its dimension `dim` when a tensor, or its value when an int (dim == -1).
struct DispatchFeature {
  int index = 0;
  std::string name;
  int dim = -1;
  bool operator==(const DispatchFeature&) const = default;
  std::string label() const;   // "x.shape[0]", "n_rows", "arg 2"
};

// The features of one case: for each positional argument of the launcher, the worker's
// {"name", "shape", "dtype"} / {"name", "value"} (CaseMeasurement::arguments).
struct CaseFeatures {
  std::vector<DispatchFeature> features;
  std::vector<int64_t> values;
};
CaseFeatures caseFeatures(const nlohmann::json& arguments);

struct DispatchInput {
  // Per case: the kernel as written's time and the tolerance (relative) a case may be
  // slower by and still count as not slower.
  std::vector<double> as_written_ms;
  std::vector<double> tolerance;
  // Per option (a verified candidate), per case: its time (every case measured).
  std::vector<std::vector<double>> option_ms;
  std::vector<CaseFeatures> cases;
};

struct DispatchBucket {
  int64_t lo = 0, hi = 0;            // the feature's values it serves, both included
  int option = -1;                   // index into DispatchInput::option_ms; -1: as written
  std::vector<size_t> cases;         // the measured cases it serves
};

struct DispatchPlan {
  DispatchFeature feature;
  std::vector<DispatchBucket> buckets;   // in increasing order of the feature, as written included
  std::vector<int> options;              // the options used, in the order of their first bucket
  std::vector<int> per_case;             // the option serving each case (-1: as written)
  double objective = 1;                  // geomean over cases of its time over the as-written's
};

// The best plan by objective, or nullopt when no feature separates the cases or no plan
// uses more than one option (the single best candidate, or the kernel as written, is then
// the answer).
std::optional<DispatchPlan> planDispatch(const DispatchInput& in);

// The task's case parameter whose value is the plan's feature in every case ("M" when the
// feature is x.shape[0] and x is M rows), or "" when none is.
std::string featureParam(const std::vector<nlohmann::json>& case_values, const std::vector<CaseFeatures>& cases,
                         const DispatchFeature& feature);

// Shapes near a case, for verifying a bucket beyond the cases measured: `param` (every int
// parameter when "") moved up and down by about a quarter, keeping the largest power of two
// (up to 16) that divides it, so that alignment stays as measured (down from a value no larger
// than that step: half of it). Values of 1 and non-int parameters stay.
std::vector<nlohmann::json> nearbyShapes(const nlohmann::json& case_values, const std::string& param);

}  // namespace tf

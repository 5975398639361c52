#include "search/scoring.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tf {

double caseTolerance(double baseline_noise, double candidate_noise) {
  return std::max({kMinCaseTolerance, baseline_noise, candidate_noise});
}

double geomean(const std::vector<double>& xs) {
  double s = 0;
  for (double x : xs) s += std::log(x);
  return std::exp(s / static_cast<double>(xs.size()));
}

void scoreCandidate(CandidateRecord& rec, const BaselineReference& ref) {
  rec.regressed.clear();
  rec.objective.reset();
  if (rec.status != CandidateStatus::kOk) return;
  for (size_t i = 0; i < rec.cases.size() && i < ref.outputs.size(); ++i) {
    if (rec.cases[i].outputs != ref.outputs[i]) {
      rec.status = CandidateStatus::kWrongResult;
      rec.message = fmt::format("case {}: outputs {} differ from the original's {}", ref.labels[i],
                                rec.cases[i].outputs.dump(), ref.outputs[i].dump());
      return;
    }
  }
  if (ref.empty() || rec.cases.size() != ref.times_ms.size()) return;
  std::vector<double> ratios;
  for (size_t i = 0; i < rec.cases.size(); ++i) {
    const auto& t = rec.cases[i].timing;
    if (!t || !(t->median_ms > 0)) return;
    double ratio = t->median_ms / ref.times_ms[i];
    ratios.push_back(ratio);
    if (ratio > 1.0 + caseTolerance(ref.noise[i], t->noise())) {
      rec.regressed.push_back(fmt::format("{} ({:.3f}x)", ref.labels[i], 1.0 / ratio));
    }
  }
  rec.objective = geomean(ratios);
}

double searchObjective(const CandidateRecord& rec) {
  double obj = rec.objective.value_or(1.0);
  if (rec.regressed.empty() || rec.cases.empty()) return obj;
  return std::max(obj, 1.0 + kMinCaseTolerance);
}

}  // namespace tf

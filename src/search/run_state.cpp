#include "search/run_state.h"

#include <algorithm>

#include "transform/apply_config.h"

namespace tf {

const CandidateRecord* RunState::best() const {
  const CandidateRecord* b = nullptr;
  for (const auto& c : result.candidates) {
    if (c.eligible() && (!b || *c.objective < *b->objective)) b = &c;
  }
  return b;
}

double RunState::bestObjective() const {
  const CandidateRecord* b = best();
  return b ? *b->objective : 1.0;
}

double RunState::baselineNoise() const {
  double n = 0;
  for (double x : baseline.noise) n = std::max(n, x);
  return n;
}

const BaselineReference& RunState::baselineOf(int lane) const {
  if (lane > 0 && static_cast<size_t>(lane) < lane_baselines.size() && !lane_baselines[static_cast<size_t>(lane)].empty()) {
    return lane_baselines[static_cast<size_t>(lane)];
  }
  return baseline;
}

std::string RunState::textOf(const Base& base, const Config& config) {
  if (config.empty()) return base.text;
  return applyConfig(*base.ir, *base.tunables, config);
}

std::string RunState::recordText(const CandidateRecord& rec) const {
  if (auto it = pass_texts.find(rec.id); it != pass_texts.end()) return it->second;
  const Base& base = baseOf(rec);
  if (rec.id == base.record) return base.text;
  return textOf(base, rec.config);
}

}  // namespace tf

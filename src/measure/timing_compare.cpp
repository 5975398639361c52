#include "measure/timing_compare.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tf {

TimingComparison compareTimings(const TimingStats& candidate, const TimingStats& baseline, double min_noise) {
  TimingComparison c;
  if (!(candidate.median_ms > 0) || !(baseline.median_ms > 0)) return c;
  c.ratio = candidate.median_ms / baseline.median_ms;
  c.noise = std::max({candidate.noise(), baseline.noise(), min_noise});
  c.faster = c.ratio < 1 - c.noise;
  c.slower = c.ratio > 1 + c.noise;
  c.tie = !c.faster && !c.slower;
  return c;
}

namespace {
double quantile(const std::vector<double>& sorted, double p) {
  if (sorted.size() == 1) return sorted[0];
  double pos = p * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}
}  // namespace

double relativeSpread(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  std::vector<double> v = values;
  std::sort(v.begin(), v.end());
  double med = quantile(v, 0.5);
  return med > 0 ? (v.back() - v.front()) / med : 0;
}

TimingStats summarizeTimes(std::vector<double> t, const std::string& method) {
  TimingStats s;
  s.method = method;
  if (t.empty()) return s;
  std::sort(t.begin(), t.end());
  s.q1_ms = quantile(t, 0.25);
  s.median_ms = quantile(t, 0.5);
  s.q3_ms = quantile(t, 0.75);
  s.min_ms = t.front();
  s.max_ms = t.back();
  s.mean_ms = std::accumulate(t.begin(), t.end(), 0.0) / static_cast<double>(t.size());
  s.reps = static_cast<int>(t.size());
  return s;
}

}  // namespace tf

// Comparing timings with their noise: two medians closer than the larger of their noises (and
// a floor) are a tie, not a win. Also the spread of repeated measurements of one kernel.
#pragma once

#include <vector>

#include "worker/measurement.h"

namespace tf {

struct TimingComparison {
  double ratio = 1;        // candidate median / baseline median (< 1: the candidate is faster)
  double noise = 0;        // the band used: max(candidate noise, baseline noise, floor)
  bool tie = true;         // |ratio - 1| within the band
  bool faster = false;     // the candidate is faster beyond the band
  bool slower = false;     // the candidate is slower beyond the band
};

// `min_noise`: the smallest band (run-to-run drift that one measurement's IQR does not see).
TimingComparison compareTimings(const TimingStats& candidate, const TimingStats& baseline, double min_noise = 0.005);

// (max - min) / median of repeated figures (e.g. the medians of ten `profile` runs); 0 for
// fewer than two.
double relativeSpread(const std::vector<double>& values);

// Median and quartiles of raw times (ms), as the worker summarizes them.
TimingStats summarizeTimes(std::vector<double> times_ms, const std::string& method);

}  // namespace tf

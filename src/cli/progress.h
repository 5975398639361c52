// Progress of an optimization on the terminal: one line redrawn in place on a TTY, plain
// lines otherwise (logs), nothing with --json.
#pragma once

#include <memory>

#include "search/optimizer.h"

namespace tf {

// `budget_s`: the run's budget, shown as a bar of the time spent (0: no bar).
std::unique_ptr<OptimizeProgress> makeProgress(bool quiet, int verbose, double budget_s = 0);


}  // namespace tf

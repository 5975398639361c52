// Progress of an optimization on the terminal: one line redrawn in place on a TTY, plain
// lines otherwise (logs), nothing with --json.
#pragma once

#include <memory>

#include "search/optimizer.h"

namespace tf {

std::unique_ptr<OptimizeProgress> makeProgress(bool quiet, int verbose);

}  // namespace tf

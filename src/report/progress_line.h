// The one line of progress an optimization shows: a bar of the budget spent, the candidates
// measured, verified and failed, and the best so far.
#pragma once

#include <string>

namespace tf {

// "[#####---------------] 12/60 s  40 candidates, 31 verified, 2 failed; best 1.84x (...)": the
// bar `bar` characters wide; without a budget (0), "[ 12.0s] 40 candidates, ...".
std::string progressLine(double elapsed_s, double budget_s, int tried, int verified, int failed,
                         const std::string& best, int bar = 20);

}  // namespace tf

// Two runs of one program compared by what they print: the numbers on their output lines
// (a loss, logits' statistics, a checksum), pairwise, within a tolerance. `run --overlay
// --compare` uses it to show that the tuned kernels leave the program's result unchanged.
#pragma once
#include <optional>
#include <string>

namespace tf {

struct OutputComparison {
  size_t lines = 0;        // lines compared (those the filter keeps)
  size_t values = 0;       // numbers compared
  double max_abs = 0;      // the largest |a - b|
  double max_rel = 0;      // the largest |a - b| / |b| (b != 0)
  bool same = true;        // every pair within atol + rtol * |b|, and the same text around them
  std::string difference;  // the first that is not, when !same: "line 3: 2.3051 against 2.3107"
};

// Compares the lines of `as_written` and `tuned` that match `line_filter` (ECMAScript regex;
// empty: every line). Numbers are compared within atol + rtol * |as written| (nan equals nan);
// the text between them must be equal. Throws UserError for a bad regex.
OutputComparison compareOutputs(const std::string& as_written, const std::string& tuned, double rtol, double atol,
                                const std::string& line_filter);

}  // namespace tf

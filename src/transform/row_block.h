// rows-per-program mode=block: what changes when a kernel written for one row per program
// takes ROWS rows as one 2-D tile. The row variable becomes a column of row indices
// ([ROWS, 1]); every value computed from it broadcasts to 2-D by itself, so the analysis
// only has to find what does not: reductions and scans over the row (they must run along
// axis 1, keeping the dimension), the loads and stores of a row (they also mask the rows
// past the end), values a loop carries that become per-row inside it (their initial value
// must have the per-row shape), and reads of memory the program wrote before (threads of
// different warps now share a row's data: a barrier orders them).
//
// Each value is classed by shape: a scalar or a 1-D vector that no row changes (kept as
// written), a per-row scalar ([ROWS, 1]) or a per-row vector ([ROWS, X]). Anything the
// rewrite cannot carry per row (control flow that depends on the row, indexing a per-row
// value, calls the analysis does not know, atomics) refuses with the line.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "transform/pass_context.h"

namespace tf {

struct RowBlockPlan {
  std::vector<const Node*> reductions;  // full-row reductions: axis 1, keep_dims=True
  std::vector<const Node*> scans;       // scans along the row: axis 1
  std::vector<const Node*> row_access;  // tl.load / tl.store calls of row data: `& (row < n_rows)`
  // Initial values of loop-carried names that become per-row in the loop: the node and its
  // new text, in terms of `rows` (the ROWS_PER_PROGRAM name).
  std::vector<std::pair<const Node*, std::string>> inits;
  std::vector<const Node*> barriers;  // statements that read memory the program wrote before
};

// nullopt (and `why`, naming the line) when the body cannot take its rows as one tile.
// `row` is the row variable (bound once, at the top); `rows` the constexpr ROWS name.
std::optional<RowBlockPlan> planRowBlock(const PassContext& ctx, const std::string& row, const std::string& rows,
                                         std::string* why);

}  // namespace tf

// The analysis column-loop works from (rows-per-program's tile form has its own, row_block.h,
// which also takes loops and ifs): a straight-line kernel body over one row, its row values
// (1-D, built from tl.arange(0, BLOCK)) told apart from its scalars, and its full-row
// reductions.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "transform/pass_context.h"

namespace tf {

struct RowStmt {
  const Node* node = nullptr;
  bool vector = false;                     // defines a row value (or stores one)
  bool store = false;                      // a tl.store statement
  bool barrier = false;                    // tl.debug_barrier()
  std::vector<const Node*> reductions;     // full-row reductions in it, innermost first
  std::string target;                      // the name it defines ("" for a store)
};

struct RowBody {
  std::string block;                       // the constexpr block spanning the row
  std::vector<RowStmt> stmts;              // in source order (docstrings and `pass` left out)
};

// nullopt (and `why`) unless the body is straight-line over one row: one constexpr tile
// extent BLOCK that no program id or loop steps by, no tl.dot, only single-name assignments
// and tl.store statements (and tl.debug_barrier()), 1-D row values, reductions tl.sum /
// tl.max / tl.min over axis 0.
std::optional<RowBody> analyzeRowBody(const PassContext& ctx, std::string* why);

bool isRowReduction(const std::string& tl_function);
// Is `e` a row value, given the names that hold row values? Reductions are scalars.
bool isRowValue(const PassContext& ctx, const Node& e, const std::set<std::string>& vectors);
// The names holding row values just before `at`.
std::set<std::string> rowValuesAt(const PassContext& ctx, const std::vector<RowStmt>& stmts, const Node& at);
// The row-length parameter: the only runtime parameter a row value is compared below
// (`cols < n`), or "".
std::string rowLength(const PassContext& ctx, const RowBody& body);

}  // namespace tf

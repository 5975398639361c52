// The 2-D tile accesses of a GEMM-like K loop, as the rewrites that take them
// over understand them (tensor-cores' descriptor loads and stores, gluon-gemm's
// lowering): a tile `base + r[:, None] * s0 + c[None, :] * s1` masked by
// exactly the bounds of r and c, an index possibly shifted by the K loop's
// offset, or a pointer made before the loop and advanced by one tile per
// iteration (Triton's tutorial form).
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "transform/pass_context.h"

namespace tf {
// A 2-D tile access the descriptor rewrites understand, load or store:
//   base + R[:, None] * S0 + C[None, :] * S1, masked by exactly (R[:, None] <
//   E0) & (C[None, :] < E1)
// with R and C index vectors `start + tl.arange(0, TILE)`.
struct TileAccess {
  const Node *stmt = nullptr; // `a = tl.load(...)` / `tl.store(...)`
  const Node *call = nullptr;
  const Node *use = nullptr; // the statement a descriptor must come before (the
                             // K loop for loads)
  const Node *value = nullptr; // stores: the value stored
  std::string base;            // the pointer parameter
  // The base as a name bound once to `base + offset` (`a_base = a_ptr + pid_b * stride_ab`):
  // that name and the offset's node; empty / null when the pointer adds the parameter itself.
  std::string base_alias;
  const Node *base_offset = nullptr;
  std::string stride[2];       // "1" when implicit
  std::string index[2];        // the index vectors' names
  std::string offset[2];       // the tile's start along each dimension
  std::string tile[2];         // block sizes
  std::string extent[2];       // from the mask
  std::string shift[2]; // a scalar added to the index vector (the K loop's
                        // offset), or ""
  const Node *advance = nullptr; // loads: `p += TILE * stride` in the K loop,
                                 // removed with the pointer
  // What the rewritten code reads again, kept alive: the descriptor its tiles
  // and extents, the access its starts.
  std::vector<const Node *> shape_reads, start_reads;
  std::string descriptor; // its descriptor's name, once made
  bool halves = false; // stores=subtiled: stored in two halves, tile[1] is the
                       // half ("BLOCK_N // 2")
  int operand = -1;    // loads: the dot's operand it feeds (0: A, 1: B)
  // Loads: the descriptor reads the tile's transpose (its first dimension is
  // the contiguous one:
  // `.load([col, row]).T`), or, when `kmajor_flag` names a constexpr parameter,
  // reads it so only when the launcher sets that flag (the operand's layout is
  // known only at run time).
  bool transposed = false;
  std::string kmajor_flag;
};

// The loop that holds the dots (the K loop), and the top-level statement it is
// in: itself, or the tile loop of a persistent kernel around it.
struct DotLoop {
  const Node *loop = nullptr;
  const Node *top = nullptr;
};

// A pointer parameter's tensor, for the names made after it: "b_ptr" -> "b".
std::string tensorName(const std::string &pointer);

// The signature types of the pointers the dots' operands are loaded from ({} if
// unknown).
std::set<std::string> operandTypes(const PassContext &ctx,
                                   const std::vector<const Node *> &dots);

// An expression's text without spaces or line continuations, to compare two as
// written.
std::string squeeze(std::string_view text);

// Does the statement hold a tl.dot?
bool holdsDot(const PassContext &ctx, const Node &s);

// The loop that holds the dots, inside a persistent kernel's tile loop if there
// is one.
DotLoop findDotLoop(const PassContext &ctx);

// Each dot operand as a tile load in the K loop (`a = tl.load(...)` just before
// the dot); false with the reason when one is not. A base bound once to a
// parameter plus an offset (`base_alias`) is taken only with `moved_bases` (a
// descriptor made in the kernel would start at the parameter).
bool matchLoads(const PassContext &ctx, const std::vector<const Node *> &dots,
                std::vector<TileAccess> *loads, std::string *why,
                bool moved_bases = false);

// `tl.store(pointer, value, mask=...)` as one statement whose value has the
// tile's shape.
bool parseTileStore(const PassContext &ctx, const Node &stmt, TileAccess *t,
                    std::string *why);

// The value of a name the kernel binds exactly once, bound before `before`;
// nullptr otherwise.
const Node *boundOnce(const PassContext &ctx, const std::string &name,
                      size_t before);

} // namespace tf

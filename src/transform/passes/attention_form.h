// What an attention forward kernel computes, read from its source: the recognition behind
// gluon-attention (which routes such a kernel's launches to the Gluon attention template).
//
// Two facts are established, each where it can be proven:
// 1. What the kernel computes per query row (statically, from the body's values): an
//    abstract evaluation of the kernel body over a small domain of attention values (the Q,
//    K, V tiles, scores c * Q K^T and their masks, the running max, exponentials of their
//    differences, row sums, the scaled accumulator) proves that the key loop carries the
//    online softmax (m_new = max(m, rowmax(s)), p = base^(k * (s - m_new)), alpha =
//    base^(k * (m - m_new)), l = l * alpha + rowsum(p), acc = acc * alpha + p V) and that
//    the kernel stores acc / l; names, statement order, where the scale is applied (to Q
//    before the loop, to the scores, folded with log2(e) into an exp2), tl.exp or tl.exp2,
//    the causal and bounds masks as tl.where(cond, s, -inf) and the accumulation as `+=` or
//    tl.dot's acc do not matter. Anything the domain does not know becomes unknown and the
//    kernel is refused, naming the line.
// 2. Where each program reads and writes (per launch, by the emitted route): the Kernel IR's
//    affine address forms of the four accesses, the mask bounds, the first query row and the
//    loop's bounds as integer expressions of program ids, the loop variable and the
//    parameters. The route evaluates them for every program of the launch's grid and launches
//    the template only when they describe exactly the (batch, head, row) layout it takes.
//
// Entry point: readAttention(ctx, kir, &form, &why).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kernel/kernel_ir.h"
#include "transform/pass_context.h"

namespace tf {

struct AttentionForm {
  // Constexpr flags (`if IS_CAUSAL:`, `x if IS_CAUSAL else y`) this form fixes: the reading
  // says "flag:NAME" when the body tests a flag the form does not fix (the pass then reads
  // one form per value).
  std::map<std::string, bool> flags;
  // Constexpr modes (`if STAGE & 1:`, `STAGE == 2`, `4 - STAGE` passed to a helper) this form
  // fixes to a value: read from a Kernel IR built with it; a call selects the form by value.
  std::map<std::string, int64_t> modes;
  // The Kernel IR the ids and the loop below refer to (readAttention's; one per form when the
  // forms were read from IRs built with their flags' values).
  const KernelIR* kir = nullptr;
  int q = -1, k = -1, v = -1, o = -1;   // Kernel IR access ids
  int lse = -1;                         // the rows' log-sum-exp store, -1 when none
  const IrLoop* loop = nullptr;         // the key loop
  // A second key loop that goes on with the first's softmax over the keys after it (a kernel
  // that visits the keys before its diagonal block unmasked, then the diagonal block masked):
  // its loop and K, V accesses (the same helper inlined twice); null, -1 with one loop.
  const IrLoop* loop2 = nullptr;
  int k2 = -1, v2 = -1;
  bool k_rows = false;                  // K's tile is loaded [keys, head] (then transposed for the dot)
  int head_axis_k = -1;                 // the axis of K's tile along the head dimension
  std::vector<sym::Expr> head_strides;  // head-dimension strides that are parameters: each must be 1
  bool causal = false;
  // The normalized form (each block's probabilities divided by the running sum as it goes, the
  // accumulator stored as it is): a block row with every key masked is NaN there (its own max is
  // -inf), so the route takes a causal call only where every visited block starts at or before
  // the program's first row.
  bool normalized = false;
  // Integer expressions of the Kernel IR (parameters, program ids, the loop variable, locals):
  std::vector<sym::Expr> row_starts;    // the program's first query row, each way the kernel says it
  sym::Expr where_key_bound, where_row_bound;     // null when the masks have none
  // Scale of the scores in the exponent, as factors (Python text over parameters and module
  // names) and the exponent's base (2 for exp2, 0 for e).
  std::vector<std::string> scale;
  int base = 0;
  // Finite values the masks give scores instead of -inf (-1e6): each as its number (Python
  // text) and the scores' factors it was written among. Exact like -inf when, in the
  // exponent, it is far below every score: the route checks value * scale / factors <= -1e4
  // (in nats) on each call.
  struct Fill {
    std::string value;
    std::vector<std::string> at;
  };
  std::vector<Fill> fills;
  std::string p_cast;                   // what P is cast to before P V: "float16", "bfloat16", "input"
  std::string out_cast;                 // what the output is cast to, "" when stored as computed
  std::vector<std::string> notes;
};

// Reads the kernel as an attention forward; false with `why` (one line, naming a line of the
// kernel where it can) when it is not one the template computes.
bool readAttention(const PassContext& ctx, const KernelIR& kir, AttentionForm* form, std::string* why);

// Block pointers' boundary checks read as the masks they are (before readAttention): along a
// checked axis, the tile's index (the block pointer's offset there plus the tile's arange)
// below the block pointer's shape there, a load's lanes outside reading its padding, which
// must be zero (`padding_option="zero"`; without it the check stays and is refused). An axis
// the tile covers whole from offset 0 (the head dimension) is always inside and needs no mask.
void adoptBoundaryChecks(KernelIR& kir);

// An integer expression of the Kernel IR as Python text: locals expanded, program ids as
// program_id(a), helpers cdiv / min / max as the emitted route defines them.
std::string pythonInt(const KernelIR& kir, const sym::Expr& e);

}  // namespace tf

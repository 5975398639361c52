// Facts derived from the Kernel IR: coalescing and expected access width per access, bytes
// loaded / stored and FLOPs per program (symbolic, and evaluated per case), arithmetic
// intensity, shared memory that dot operands need per pipeline stage, and constraints on
// the tunables (powers of two, dot tiles, divisibility, blocks that must cover a dimension).
//
// Entry points: deriveFacts(KernelIR) (no configuration needed) and estimate(KernelIR,
// AnalysisConfig) (one case x one configuration: integer values of the parameters, pointer
// types, num_warps / num_stages, the grid).
//
// Models (docs/analyze.md says the same):
// - Coalescing: an access is coalesced when one tile axis has unit stride (Triton's coalescing
//   pass lays threads along it, whichever axis it is); uncoalesced when every stride is known
//   and none is 1; unknown otherwise (a stride parameter whose value is not known, a gather).
// - Width: elements per thread along the unit axis = min(16 bytes / element, the axis extent,
//   tile elements / threads, the alignment of the offset, of other strides and of the mask's
//   bound); Triton specializes integer arguments divisible by 16 and equal to 1.
// - Bytes: every lane of every access counts (masked-off lanes too): an upper bound for
//   programs at a boundary. FLOPs: dot 2*M*N*K; each elementwise operation on floating-point
//   data 1 per element (fma 2); a reduction or scan 1 per input element.
// - Shared memory: buffers of each dot operand loaded inside the loop, num_stages of them on
//   the wgmma path and num_stages - 1 on the mma path (Triton 3.6's software pipeliner), if
//   the load can be copied asynchronously (cp.async needs >= 4 bytes per thread; TMA always
//   can); one buffer otherwise and for operands loaded outside the loop. This matches Triton's
//   allocation for the corpus' matmuls and attention exactly (plus a few bytes of barriers).
//   The store of a dot's result may go through shared memory; Triton reuses the operand
//   buffers for it, so the total is max(operand buffers, accumulator tile). Dots with 8-bit
//   operands are given as a range (Triton 3.6 did not multi-buffer them in our measurements).
//   Other layout conversions and reduction scratch are not counted.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kernel/kernel_ir.h"
#include "worker/target.h"

namespace tf {


struct Coalescing {
  std::string verdict;           // "coalesced", "uncoalesced", "depends", "unknown", "scalar", "tma"
  int unit_axis = -1;            // tile axis with unit stride
  int inner_axis = -1;           // the innermost tile axis with extent > 1
  bool innermost_unit = false;   // the unit-stride axis is the innermost one
  std::string condition;         // for "depends": "stride_ak == 1"
  std::string note;
};

struct Constraint {
  std::string kind;              // "power_of_two", "dot_min", "divides", "covers", "shared_memory", "warps_power_of_two"
  std::vector<std::string> params;  // constexpr parameters involved
  sym::Expr lhs, rhs;            // kind-specific: power_of_two: lhs; min: lhs >= rhs; divides: lhs % rhs == 0; covers: lhs >= rhs
  std::string text;              // "BLOCK_K >= 16"
  std::string why;
  bool required = true;          // false: advice (efficiency), true: compile / correctness
  sym::Expr when;                // applies only when this holds (the accesses behind it are guarded); null: always
  std::string when_text;
};

struct KernelStaticFacts {
  std::vector<Coalescing> coalescing;   // per access, same order
  sym::Expr bytes_loaded, bytes_stored, flops;  // per program; null when unknown
  std::vector<std::string> notes;       // what the totals leave out or assume
  sym::Expr smem_per_stage;             // bytes of dot operands loaded in the dot's loop, per stage; null: none
  sym::Expr smem_unpipelined;           // dot operands loaded outside the loop
  std::vector<std::string> smem_parts;  // "a_ptr tile BLOCK_M x BLOCK_K (line 20)"
  struct SmemOperand {
    int access = -1;
    sym::Expr bytes;                    // one buffer
    bool in_loop = false;               // loaded in the dot's loop: pipelined when it can be copied asynchronously
  };
  std::vector<SmemOperand> smem_operands;
  // The accumulator re-laid out through shared memory for its store (Triton reuses the
  // operand buffers for it: the total is the larger of the two); null when no store of a dot's result.
  sym::Expr smem_epilogue;
  std::vector<Constraint> constraints;
};

KernelStaticFacts deriveFacts(const KernelIR& ir);

// One case x one configuration.
struct AnalysisConfig {
  std::string label;
  std::map<std::string, int64_t> values;       // integer parameters and constexprs
  std::map<std::string, std::string> types;    // parameter -> Triton type ("*fp16")
  int64_t num_warps = 4, num_stages = 3;
  std::optional<std::array<int64_t, 3>> grid;
  int64_t smem_limit = kSm90SharedPerBlock;
};

struct AccessEstimate {
  int access = -1;
  std::string verdict;                  // as Coalescing, with the configuration's values
  int unit_axis = -1;
  std::optional<int64_t> elem_bytes, vector_elems, width_bytes;
  std::optional<double> sectors_per_request;
  std::optional<double> bytes_per_program;
  std::string limited_by;               // what bounds the width
  std::optional<bool> active;           // its guards hold (false: in a branch not taken; nullopt: unknown)
  bool async_copy = false;              // in a loop pipelined by tl.range(num_stages=...): a cp.async copy
};

// Which instruction a dot becomes on sm_90 (Triton 3.6's choice): "wgmma" when the tile's M
// is a multiple of 64, N a multiple of 8, num_warps a multiple of 4 and the dot is 2-D with
// 16/8-bit (or tf32) operands; "fma" for fp32 operands with input_precision "ieee"; "mma" otherwise.
struct DotEstimate {
  int dot = -1;
  std::string tensor_core;              // "wgmma", "mma", "fma", "" unknown
  std::string why;
};

struct SharedMemoryEstimate {
  bool applies = false;                 // the kernel has dots
  std::optional<int64_t> per_stage, stages, unpipelined, total;
  std::optional<int64_t> buffers;       // operand buffers: num_stages (wgmma) or num_stages - 1 (mma)
  std::optional<int64_t> lower;         // when whether an operand is pipelined is unknown: total if it is not
  std::optional<int64_t> epilogue;      // accumulator tile stored through shared memory (at most)
  std::vector<int> unpipelined_operands;  // loads in the loop too narrow for cp.async (< 4 bytes per thread): one buffer
  int64_t limit = kSm90SharedPerBlock;
  std::optional<bool> fits;
};

struct ConstraintCheck {
  std::string status;                   // "ok", "violated", "unknown"
  std::string detail;
};

struct CostEstimate {
  std::optional<double> bytes_loaded, bytes_stored, flops;  // per program (mean over programs)
  bool varies_per_program = false;
  std::optional<double> programs;
  std::optional<double> total_bytes, total_flops;
  std::optional<double> intensity;      // FLOPs per byte
  std::vector<AccessEstimate> accesses;
  std::vector<DotEstimate> dots;
  SharedMemoryEstimate smem;
  std::vector<ConstraintCheck> constraints;  // same order as KernelStaticFacts::constraints
  std::vector<std::string> notes;
};

CostEstimate estimate(const KernelIR& ir, const KernelStaticFacts& facts, const AnalysisConfig& config);

// Divisibility Triton sees for an integer argument (JIT specialization): 16 when it is a
// multiple of 16, else 1 (value 1 becomes a constant).
int64_t specializedDivisibility(int64_t value);

}  // namespace tf

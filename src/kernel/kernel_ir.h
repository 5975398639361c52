// The Kernel IR: what one @triton.jit kernel does, read from its source (the worker's
// parse), before anything compiles. Built by an abstract interpretation of the body that
// tracks, for every value, its tile shape (symbolic dimensions), its element type where
// knowable, and for integer / pointer values an affine form: a uniform scalar offset plus
// a sum of (tl.arange along one tile axis) x (stride). Calls into other @triton.jit
// functions of the module are inlined (their facts say `via`).
//
// Entry point: buildKernelIR(ModuleIR, Kernel, ParamTypes). Derived facts (coalescing,
// bytes and FLOPs, shared memory, constraints) are in kernel/kernel_cost.h; JSON in
// kernel/kernel_ir_json.h.
//
// What the builder does not understand it records in `opaque` (position, text, reason) and
// carries on with an unknown value: never a crash, never a guess presented as a fact.
// Fields that could not be determined are empty strings / null expressions.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kernel/module_ir.h"
#include "kernel/sym_expr.h"

namespace tf {

// Triton types of a kernel's parameters, when known (from a task's [signature] or a case):
// "*fp16" (pointer), "i32", "i64", "fp32", "i1"; constexpr values go in `values`.
struct ParamTypes {
  std::map<std::string, std::string> types;
  std::map<std::string, int64_t> values;   // integers known for this configuration (constexprs)
  // An `if` whose test is a constant under `values` (a constexpr flag) reads only the branch
  // it takes, as Triton compiles it; off, both are read under guards (what the kernel may do
  // for any value).
  bool prune_constant_branches = false;
  // A tensor descriptor built on the host (a TensorDescriptor argument) whose block shape the
  // type gives: its strides and shape read as the symbols `NAME.strides[i]` and `NAME.shape[i]`
  // (what a caller holding the argument can evaluate), so its accesses get affine addresses.
  // Off, they are not understood (the strides are the launcher's).
  bool symbolic_host_descriptors = false;
};

struct IrLoc {
  int line = 0, col = 0;
};

enum class ParamKind { kPointer, kScalar, kConstexpr, kDescriptor, kUnused, kUnknown };
const char* toString(ParamKind k);

struct IrParam {
  std::string name;
  int index = 0;
  ParamKind kind = ParamKind::kUnknown;
  std::string annotation;     // source text
  std::string default_text;   // source text of the default, "" if none
  std::string type;           // bound Triton type, "" if unknown
  std::string evidence;       // why it has this kind
  bool used = true;           // mentioned in the body
};

// A guard: the access runs only when `cond` (or its negation) holds.
struct IrGuard {
  sym::Expr cond;             // null when the condition is not an integer expression
  std::string text;
  bool negated = false;
};

struct IrLoop {
  int id = 0;
  int parent = -1;            // enclosing loop, -1 at the top
  int depth = 0;              // 1 for an outermost loop
  IrLoc loc;
  std::string kind;           // "range", "tl.range", "tl.static_range", "while"
  std::string var;            // the loop variable ("" for while)
  sym::Expr start, stop, step;
  sym::Expr trips;            // trip count; null when unknown
  std::string trips_note;     // why unknown, or what it depends on
  std::optional<int64_t> num_stages, loop_unroll_factor;
  bool warp_specialize = false, flatten = false, disallow_acc_multi_buffer = false;
  std::vector<IrGuard> guards;
  std::vector<std::string> via;
};

// One (tl.arange along a tile axis) x stride part of an address.
struct IndexTerm {
  int axis = 0;               // axis of the access tile
  sym::Expr stride;           // in elements
  sym::Expr extent;           // the arange's length
  std::string index;          // "arange(0, BLOCK_M)"
  std::string wrap;           // "% M" when the index wraps (the grouped-matmul idiom), else ""
  sym::Expr wrap_by;          // M
};

// base + offset + sum(index x stride): the pointer of an access.
struct PointerForm {
  bool affine = false;              // every part understood
  std::string base;                 // pointer parameter ("" when not found)
  std::string base_evidence;        // "type *fp16", "only pointer-like addend", ...
  sym::Expr offset;                 // uniform over the tile (program ids, loop variables, params)
  std::vector<IndexTerm> terms;
  std::vector<std::string> irregular;  // parts that are not affine in an arange ("gather: loaded index")
};

struct MaskBound {
  int axis = -1;              // tile axis of the compared index (-1: not one axis)
  std::string index;          // the index compared
  sym::Expr index_offset;     // the uniform part of that index (program ids, loop variables)
  sym::Expr bound;            // index < bound
  std::string text;
};

enum class AccessKind { kLoad, kStore, kAtomic };
const char* toString(AccessKind k);

struct IrAccess {
  int id = 0;
  AccessKind kind = AccessKind::kLoad;
  std::string op;             // atomic op: "add", "max", "cas", "xchg", ...; "" otherwise
  std::string api;            // "tl.load", "tl.store", "tl.atomic_add", "desc.load", ...
  IrLoc loc;
  std::string text;           // the pointer argument's source text (shortened)
  int loop = -1;              // innermost enclosing loop
  std::vector<std::string> via;   // jit functions it was inlined from, outermost first
  std::vector<IrGuard> guards;
  std::vector<sym::Expr> shape;   // the tile ({} for a scalar access)
  bool shape_known = false;
  std::string dtype;              // element type, "" if unknown
  PointerForm ptr;
  int block_ptr = -1;             // index into KernelIR::block_ptrs
  int descriptor = -1;            // index into KernelIR::descriptors
  std::vector<sym::Expr> desc_offsets;
  std::string mask, other;        // source text, "" if none
  std::vector<MaskBound> mask_bounds;
  std::string cache_modifier, eviction_policy, boundary_check, padding_option, sem, scope;
  bool is_volatile = false;
  bool value_from_dot = false;    // a store / atomic of a value computed from a dot's result
};

struct IrBlockPtr {
  int id = 0;
  IrLoc loc;
  std::string base;
  std::vector<sym::Expr> shape, strides, offsets, block_shape;
  sym::Expr base_offset;       // elements added to the base pointer (`base=Q + off`), null when none
  std::vector<int> order;
  int advanced_from = -1;      // tl.advance of this block pointer
  std::vector<sym::Expr> advance;
};

struct IrDescriptor {
  int id = 0;
  IrLoc loc;
  std::string base;            // pointer (device-side make_tensor_descriptor) or parameter (host-side)
  bool host = false;           // a kernel parameter built on the host (TensorDescriptor)
  std::vector<sym::Expr> shape, strides, block_shape;
};

struct IrDot {
  int id = 0;
  IrLoc loc;
  int loop = -1;
  std::vector<std::string> via;
  std::vector<IrGuard> guards;
  sym::Expr m, n, k, batch;    // null when unknown; batch null for 2-D dots
  std::string a_dtype, b_dtype, acc_dtype, out_dtype;
  std::string input_precision;  // "tf32", "ieee", "tf32x3", "" default
  std::optional<bool> allow_tf32;
  bool has_acc = false;
  bool scaled = false;         // tl.dot_scaled
  int a_access = -1, b_access = -1;  // the loads the operands come from (after casts / transposes)
  bool b_transposed = false;
  std::string text;
};

struct IrReduction {
  int id = 0;
  IrLoc loc;
  int loop = -1;
  std::vector<std::string> via;
  std::string op;              // "sum", "max", "argmax", "reduce", "cumsum", "associative_scan", ...
  bool scan = false;
  std::optional<int> axis;     // nullopt: all axes
  bool axis_known = true;
  std::vector<sym::Expr> in_shape;
  bool shape_known = false;
  std::string dtype;
  bool keep_dims = false;
};

struct IrCast {
  IrLoc loc;
  int loop = -1;
  std::string from, to;        // "" when unknown
  bool bitcast = false;
  std::vector<sym::Expr> shape;
  bool shape_known = false;
};

// Elementwise math on data (not index arithmetic): one entry per operation in the source.
struct IrMath {
  IrLoc loc;
  int loop = -1;
  std::vector<std::string> via;
  std::vector<IrGuard> guards;
  std::string op;              // "add", "mul", "exp", "fma", ...
  int flops = 1;               // per element
  std::vector<sym::Expr> shape;
  bool shape_known = false;
  std::string dtype;
};

struct IrCall {
  IrLoc loc;
  std::string callee;
  bool inlined = false;
  std::string note;
};

struct IrOpaque {
  IrLoc loc;
  std::string text;
  std::string reason;
};

// How a program id selects what a program computes.
struct PidUse {
  int access = -1;
  std::string base;            // the pointer parameter of the store / atomic
  std::string kind;            // "tile": steps over tiles of `dim`; "offset": scales `stride` (one row per program)
  int dim = -1;
  sym::Expr extent;            // the tile's extent along dim ("tile") or 1 ("offset")
  sym::Expr stride;
  std::string through;         // the local that carries it ("pid_m"), "" if direct
};

struct IrProgramAxis {
  int axis = 0;
  std::vector<std::string> names;   // locals bound to it (directly or derived)
  bool grouped = false;              // reaches more than one output dimension (grouped / swizzled order)
  std::vector<PidUse> uses;
};

struct KernelIR {
  std::string name;
  IrLoc loc;
  std::vector<IrParam> params;
  std::vector<IrProgramAxis> program_axes;
  std::vector<IrLoop> loops;
  std::vector<IrAccess> accesses;
  std::vector<IrBlockPtr> block_ptrs;
  std::vector<IrDescriptor> descriptors;
  std::vector<IrDot> dots;
  std::vector<IrReduction> reductions;
  std::vector<IrCast> casts;
  std::vector<IrMath> math;
  std::vector<IrCall> calls;
  std::vector<IrOpaque> opaque;
  std::vector<std::string> notes;
  // Scalar locals assigned once, by name: their definitions (used to evaluate and expand).
  // Written through setLocal (it invalidates expand's memo).
  std::map<std::string, sym::Expr> locals;
  // Constexpr parameters by what they do (a tile extent, a loop step, ...), for constraints.
  std::set<std::string> tile_params;      // tl.arange extents and tensor shapes: powers of two
  std::set<std::string> static_range_params;

  const IrParam* param(std::string_view n) const;
  // Expands locals into parameters / program ids (for display and evaluation). Each local is
  // expanded once and remembered: program axes and the cost model expand every addend of
  // every access (the memo is not locked: a KernelIR is used by one thread at a time).
  sym::Expr expand(const sym::Expr& e) const;
  void setLocal(const std::string& name, const sym::Expr& def);

 private:
  sym::Expr expandLocal(const std::string& name, std::set<std::string>& active, bool& cyclic) const;
  mutable std::map<std::string, sym::Expr> expanded_locals_;
};

KernelIR buildKernelIR(const ModuleIR& ir, const Kernel& kernel, const ParamTypes& types = {});

// Element size in bytes of a Triton dtype name ("fp16" -> 2); 0 when unknown.
int dtypeBytes(const std::string& dtype);
bool isFloatDtype(const std::string& dtype);

// Variable names the IR uses for program ids and loop iteration counters.
std::string pidVar(int axis);            // "program_id(0)"
std::string numProgramsVar(int axis);    // "num_programs(0)"

}  // namespace tf

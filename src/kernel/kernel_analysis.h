// Facts about one kernel's body that the optimizer needs before it spends GPU time:
// tile shapes (a small symbolic shape inference over the body), the dots and their
// M/N/K tiles, how each constexpr parameter is used (tile extent, stepped by program id,
// stepped by a loop), loops and memory operations.
//
// Entry point: analyzeKernel(ModuleIR, Kernel). Shapes are lists of dimension texts
// ("BLOCK_M", "128"); what cannot be inferred stays unknown, never guessed.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kernel/module_ir.h"

namespace tf {

using Shape = std::vector<std::string>;  // dimension texts; {} is a scalar

struct DotFact {
  std::string m, n, k;            // tile dimension texts
  const Node* call = nullptr;
  bool in_loop = false;
  int loop_depth = 0;             // loops around it (an implicit-GEMM convolution: 3)
};

struct ParamUsage {
  bool used = false;
  bool tile_extent = false;       // a tile dimension: tl.arange(0, P), a tile shape, block_shape
  bool pid_scaled = false;        // multiplied with a program-id value (programs step by P)
  bool loop_stepped = false;      // a loop steps by P (range(.., .., P), range(cdiv(X, P)), i * P)
  std::string dot_role;           // "m", "n", "k" or ""
  bool index_arith = false;       // appears in scalar integer arithmetic with program ids (GROUP_M)
  std::set<int> pid_axes;         // grid axes whose program id is multiplied by P
};

struct KernelFacts {
  std::vector<DotFact> dots;
  std::map<std::string, ParamUsage> params;   // constexpr parameters only
  int loops = 0;
  bool loop_has_load = false;
  int loads = 0, stores = 0, atomics = 0, reductions = 0;
  bool calls_exp = false;   // tl.exp: the exp2 pass may fold log2(e) into a scale
  bool calls_exp2 = false;  // tl.exp2 / tl.math.exp2: a softmax written in base 2 already
  // In the @triton.jit helpers the kernel calls (read for these facts only, not inlined): dots
  // inside a loop (of the helper, or around the call), and whether they call tl.exp / tl.exp2.
  int helper_dots_in_loops = 0;
  bool helper_calls_exp = false;
  // A function of the module that launches the kernel sums, after the launch, a tensor it
  // passes to it, whole or along one dimension (torch.sum(t), t.sum(0), t.mean(dim=1)): what
  // the fused-sum pass rewrites.
  bool launcher_sums = false;
  // Such a function converts a tensor it passes to the launch to a dtype after the launch
  // (t.to(dtype), t.bfloat16(), ...): what the fused-cast pass rewrites.
  bool launcher_converts = false;
  // The shape of the value each tl.store call stores (positional value), where inferred:
  // a descriptor store needs a value of exactly its block shape.
  std::map<const Node*, Shape> store_values;
  // The shape of the tile each tl.load call loads (its pointer's), where inferred.
  std::map<const Node*, Shape> load_values;
  std::vector<std::string> notes;
};

KernelFacts analyzeKernel(const ModuleIR& ir, const Kernel& kernel);

}  // namespace tf

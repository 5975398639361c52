// Facts read from what Triton compiled (TTGIR, PTX, SASS), for the diagnosis: whether each
// tl.dot runs on tensor cores or became FMA loops, which matrix instructions and types, how
// wide the global loads are, and local-memory traffic (spills) in the SASS.
//
// This is the diagnosis's own small reader of compiled texts: it needs only the texts
// (CompiledTexts), wherever they come from (the worker's `run` with "asm" asked, its `compile`
// op, or files given to `tritonforge diagnose --asm`). Entry point: staticFactsFromTexts.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tf {

struct CompiledTexts {
  std::string ttgir, ptx, sass;
  bool empty() const { return ttgir.empty() && ptx.empty() && sass.empty(); }
  // {"ttgir": "...", "ptx": "...", "sass": "..."} (missing keys stay empty).
  static CompiledTexts fromJson(const nlohmann::json& j);
};

struct StaticFacts {
  std::vector<std::string> sources;           // the texts that were read: "ttgir", "ptx", "sass"
  // TTGIR: tt.dot / warp_group_dot operations, and how they were lowered.
  int dots = -1;                              // -1: no TTGIR
  int dots_on_tensor_cores = 0;               // warp_group_dot, or tt.dot with an #mma result
  int dots_on_fma = 0;                        // tt.dot with a blocked result: FMA loops
  std::vector<std::string> dot_operand_types; // "f32", "f16", ... one per dot
  std::vector<std::string> dot_input_precisions;  // "ieee", "tf32", ... where stated
  // PTX (else SASS): matrix instructions.
  int mma_instructions = -1;                  // wgmma + mma.sync (PTX) or HGMMA + HMMA (SASS); -1: neither text
  std::string mma_kind;                       // "wgmma" | "mma.sync" | "" (none)
  std::vector<std::string> mma_input_types;   // "f16", "bf16", "tf32", "e4m3", ...
  // Global loads by width in bits (PTX ld.global, else SASS LDG).
  std::map<int, int> global_loads_by_bits;
  // SASS local memory instructions (register spills, or local arrays).
  int local_loads = -1, local_stores = -1;    // -1: no SASS

  bool hasDotInfo() const { return dots >= 0 || mma_instructions >= 0; }
  // A tl.dot that does not run on tensor cores (TTGIR says so, or the PTX/SASS has no
  // matrix instruction at all while the TTGIR has dots).
  bool dotOnFma() const;
  // The load width (bits) with the most instructions; 0 when unknown.
  int dominantLoadBits() const;
  nlohmann::json toJson() const;
};

StaticFacts staticFactsFromTexts(const CompiledTexts& texts);

// The roofline's compute ceiling for a kernel: "fp16", "bf16", "tf32", "fp8" (tensor cores,
// from the matrix instructions' input type) or "fp32" (no matrix instructions, or unknown).
std::string computeClassOf(const StaticFacts& facts);

}  // namespace tf

// Discovery of the tunable launch parameters of a source: constexpr tile / block sizes,
// num_warps and num_stages, for every kernel the launcher launches, with where each
// value is written and how to rewrite it.
//
// Handled: literals at the launch site; launcher variables bound to a literal or computed
// from shapes (triton.next_power_of_2(n)); module-level constants; kernel defaults;
// @triton.autotune configs (which also seed the search) and @triton.heuristics; grids as
// tuples, variables or `lambda META: ...`. A parameter that spans a whole dimension
// (a row-wise kernel with no loop needs BLOCK >= the row) is marked so that the search
// never shrinks it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kernel/kernel_analysis.h"
#include "kernel/module_ir.h"

namespace tf {

enum class TunableOrigin {
  kLaunchLiteral,   // kernel[grid](..., BLOCK=128)
  kLocalLiteral,    // BLOCK = 128 in the launcher, then BLOCK=BLOCK
  kLocalDerived,    // BLOCK = triton.next_power_of_2(n): a value per case
  kLaunchOverride,  // num_warps=nw with nw set in several places: the launch value is replaced
  kModuleConstant,  // BLOCK = 1024 at module level
  kKernelDefault,   // BLOCK: tl.constexpr = 128, not passed at the launch
  kAbsentOption,    // num_warps / num_stages not given: Triton's default applies
  kAutotune,        // a key or option of @triton.autotune's configs
  kHeuristic,       // @triton.heuristics lambda
  kLauncherScale,   // num_sm = props.multi_processor_count, a grid computed from it: the read
                    // scaled by the tunable's percent (`(read * V // 100)`); no kernel parameter
};

enum class TunableRole { kTileM, kTileN, kTileK, kBlock, kGroup, kNumWarps, kNumStages, kOther };

const char* toString(TunableOrigin origin);
const char* toString(TunableRole role);

// A value of a tunable in a configuration. kKeep: leave the source as written (for
// derived values, the original expression).
inline constexpr int64_t kKeep = INT64_MIN;

struct Tunable {
  std::string id;                  // "kernel.PARAM", "kernel.num_warps"; "#2" suffix for a 2nd launch site
  std::string kernel;
  std::string param;               // constexpr name, or num_warps / num_stages
  int site = -1;                   // launch site index (-1: autotune / heuristics)
  TunableOrigin origin = TunableOrigin::kLaunchLiteral;
  TunableRole role = TunableRole::kOther;
  std::optional<int64_t> value;    // as written, or Triton's default for an absent option
  std::string expr_text;           // the expression, for derived values
  Range target;                    // text to replace; for kAbsentOption an empty range (insertion point)
  std::string insert_suffix;       // written after the value (kLauncherScale: " // 100)")
  std::string insert_prefix;       // written before the value: ", num_warps=" for kAbsentOption,
                                   // "lambda args: " for a heuristic given as a function's name
  std::vector<Range> mirrors;      // grid literals that repeat the value and must change with it
  bool covers_dimension = false;   // spans a whole dimension: never below the value as written
  std::vector<int64_t> choices;    // the distinct values a @triton.autotune config list offers
  bool configs_unread = false;     // set by @triton.autotune configs computed at run time (not a
                                   // literal list): no value as written; a candidate writes a
                                   // literal one-config list with every such parameter, or none
  bool tunable = true;             // false: found but left alone (see note)
  std::string note;
};

struct TunableSet {
  std::vector<Tunable> items;
  std::vector<int> sites;                       // launch sites reached from the launcher
  std::map<std::string, KernelFacts> facts;     // per launched kernel
  std::vector<std::string> notes;

  const Tunable* find(std::string_view id) const;
  std::vector<const Tunable*> active() const;   // the tunable ones
};

// `launcher`: the launcher function's name; its launch sites and those of the functions it
// calls (in this module) count. `only_kernels`: when not empty, other kernels are left alone.
// `backward`: the sites of the backward methods of the autograd Functions the launcher
// reaches (and what they call) count instead.
TunableSet discoverTunables(const ModuleIR& ir, const std::string& launcher,
                            const std::vector<std::string>& only_kernels, bool backward = false);

// The tunables as result.json and `analyze --json` list them.
nlohmann::json tunablesJson(const TunableSet& tunables);

}  // namespace tf

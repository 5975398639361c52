// Writes a configuration of tunable values into the source: the `retile` and `launch`
// rewrites of the foundation (literal values, launcher variables, kernel defaults,
// inserted num_warps / num_stages, a baked @triton.autotune config list).
#pragma once

#include <map>
#include <string>

#include "kernel/tunables.h"
#include "variant/config.h"

namespace tf {

// The source with `config` applied. Tunables missing from `config` stay as written.
std::string applyConfig(const ModuleIR& ir, const TunableSet& tunables, const Config& config);

// "BLOCK_M=128 BLOCK_N=64 num_warps=8" (short ids, values as written for kKeep).
std::string describeConfig(const TunableSet& tunables, const Config& config);

}  // namespace tf

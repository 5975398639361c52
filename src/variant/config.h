// A configuration: the value of each tunable of a source (tunable id -> value; kKeep: as
// written). The search proposes configurations, transform/apply_config writes them into the
// source, the results database keys measurements by their canonical text.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "kernel/tunables.h"

namespace tf {

using Config = std::map<std::string, int64_t>;

// {"k.BLOCK": 128, "k.num_warps": "as-written"}.
nlohmann::json configJson(const Config& config);
// configJson as canonical text (the database's `params`).
std::string configKey(const Config& config);
// Parses configKey's text back; nullopt when it is not a configuration.
std::optional<Config> configFromKey(const std::string& text);

}  // namespace tf

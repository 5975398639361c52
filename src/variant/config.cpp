#include "variant/config.h"

namespace tf {

nlohmann::json configJson(const Config& config) {
  nlohmann::json cfg = nlohmann::json::object();
  for (const auto& [k, v] : config) cfg[k] = v == kKeep ? nlohmann::json("as-written") : nlohmann::json(v);
  return cfg;
}

std::string configKey(const Config& config) { return configJson(config).dump(); }

std::optional<Config> configFromKey(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  Config c;
  for (const auto& [k, v] : j.items()) {
    if (v.is_number_integer()) c[k] = v.get<int64_t>();
    else if (v == "as-written") c[k] = kKeep;
    else return std::nullopt;
  }
  return c;
}

}  // namespace tf

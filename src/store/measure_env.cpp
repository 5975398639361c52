#include "store/measure_env.h"

#include <cmath>

#include "worker/protocol.h"

namespace tf {
namespace {

nlohmann::json canonicalValue(const nlohmann::json& v) {
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9007199254740992.0) return static_cast<int64_t>(d);
    return d;
  }
  if (v.is_number_unsigned()) return static_cast<int64_t>(v.get<uint64_t>());
  if (v.is_object()) {
    nlohmann::json out = nlohmann::json::object();  // keys sorted by nlohmann::json itself
    for (const auto& [k, x] : v.items()) out[k] = canonicalValue(x);
    return out;
  }
  if (v.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& x : v) out.push_back(canonicalValue(x));
    return out;
  }
  return v;
}

std::string textOf(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return "";
  return j[key].get<std::string>();
}

}  // namespace

std::string canonicalTiming(const nlohmann::json& timing) { return canonicalValue(timing).dump(); }

std::string MeasureEnv::key() const {
  // An array, not an object: the order is fixed here and adding a field changes every key.
  return nlohmann::json::array({gpu, driver, triton, worker_protocol, tool_version, torch, cuda, timing}).dump();
}

MeasureEnv measureEnvOf(const nlohmann::json& hello, const nlohmann::json& timing) {
  MeasureEnv env;
  nlohmann::json gpu = hello.is_object() && hello.contains("gpu") ? hello["gpu"] : nlohmann::json();
  env.gpu = textOf(gpu, "name");
  env.driver = textOf(gpu, "driver");
  env.triton = textOf(hello, "triton");
  env.worker_protocol = kWorkerProtocolVersion;
  if (hello.is_object() && hello.contains("protocol") && hello["protocol"].is_number_integer()) {
    env.worker_protocol = hello["protocol"].get<int>();
  }
  env.torch = textOf(hello, "torch");
  env.cuda = textOf(hello, "cuda_runtime");
  env.timing = canonicalTiming(timing);
  return env;
}

}  // namespace tf

#include "diagnose/diagnosis.h"

namespace tf {

const char* toString(Bottleneck b) {
  switch (b) {
    case Bottleneck::kMemoryBound: return "memory-bound";
    case Bottleneck::kComputeBound: return "compute-bound";
    case Bottleneck::kLatencyBound: return "latency-bound";
    case Bottleneck::kBalanced: return "balanced";
    case Bottleneck::kUnknown: return "unknown";
  }
  return "unknown";
}

nlohmann::json Finding::toJson() const {
  nlohmann::json j = {{"kind", kind}, {"severity", severity}, {"summary", summary}, {"evidence", evidence},
                      {"suggestions", suggestions}};
  if (kind == "low-occupancy") j["limiter"] = detail;
  else if (kind == "long-stalls") j["reason"] = detail;
  else if (!detail.empty()) j["detail"] = detail;
  return j;
}

const Finding* Diagnosis::find(const std::string& kind) const {
  for (const auto& f : findings) {
    if (f.kind == kind) return &f;
  }
  return nullptr;
}

nlohmann::json Diagnosis::toJson() const {
  nlohmann::json fs = nlohmann::json::array();
  for (const auto& f : findings) fs.push_back(f.toJson());
  return {{"name", kernel},       {"bottleneck", toString(bottleneck)}, {"basis", basis},
          {"bottleneck_evidence", bottleneck_evidence}, {"findings", fs}, {"sources", sources},
          {"notes", notes},       {"metrics", metrics}};
}

}  // namespace tf

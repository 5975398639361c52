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

std::optional<Bottleneck> bottleneckFromString(std::string_view text) {
  for (Bottleneck b : {Bottleneck::kMemoryBound, Bottleneck::kComputeBound, Bottleneck::kLatencyBound,
                       Bottleneck::kBalanced, Bottleneck::kUnknown}) {
    if (text == toString(b)) return b;
  }
  return std::nullopt;
}

std::optional<FindingKind> findingOf(Bottleneck b) {
  switch (b) {
    case Bottleneck::kMemoryBound: return FindingKind::kMemoryBound;
    case Bottleneck::kComputeBound: return FindingKind::kComputeBound;
    case Bottleneck::kLatencyBound: return FindingKind::kLatencyBound;
    default: return std::nullopt;
  }
}

nlohmann::json Finding::toJson() const {
  nlohmann::json sugg = nlohmann::json::array();
  for (PassName p : suggestions) sugg.push_back(toString(p));
  nlohmann::json j = {{"kind", toString(kind)}, {"severity", severity}, {"summary", summary}, {"evidence", evidence},
                      {"suggestions", sugg}};
  if (limiter) j["limiter"] = toString(*limiter);
  if (kind == FindingKind::kLongStalls) j["reason"] = detail;
  else if (!detail.empty()) j["detail"] = detail;
  return j;
}

const Finding* Diagnosis::find(FindingKind kind) const {
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

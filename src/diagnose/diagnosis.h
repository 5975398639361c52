// What holds a kernel back: a primary bottleneck and findings, each with its evidence and the
// transformations (issue 5's pass names) that address it. JSON schema in docs/profile.md.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diagnose/vocabulary.h"

namespace tf {

enum class Bottleneck { kMemoryBound, kComputeBound, kLatencyBound, kBalanced, kUnknown };
const char* toString(Bottleneck b);   // "memory-bound", ... "unknown"
std::optional<Bottleneck> bottleneckFromString(std::string_view text);

// The finding of the whole kernel that a bottleneck is (nullopt for balanced and unknown).
std::optional<FindingKind> findingOf(Bottleneck b);

struct Finding {
  FindingKind kind = FindingKind::kLatencyBound;
  double severity = 0;                    // [0, 1]: the share of the time it plausibly costs
  std::string summary;                    // one line for people
  std::optional<Limiter> limiter;         // low-occupancy: what limits it
  std::string detail;                     // long-stalls: the stall reason; uncoalesced-access: loads or stores
  nlohmann::json evidence = nlohmann::json::object();   // metric values and static facts
  std::vector<PassName> suggestions;      // transformation passes that address it
  nlohmann::json toJson() const;
};

struct Diagnosis {
  std::string kernel;
  Bottleneck bottleneck = Bottleneck::kUnknown;
  std::string basis;                      // what the bottleneck rests on: "ncu" | "roofline" | "none"
  nlohmann::json bottleneck_evidence = nlohmann::json::object();
  std::vector<Finding> findings;          // by severity, highest first
  std::vector<std::string> sources;       // inputs used: "ncu", "static", "launch", "roofline"
  std::vector<std::string> notes;         // what could not be judged, and why
  nlohmann::json metrics = nlohmann::json::object();    // the main figures, for people

  const Finding* find(FindingKind kind) const;
  nlohmann::json toJson() const;
};

}  // namespace tf

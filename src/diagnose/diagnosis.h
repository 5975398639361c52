// What holds a kernel back: a primary bottleneck and findings, each with its evidence and the
// transformations (issue 5's pass names) that address it. JSON schema in docs/profile.md.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tf {

enum class Bottleneck { kMemoryBound, kComputeBound, kLatencyBound, kBalanced, kUnknown };
const char* toString(Bottleneck b);   // "memory-bound", ... "unknown"

// Finding kinds (stable strings: tests, the optimizer and users match on them).
namespace finding {
inline constexpr const char* kRegisterSpills = "register-spills";
inline constexpr const char* kUncoalescedAccess = "uncoalesced-access";
inline constexpr const char* kSmallGrid = "small-grid";
inline constexpr const char* kTailEffect = "tail-effect";
inline constexpr const char* kLowOccupancy = "low-occupancy";
inline constexpr const char* kNoTensorCores = "no-tensor-cores";
inline constexpr const char* kSharedBankConflicts = "shared-bank-conflicts";
inline constexpr const char* kPoorL2Reuse = "poor-l2-reuse";
inline constexpr const char* kLongStalls = "long-stalls";
}  // namespace finding

struct Finding {
  std::string kind;
  double severity = 0;                    // [0, 1]: the share of the time it plausibly costs
  std::string summary;                    // one line for people
  std::string detail;                     // low-occupancy: the limiter; long-stalls: the stall reason
  nlohmann::json evidence = nlohmann::json::object();   // metric values and static facts
  std::vector<std::string> suggestions;   // transformation passes
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

  const Finding* find(const std::string& kind) const;
  nlohmann::json toJson() const;
};

}  // namespace tf

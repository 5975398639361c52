#include "search/candidate.h"

namespace tf {

const char* toString(CandidateKind k) {
  switch (k) {
    case CandidateKind::kBaseline: return "baseline";
    case CandidateKind::kSearch: return "search";
    case CandidateKind::kPass: return "pass";
    case CandidateKind::kStored: return "stored";
  }
  return "?";
}

nlohmann::json CandidateRecord::toJson() const {
  nlohmann::json j = {{"id", id},
                      {"round", round},
                      {"base", base},
                      {"kind", toString(kind)},
                      {"origin", origin},
                      {"config", configJson(config)},
                      {"config_text", config_text},
                      {"source_hash", source_hash},
                      {"status", toString(status)},
                      {"reused", reused}};
  if (!proposal.empty()) j["proposal"] = proposal;
  if (lane > 0) j["lane"] = lane;  // multi-GPU runs: lane 0 is left out, as single-GPU results have none
  if (done_s >= 0) j["done_s"] = done_s;
  if (!message.empty()) j["message"] = message;
  if (objective) {
    j["objective"] = *objective;
    j["speedup"] = 1.0 / *objective;
  }
  if (!regressed.empty()) j["regressed_cases"] = regressed;
  j["compile"] = compile.toJson();
  nlohmann::json cs = nlohmann::json::array();
  for (const auto& c : cases) cs.push_back(c.toJson());
  j["cases"] = cs;
  return j;
}

}  // namespace tf

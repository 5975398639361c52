// A case's label, "K=V,K=V" in the order of the case's keys, on one line: what progress
// lines, reports and baseline entries call a case (Task::caseLabel adds "caseI" for an
// empty case).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace tf {

std::string caseLabelOf(const nlohmann::json& c);

}  // namespace tf

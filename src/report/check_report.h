// The reports of `tritonforge check`: a Markdown summary (for a terminal or a CI job's
// summary page) and JUnit XML (one test case per task and case; a regression or a failed
// verification is a <failure>).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "measure/regression_check.h"

namespace tf {

std::string checkMarkdown(const std::vector<TaskCheck>& tasks, const std::string& baseline_path);
std::string checkJUnit(const std::vector<TaskCheck>& tasks);
// The same as JSON (schema tritonforge.check/1, `check --json`): per task and case the verdict,
// the times and noise now and in the baseline, the ratio and the band.
nlohmann::json checkJson(const std::vector<TaskCheck>& tasks, const std::string& baseline_path);
// Escapes &, <, >, " and ' for XML text and attribute values; drops the control characters
// XML 1.0 does not allow.
std::string xmlEscape(const std::string& s);

}  // namespace tf

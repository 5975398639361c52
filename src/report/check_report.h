// The reports of `tritonforge check`: a Markdown summary (for a terminal or a CI job's
// summary page) and JUnit XML (one test case per task and case; a regression or a failed
// verification is a <failure>).
#pragma once

#include <string>
#include <vector>

#include "measure/regression_check.h"

namespace tf {

std::string checkMarkdown(const std::vector<TaskCheck>& tasks, const std::string& baseline_path);
std::string checkJUnit(const std::vector<TaskCheck>& tasks);
// Escapes &, <, >, " and ' for XML text and attribute values; drops the control characters
// XML 1.0 does not allow.
std::string xmlEscape(const std::string& s);

}  // namespace tf

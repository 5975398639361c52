#include "measure/case_request.h"

namespace tf {

nlohmann::json checkArgsOf(const CheckSpec& check) {
  nlohmann::json c = {{"reference_precision", check.reference_precision}, {"in_place", check.in_place}};
  if (check.rtol) c["rtol"] = *check.rtol;
  if (check.atol) c["atol"] = *check.atol;
  return c;
}

nlohmann::json seedsOf(const CheckSpec& check) {
  nlohmann::json seeds = nlohmann::json::array();
  for (int s = 0; s < check.seeds; ++s) seeds.push_back(s);
  return seeds;
}

nlohmann::json caseRequestArgs(const Task& task, const std::filesystem::path& source, const std::string& module_name,
                               size_t case_index) {
  return {{"variant", {{"path", source.string()}, {"module_name", module_name}}},
          {"launcher", task.launcher},
          {"harness", task.harness.string()},
          {"search_path", {task.source.parent_path().string(), task.harness.parent_path().string()}},
          {"case", task.cases.at(case_index)},
          {"seeds", seedsOf(task.check)},
          {"check", checkArgsOf(task.check)}};
}

}  // namespace tf

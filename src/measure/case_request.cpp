#include "measure/case_request.h"

namespace tf {

RunRequest caseRunRequest(const Task& task, const VariantRef& variant, size_t case_index) {
  RunRequest r;
  r.launch.variant = variant;
  r.launch.variant.package = task.package.name;
  r.launch.launcher = task.launcher;
  r.launch.direction = task.direction;
  r.launch.harness = task.harness;
  r.launch.search_path = {task.source.parent_path(), task.harness.parent_path()};
  if (!task.package.name.empty()) r.launch.search_path.push_back(task.package.root);
  r.launch.search_path.insert(r.launch.search_path.end(), task.search_path.begin(), task.search_path.end());
  r.case_values = task.cases.at(case_index);
  r.seeds.clear();
  for (int s = 0; s < task.check.seeds; ++s) r.seeds.push_back(s);
  r.check.rtol = task.check.rtol;
  r.check.atol = task.check.atol;
  r.check.reference_precision = task.check.reference_precision;
  r.check.in_place = task.check.in_place;
  r.check.output_atol = task.check.output_atol;
  return r;
}

}  // namespace tf

// The recorded best of tasks, read from a results database instead of a baseline file: for
// each task name, the latest finished run of it, its best (or, when nothing beat the kernel
// as written, the kernel as written), and that variant's measured time and noise per case
// in the run's environment (search measurements: a baseline file holds the confirmation's,
// measured longer).
#include <map>

#include "store/baseline_file.h"
#include "store/results_db.h"
#include "task/case_label.h"

namespace tf {

BaselineFile baselineFromResultsDb(const std::filesystem::path& path, const std::vector<std::string>& task_names) {
  std::unique_ptr<ResultsDb> db = ResultsDb::open(path, DbAccess::kReadOnly);
  BaselineFile file;
  std::vector<RunRow> runs = db->runs(1 << 30);  // newest first
  for (const auto& name : task_names) {
    for (const RunRow& run : runs) {
      if (run.info.task_name != name || run.finished_at.empty() || run.status != "done") continue;
      const nlohmann::json& summary = run.summary;
      const nlohmann::json best = summary.is_object() && summary.contains("best") && summary["best"].is_object()
                                      ? summary["best"]
                                      : nlohmann::json::object();
      std::string variant = best.value("source_hash", run.info.source_hash);
      BaselineEntry e;
      e.task = name;
      e.task_path = run.info.task_path;
      e.date = run.finished_at;
      e.toolchain.gpu = run.info.env.gpu;
      e.toolchain.driver = run.info.env.driver;
      e.toolchain.torch = run.info.env.torch;
      e.toolchain.triton = run.info.env.triton;
      e.toolchain.tritonforge = run.tool_version;
      e.config = best.contains("config") && best["config"].is_object() ? best["config"] : nlohmann::json::object();
      e.config_text = best.value("config_text", std::string());
      // The variant's rows in the run's environment, from this run or an earlier one it
      // reused (a variant is a source with its parameters written in); the last row of each
      // case.
      std::map<std::string, const MeasurementRow*> per_case;
      std::vector<MeasurementRow> rows = db->measurementsOfVariant(run.info.task_hash, variant, run.info.env);
      for (const auto& r : rows) {
        if (r.status != "ok" || !r.time_ms || r.key.case_key == "*") continue;
        per_case[r.key.case_key] = &r;
      }
      for (const auto& [case_key, r] : per_case) {
        BaselineCase c;
        c.shape = nlohmann::json::parse(case_key, nullptr, false);
        c.label = caseLabelOf(c.shape);
        c.time_ms = *r->time_ms;
        const nlohmann::json t = r->data.contains("timing") ? r->data["timing"] : nlohmann::json::object();
        double iqr = t.contains("iqr_ms") && t["iqr_ms"].is_number() ? t["iqr_ms"].get<double>() : 0;
        c.noise = c.time_ms > 0 ? iqr / c.time_ms : 0;
        e.cases.push_back(std::move(c));
      }
      if (!e.cases.empty()) file.tasks[name] = std::move(e);
      break;
    }
  }
  return file;
}

}  // namespace tf

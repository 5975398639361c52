#include "cli/export_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <vector>

#include "store/results_db.h"
#include "task/task.h"
#include "util/error.h"
#include "util/fs.h"
#include "variant/config.h"

namespace tf {

bool isSqliteFile(const std::filesystem::path& path) {
  auto head = readFileHead(path, 16);
  return head && *head == std::string("SQLite format 3\0", 16);
}

nlohmann::json resultFromDatabase(const std::filesystem::path& db_path, std::optional<int64_t> run_id) {
  const std::string what = db_path.string();
  auto db = ResultsDb::open(db_path, DbAccess::kReadOnly);
  std::optional<RunRow> run;
  if (run_id) {
    run = db->run(*run_id);
    if (!run) throw UserError(fmt::format("{}: no run {} in this results database (tritonforge db runs lists them)", what, *run_id));
  } else {
    auto runs = db->runs(1);
    if (runs.empty()) throw UserError(fmt::format("{}: the results database holds no run", what));
    run = runs.front();
  }
  const RunInfo& info = run->info;
  // One candidate per configuration of the source as written; cases in order of appearance.
  std::vector<std::string> case_keys;
  std::map<std::string, std::map<std::string, MeasurementRow>> by_config;  // params -> case -> row
  std::vector<std::string> config_order;
  for (auto& row : db->measurementsFor(info.task_hash, info.source_hash, info.env)) {
    if (row.key.case_key == "*") continue;  // failed before any case ran
    if (std::find(case_keys.begin(), case_keys.end(), row.key.case_key) == case_keys.end()) {
      case_keys.push_back(row.key.case_key);
    }
    if (!by_config.count(row.key.params)) config_order.push_back(row.key.params);
    by_config[row.key.params][row.key.case_key] = std::move(row);  // oldest first: the newest stays
  }
  if (config_order.empty()) {
    throw UserError(fmt::format("{}: run {} ({}) has no measurement of its source as written in its environment",
                                what, run->id, info.task_name));
  }
  nlohmann::json cases = nlohmann::json::array();
  for (const auto& k : case_keys) cases.push_back(nlohmann::json::parse(k));
  std::map<std::string, nlohmann::json> tunables;
  nlohmann::json candidates = nlohmann::json::array();
  int id = 0;
  for (const auto& params : config_order) {
    const auto& rows = by_config[params];
    nlohmann::json config = nlohmann::json::parse(params, nullptr, false);
    if (!config.is_object()) continue;
    bool baseline = !config.empty();
    for (const auto& [k, v] : config.items()) {
      baseline = baseline && v == "as-written";
      size_t dot = k.find('.');
      tunables.emplace(k, nlohmann::json{{"id", k}, {"kernel", k.substr(0, dot)},
                                         {"param", dot == std::string::npos ? k : k.substr(dot + 1)}});
    }
    bool all_ok = rows.size() == case_keys.size();
    nlohmann::json per_case = nlohmann::json::array();
    for (const auto& k : case_keys) {
      auto it = rows.find(k);
      if (it == rows.end() || it->second.status != "ok" || !it->second.time_ms) {
        all_ok = false;
        per_case.push_back({{"status", it == rows.end() ? "not-run" : it->second.status}});
        continue;
      }
      per_case.push_back({{"status", "ok"}, {"timing", {{"median_ms", *it->second.time_ms}}}});
    }
    candidates.push_back({{"id", id++},
                          {"kind", baseline ? "baseline" : "config"},
                          {"base", 0},
                          {"config", config},
                          {"status", all_ok ? "ok" : "failed"},
                          {"cases", per_case}});
  }
  std::string source;
  try {
    source = loadTask(info.task_path).source.string();
  } catch (const std::exception&) {
    source = "";  // the table does not need it; the autotune export says so
  }
  nlohmann::json tl = nlohmann::json::array();
  for (auto& [k, t] : tunables) tl.push_back(std::move(t));
  return {{"schema", "tritonforge.optimize/1"},
          {"status", "from-database"},
          {"task", {{"name", info.task_name}, {"path", info.task_path}, {"source", source}, {"cases", cases}}},
          {"database", {{"path", what}, {"run", run->id}}},
          {"tunables", tl},
          {"candidates", candidates}};
}

}  // namespace tf

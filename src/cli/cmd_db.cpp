// tritonforge db [--db FILE] list | show RUN [--trace] | export [--run N] [--format csv|json] [-o FILE]
//
// Lists the runs in the results database, shows one with its decision trace, and exports
// measurements: as a sweep CSV that `tune --replay` reads, or as JSON lines.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>

#include "cli/commands.h"
#include "search/optimizer.h"
#include "search/replay.h"
#include "store/results_db.h"
#include "util/error.h"
#include "util/fs.h"

namespace tf {
namespace {

struct DbFlags {
  std::string db;
  int64_t run = 0;
  bool trace = false;
  std::string format = "csv";
  std::string out;
  std::vector<std::string> meta;
  int limit = 50;
  bool json = false;
};

// Read-only: these commands only read, so they neither create a file nor migrate an old
// one, and a file that is not a results database is refused untouched.
std::filesystem::path dbPath(const DbFlags& f) {
  return f.db.empty() ? ResultsDb::defaultPath() : std::filesystem::path(f.db);
}

std::unique_ptr<ResultsDb> openDb(const DbFlags& f) { return ResultsDb::open(dbPath(f), DbAccess::kReadOnly); }

// Written by an older schema, which did not record these: null rather than "".
nlohmann::json orNull(const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); }

// "running" while its process lives; "unfinished" once that process is gone without finishing.
std::string runStatus(const RunRow& r) {
  if (!r.finished_at.empty()) return r.status;
  return r.live ? "running" : "unfinished";
}

nlohmann::json runJson(const RunRow& r) {
  return {{"id", r.id},
          {"started_at", r.started_at},
          {"finished_at", r.finished_at.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.finished_at)},
          {"status", runStatus(r)},
          {"task", r.info.task_name},
          {"task_path", r.info.task_path},
          {"task_hash", r.info.task_hash},
          {"source_hash", r.info.source_hash},
          {"gpu", r.info.env.gpu},
          {"driver", r.info.env.driver},
          {"triton", r.info.env.triton},
          {"worker_protocol", r.info.env.worker_protocol},
          {"torch", orNull(r.info.env.torch)},
          {"cuda", orNull(r.info.env.cuda)},
          {"timing", r.info.env.timing.empty() ? nlohmann::json(nullptr) : nlohmann::json::parse(r.info.env.timing, nullptr, false)},
          {"tool_version", r.tool_version},
          {"tool_commit", orNull(r.tool_commit)},
          {"strategy", r.info.strategy},
          {"seed", r.info.seed},
          {"options", r.info.options},
          {"resumed_from", r.info.resumed_from ? nlohmann::json(*r.info.resumed_from) : nlohmann::json(nullptr)},
          {"measurements", r.measurements},
          {"trace_events", r.trace_events},
          {"summary", r.summary}};
}

int runList(const DbFlags& f) {
  auto db = openDb(f);
  auto runs = db->runs(f.limit);
  if (f.json) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& r : runs) a.push_back(runJson(r));
    std::cout << a.dump(2) << std::endl;
    return 0;
  }
  std::printf("%s\n", db->path().c_str());
  std::printf("%5s  %-20s  %-10s  %-16s  %-18s  %-11s  %6s  %s\n", "run", "started", "status", "task", "gpu", "strategy",
              "rows", "result");
  for (const auto& r : runs) {
    std::string result = "-";
    if (r.summary.is_object() && r.summary.contains("speedup")) {
      result = fmt::format("{:.2f}x", r.summary.value("speedup", 1.0));
      if (r.summary.contains("best")) result += " " + r.summary["best"].value("config_text", "");
    }
    std::printf("%5lld  %-20s  %-10s  %-16s  %-18s  %-11s  %6lld  %s\n", static_cast<long long>(r.id),
                r.started_at.c_str(), runStatus(r).c_str(), r.info.task_name.substr(0, 16).c_str(),
                r.info.env.gpu.substr(0, 18).c_str(), r.info.strategy.c_str(), static_cast<long long>(r.measurements),
                result.c_str());
  }
  return 0;
}

int runShow(const DbFlags& f) {
  auto db = openDb(f);
  auto r = db->run(f.run);
  if (!r) throw UserError(fmt::format("{}: no run #{}", db->path().string(), f.run));
  nlohmann::json j = runJson(*r);
  if (f.trace || f.json) {
    nlohmann::json t = nlohmann::json::array();
    for (const auto& e : db->trace(f.run)) t.push_back({{"seq", e.seq}, {"t", e.t}, {"kind", e.kind}, {"data", e.data}});
    j["trace"] = t;
  }
  if (f.json) {
    std::cout << j.dump(2) << std::endl;
    return 0;
  }
  std::printf("run #%lld: %s (%s), %s\n", static_cast<long long>(r->id), r->info.task_name.c_str(),
              r->info.task_path.c_str(), runStatus(*r).c_str());
  std::printf("  started %s, finished %s\n", r->started_at.c_str(),
              r->finished_at.empty() ? "never (killed or still running)" : r->finished_at.c_str());
  std::printf("  %s, driver %s, triton %s, torch %s, CUDA %s, worker protocol %d, tritonforge %s (commit %s)\n",
              r->info.env.gpu.c_str(), r->info.env.driver.c_str(), r->info.env.triton.c_str(),
              r->info.env.torch.empty() ? "?" : r->info.env.torch.c_str(),
              r->info.env.cuda.empty() ? "?" : r->info.env.cuda.c_str(), r->info.env.worker_protocol,
              r->tool_version.c_str(), r->tool_commit.empty() ? "?" : r->tool_commit.c_str());
  if (!r->info.env.timing.empty()) std::printf("  timing %s\n", r->info.env.timing.c_str());
  std::printf("  strategy %s, seed %llu, %lld measurements, %lld trace events%s\n", r->info.strategy.c_str(),
              static_cast<unsigned long long>(r->info.seed), static_cast<long long>(r->measurements),
              static_cast<long long>(r->trace_events),
              r->info.resumed_from ? fmt::format(", resumed run #{}", *r->info.resumed_from).c_str() : "");
  if (r->summary.is_object()) std::printf("  summary: %s\n", r->summary.dump().c_str());
  if (f.trace) {
    for (const auto& e : j["trace"]) {
      std::string d = e["data"].dump();
      if (d.size() > 160) d = d.substr(0, 157) + "...";
      std::printf("  %4d %7.2fs %-14s %s\n", e["seq"].get<int>(), e["t"].get<double>(),
                  e["kind"].get<std::string>().c_str(), d.c_str());
    }
  }
  return 0;
}

// One configuration's rows: time is the geometric mean over its cases when all are ok.
struct Variant {
  Config config;
  std::map<std::string, const MeasurementRow*> cases;
  std::string failed;
};

int runExport(const DbFlags& f) {
  refuseOutputOverInput(f.out, dbPath(f), "results database");
  auto db = openDb(f);
  // A run's measurements include those of the interrupted runs it resumed.
  std::vector<MeasurementRow> rows;
  std::set<int64_t> chain;
  for (int64_t id = f.run; id > 0 && chain.insert(id).second;) {
    auto r = db->run(id);
    if (!r) throw UserError(fmt::format("{}: no run #{}", db->path().string(), id));
    id = r->info.resumed_from.value_or(0);
  }
  if (f.run == 0) rows = db->measurementsOfRun(0);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    for (auto& r : db->measurementsOfRun(*it)) rows.push_back(std::move(r));
  }
  std::string text;
  if (f.format == "json") {
    for (const auto& r : rows) {
      nlohmann::json j = {{"id", r.id},           {"task_hash", r.key.task_hash}, {"base_hash", r.key.base_hash},
                          {"variant_hash", r.key.variant_hash}, {"params", nlohmann::json::parse(r.key.params, nullptr, false)},
                          {"case", r.key.case_key == "*" ? nlohmann::json("*") : nlohmann::json::parse(r.key.case_key, nullptr, false)},
                          {"gpu", r.key.env.gpu}, {"driver", r.key.env.driver}, {"triton", r.key.env.triton},
                          {"worker_protocol", r.key.env.worker_protocol}, {"tool_version", r.tool_version},
                          {"tool_commit", orNull(r.tool_commit)}, {"torch", orNull(r.key.env.torch)}, {"cuda", orNull(r.key.env.cuda)},
                          {"timing", r.key.env.timing.empty() ? nlohmann::json(nullptr)
                                                              : nlohmann::json::parse(r.key.env.timing, nullptr, false)},
                          {"status", r.status},   {"time_ms", r.time_ms ? nlohmann::json(*r.time_ms) : nlohmann::json(nullptr)},
                          {"run_id", r.run_id},   {"created_at", r.created_at}, {"measurement", r.data}};
      text += j.dump() + "\n";
    }
  } else if (f.format == "csv") {
    if (rows.empty()) throw UserError(fmt::format("{}: no measurements to export{}", db->path().string(),
                                                  f.run ? fmt::format(" in run #{}", f.run) : ""));
    std::set<std::string> tasks;
    for (const auto& r : rows) tasks.insert(r.key.task_hash);
    if (tasks.size() > 1) {
      throw UserError(fmt::format("{}: the measurements belong to {} tasks; export one run with --run N",
                                  db->path().string(), tasks.size()));
    }
    std::map<std::string, Variant> variants;
    std::vector<std::string> order;
    std::set<std::string> case_keys, params;
    std::string base_hash;
    for (const auto& r : rows) {
      auto config = configFromKey(r.key.params);
      if (!config) continue;
      if (!variants.count(r.key.variant_hash)) order.push_back(r.key.variant_hash);
      Variant& v = variants[r.key.variant_hash];
      v.config = *config;
      for (const auto& [k, val] : *config) params.insert(k);
      if (r.key.case_key == "*") v.failed = r.status;
      else {
        v.cases[r.key.case_key] = &r;
        case_keys.insert(r.key.case_key);
        if (r.status != "ok") v.failed = r.status;
      }
      base_hash = r.key.base_hash;
    }
    Sweep s;
    // Short column names when every parameter belongs to one kernel.
    std::set<std::string> kernels;
    for (const auto& p : params) kernels.insert(p.substr(0, p.find('.')));
    bool short_names = kernels.size() == 1;
    for (const auto& p : params) s.params.push_back(short_names ? p.substr(p.find('.') + 1) : p);
    if (short_names) s.meta["kernel"] = *kernels.begin();
    int skipped = 0;
    for (const auto& vh : order) {
      const Variant& v = variants[vh];
      std::vector<int64_t> row;
      bool keep = true;
      for (const auto& p : params) {
        auto it = v.config.find(p);
        if (it == v.config.end() || it->second == kKeep) keep = false;
        else row.push_back(it->second);
      }
      if (!keep) {
        ++skipped;
        continue;
      }
      std::optional<double> t;
      std::string status = v.failed.empty() ? "ok" : v.failed;
      if (v.failed.empty()) {
        if (v.cases.size() < case_keys.size()) {
          ++skipped;  // an interrupted measurement
          continue;
        }
        double logsum = 0;
        for (const auto& [ck, r] : v.cases) logsum += std::log(*r->time_ms);
        t = std::exp(logsum / static_cast<double>(v.cases.size()));
      }
      if (vh == base_hash) {
        std::string b;
        for (int64_t x : row) b += (b.empty() ? "" : ",") + std::to_string(x);
        s.meta["baseline"] = b;
      }
      s.rows.push_back(row);
      s.times.push_back(t);
      s.statuses.push_back(status);
    }
    const MeasurementRow& first = rows.front();
    s.meta["gpu"] = first.key.env.gpu;
    s.meta["driver"] = first.key.env.driver;
    s.meta["triton"] = first.key.env.triton;
    std::string cases;
    for (const auto& c : case_keys) cases += (cases.empty() ? "" : ";") + c;
    s.meta["cases"] = cases;
    if (case_keys.size() > 1) s.meta["time"] = fmt::format("geometric mean over {} cases", case_keys.size());
    if (f.run) s.meta["run"] = std::to_string(f.run);
    if (skipped) s.meta["skipped"] = std::to_string(skipped);
    for (const auto& m : f.meta) {
      size_t eq = m.find('=');
      if (eq == std::string::npos || eq == 0) throw UserError(fmt::format("--meta {}: expected KEY=VALUE", m));
      s.meta[m.substr(0, eq)] = m.substr(eq + 1);
    }
    text = sweepToCsv(s);
  } else {
    throw UserError(fmt::format("--format {}: expected csv or json", f.format));
  }
  if (f.out.empty()) std::cout << text;
  else writeFileAtomic(f.out, text);
  return 0;
}

}  // namespace

CommandRunner registerDb(CLI::App& app, const GlobalOptions& global);
const CommandRegistration kDbRegistration("db", 70, &registerDb);

CommandRunner registerDb(CLI::App& app, const GlobalOptions&) {
  auto flags = std::make_shared<DbFlags>();
  CLI::App* sub = app.add_subcommand("db", "List, show and export what the results database holds");
  sub->add_option("--db", flags->db, "The results database (default: the per-user cache, results.sqlite)");
  sub->require_subcommand(1);
  CLI::App* list = sub->add_subcommand("list", "The runs, newest first");
  list->add_option("--limit", flags->limit, "At most this many runs (default 50)");
  list->add_flag("--json", flags->json, "As JSON");
  CLI::App* show = sub->add_subcommand("show", "One run, with its decision trace");
  show->add_option("run", flags->run, "The run's number")->required();
  show->add_flag("--trace", flags->trace, "Print every trace event");
  show->add_flag("--json", flags->json, "As JSON (the trace included)");
  CLI::App* exp = sub->add_subcommand("export", "Measurements as a sweep CSV (for tune --replay) or JSON lines");
  exp->add_option("--run", flags->run,
                  "Only this run's measurements, with those of the interrupted runs it resumed (default: all)");
  exp->add_option("--format", flags->format, "csv (default) or json");
  exp->add_option("-o,--out", flags->out, "Write to this file instead of stdout");
  exp->add_option("--meta", flags->meta, "Add KEY=VALUE to the CSV's metadata (repeatable)")
      ->allow_extra_args(false)
      ->take_all();
  for (CLI::App* s : {list, show, exp}) s->add_option("--db", flags->db, "The results database");
  return [flags, list, show, exp] {
    if (list->parsed()) return runList(*flags);
    if (show->parsed()) return runShow(*flags);
    if (exp->parsed()) return runExport(*flags);
    throw UserError("db: choose list, show or export");
  };
}

}  // namespace tf

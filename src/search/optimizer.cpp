// The optimization loop (optimizer.h). Map of this file:
//   Loop::run          start the worker, open the database, baseline, search, confirm
//   Loop::measureBaseline / noteHints   the kernel as written and what it tells the space
//   Loop::search       rounds: engine -> passes -> proposals -> runBatch -> tuner.endRound
//   Loop::runBatch     prune, rewrite, reuse from the database or compile in parallel, measure
//   Loop::engineRound  findings and proposals, traced once each, turned into regions
//   Loop::tryPass      a pass proposal: apply, measure, and switch base when it wins
//   Loop::confirm      interleaved re-measurement of the best against the original
#include "search/optimizer.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <thread>

#include "kernel/ast.h"
#include "kernel/module_ir.h"
#include "measure/roofline.h"
#include "search/loop_diagnosis.h"
#include "search/strategy.h"
#include "search/trace.h"
#include "search/tuner.h"
#include "store/results_db.h"
#include "util/error.h"
#include "util/hash.h"
#include "worker/protocol.h"

namespace tf {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

nlohmann::json configJson(const Config& config) {
  nlohmann::json cfg = nlohmann::json::object();
  for (const auto& [k, v] : config) cfg[k] = v == kKeep ? nlohmann::json("as-written") : nlohmann::json(v);
  return cfg;
}

}  // namespace

std::string configKey(const Config& config) { return configJson(config).dump(); }

std::optional<Config> configFromKey(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  Config c;
  for (const auto& [k, v] : j.items()) {
    if (v.is_number_integer()) c[k] = v.get<int64_t>();
    else if (v == "as-written") c[k] = kKeep;
    else return std::nullopt;
  }
  return c;
}

std::string taskHash(const Task& task, const TaskSources& sources) {
  nlohmann::json check = {{"rtol", task.check.rtol ? nlohmann::json(*task.check.rtol) : nullptr},
                          {"atol", task.check.atol ? nlohmann::json(*task.check.atol) : nullptr},
                          {"seeds", task.check.seeds},
                          {"reference_precision", task.check.reference_precision},
                          {"in_place", task.check.in_place}};
  uint64_t h = fnv1a64(sources.source.source.text());
  h = fnv1a64(std::string(1, '\0') + sources.harness.source.text(), h);
  h = fnv1a64(std::string(1, '\0') + task.launcher, h);
  h = fnv1a64(nlohmann::json(task.kernels).dump(), h);
  h = fnv1a64(check.dump(), h);
  return fmt::format("{:016x}", h);
}

nlohmann::json CandidateRecord::toJson() const {
  nlohmann::json j = {{"id", id},
                      {"round", round},
                      {"base", base},
                      {"origin", origin},
                      {"config", configJson(config)},
                      {"config_text", config_text},
                      {"source_hash", source_hash},
                      {"status", toString(status)},
                      {"reused", reused}};
  if (!proposal.empty()) j["proposal"] = proposal;
  if (!message.empty()) j["message"] = message;
  if (objective) {
    j["objective"] = *objective;
    j["speedup"] = 1.0 / *objective;
  }
  j["compile"] = compile.toJson();
  nlohmann::json cs = nlohmann::json::array();
  for (const auto& c : cases) cs.push_back(c.toJson());
  j["cases"] = cs;
  return j;
}

namespace {

int elemBytes(const std::string& type) {
  // "*fp16", "*bf16", "*fp32", "*i8", "*fp8e4nv" ...
  std::string t = type;
  if (!t.empty() && t[0] == '*') t = t.substr(1);
  if (t.find("64") != std::string::npos) return 8;
  if (t.find("32") != std::string::npos) return 4;
  if (t.find("16") != std::string::npos) return 2;
  if (t.find("8") != std::string::npos || t == "i1") return 1;
  return 0;
}

double geomean(const std::vector<double>& xs) {
  double s = 0;
  for (double x : xs) s += std::log(x);
  return std::exp(s / static_cast<double>(xs.size()));
}

int defaultCompileWorkers() {
  unsigned hw = std::thread::hardware_concurrency();
  int n = hw > 2 ? static_cast<int>(hw) - 2 : 1;
  return std::clamp(n, 1, 14);
}

// The inverse of CaseMeasurement::toJson, for measurements read back from the database.
CaseMeasurement caseFromJson(const nlohmann::json& j) {
  CaseMeasurement m;
  if (!j.is_object()) {
    m.status = CandidateStatus::kRuntimeError;
    m.message = "unreadable stored measurement";
    return m;
  }
  m.status = candidateStatusFromString(j.value("status", "runtime-error"));
  m.message = j.value("message", "");
  m.detail = j.value("detail", "");
  if (j.contains("timing") && j["timing"].is_object()) m.timing = TimingStats::fromJson(j["timing"]);
  if (j.contains("verify") && j["verify"].is_object()) {
    const auto& v = j["verify"];
    m.verify.passed = v.value("passed", false);
    m.verify.max_abs_err = v.value("max_abs_err", 0.0);
    m.verify.max_rel_err = v.value("max_rel_err", 0.0);
    m.verify.reason = v.value("reason", "");
    if (v.contains("first_bad")) m.verify.first_bad = v["first_bad"];
    if (v.contains("failed_seed") && v["failed_seed"].is_number_integer()) m.verify.failed_seed = v["failed_seed"].get<int>();
    m.verify.reference_note = v.value("reference_note", "");
  }
  if (j.contains("kernels") && j["kernels"].is_array()) m.kernels = j["kernels"];
  if (j.contains("outputs") && j["outputs"].is_array()) m.outputs = j["outputs"];
  m.wall_seconds = j.value("wall_seconds", 0.0);
  return m;
}

// Failures that are a property of the variant, not of the moment: worth reusing.
bool reusableStatus(CandidateStatus s) {
  return s != CandidateStatus::kTimeout && s != CandidateStatus::kCrash && s != CandidateStatus::kNotRun &&
         s != CandidateStatus::kPruned;
}

// A source the parameters apply to: the original, or what a pass made of a base.
struct Base {
  int id = 0;
  std::string origin;                // "as written", "pass split-k (P4) on base 0"
  std::string text;
  std::string hash;
  const ModuleIR* ir = nullptr;
  const TunableSet* tunables = nullptr;
  std::unique_ptr<ParsedSource> parsed;
  std::unique_ptr<ModuleIR> owned_ir;
  std::unique_ptr<TunableSet> owned_tunables;
  int record = 0;                    // the candidate that measured it as written
};

struct Proposed {
  Config config;
  std::string origin;
  std::string proposal;
};

class Loop {
 public:
  Loop(const Task& task, const TaskSources& sources, const TunableSet& tunables, const OptimizeOptions& options,
       OptimizeProgress& progress)
      : task_(task), sources_(sources), tunables_(tunables), options_(options), progress_(progress),
        t0_(options.started ? *options.started : Clock::now()) {}

  OptimizeResult run() {
    work_dir_ = fs::temp_directory_path() / fmt::format("tritonforge-{}-{}", getpid(), hashHex(task_.path.string()));
    fs::create_directories(work_dir_);
    struct Cleanup {
      fs::path dir;
      bool keep;
      ~Cleanup() {
        std::error_code ec;
        if (!keep) fs::remove_all(dir, ec);
      }
    } cleanup{work_dir_, options_.keep_work};

    engine_ = options_.engine_impl ? options_.engine_impl : std::shared_ptr<ReasoningEngine>(makeEngine(options_.engine));
    result_.engine = engine_->name();
    evaluator_ = std::make_unique<Evaluator>(task_, options_.evaluator, work_dir_);
    progress_.status("starting the worker");
    result_.environment = evaluator_->start();
    result_.gpu = evaluator_->hasGpu();
    if (!result_.gpu) {
      result_.no_gpu_reason = evaluator_->noGpuReason();
      result_.compile_checks = compileChecks(task_, sources_, tunables_, evaluator_->mainWorker());
      result_.best_source = sources_.source.source.text();
      result_.stop_reason = "no GPU";
      finishTiming();
      return std::move(result_);
    }
    openDatabase();
    int want = options_.compile_workers > 0 ? options_.compile_workers : defaultCompileWorkers();
    // Compile workers start (import torch and Triton) while the baseline is measured.
    std::thread pool_starter;
    if (!tunables_.active().empty()) {
      pool_starter = std::thread([this, want] { evaluator_->startCompilePool(want); });
    }
    progress_.status("measuring the kernel as written");
    try {
      measureBaseline();
    } catch (...) {
      if (pool_starter.joinable()) pool_starter.join();
      finishRun("failed");
      throw;
    }
    if (pool_starter.joinable()) pool_starter.join();
    if (!tunables_.active().empty()) search();
    else result_.stop_reason = "nothing to tune";
    trace_.add("stop", {{"reason", result_.stop_reason}, {"rounds", result_.rounds}, {"evaluated", result_.evaluated},
                        {"measured", result_.measured}, {"reused", result_.reused}});
    confirm();
    finishTiming();
    finishRun("done");
    result_.trace = trace_.toJson();
    progress_.finish();
    return std::move(result_);
  }

 private:
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - t0_).count(); }
  void finishTiming() { result_.elapsed_s = elapsed(); }

  // --- the results database -------------------------------------------------------------
  void openDatabase() {
    // The timing settings of every stored measurement (evaluate() runs with search_timing_).
    env_ = measureEnvOf(result_.environment,
                        {{"budget_ms", options_.timing_budget_ms}, {"min_reps", search_timing_.min_reps},
                         {"max_reps", search_timing_.max_reps}, {"flush", search_timing_.flush_l2},
                         {"method", search_timing_.method}});
    task_hash_ = taskHash(task_, sources_);
    nlohmann::json opts = {{"budget_s", options_.budget_s},     {"strategy", options_.strategy},
                           {"engine", engine_->name()},          {"stall_rounds", options_.stall_rounds},
                           {"max_candidates", options_.max_candidates}, {"timing_budget_ms", options_.timing_budget_ms},
                           {"batch", options_.batch},            {"only", regionJson(options_.only)},
                           {"reuse", options_.reuse}};
    if (!options_.db_path.empty()) {
      try {
        db_ = ResultsDb::open(options_.db_path);
      } catch (const UserError& e) {
        result_.notes.push_back(fmt::format("results database unavailable, nothing is stored: {}", e.what()));
      }
    }
    if (db_) {
      result_.db_path = db_->path().string();
      if (auto prev = db_->lastUnfinishedRun(task_hash_, env_)) {
        result_.resumed_from = prev->id;
        result_.notes.push_back(fmt::format("run #{} of this task was interrupted; its {} measurements are reused",
                                            prev->id, prev->measurements));
      }
      RunInfo info;
      info.task_name = task_.name;
      info.task_path = task_.path.string();
      info.task_hash = task_hash_;
      info.source_hash = hashHex(sources_.source.source.text());
      info.env = env_;
      info.strategy = options_.strategy;
      info.seed = options_.seed;
      info.options = opts;
      info.resumed_from = result_.resumed_from;
      result_.run_id = db_->beginRun(info);
      trace_.setSink([this](const TraceEvent& e) {
        try {
          db_->appendTrace(result_.run_id, e.seq, e.t, e.kind, e.data);
        } catch (const UserError& err) {
          noteDbFailure(err.what());
        }
      });
    }
    trace_.add("run", {{"task", task_.name},
                       {"task_hash", task_hash_},
                       {"strategy", options_.strategy},
                       {"seed", options_.seed},
                       {"engine", engine_->name()},
                       {"budget_s", options_.budget_s},
                       {"options", opts},
                       {"environment", {{"gpu", env_.gpu}, {"driver", env_.driver}, {"triton", env_.triton},
                                        {"worker_protocol", env_.worker_protocol}}},
                       {"database", result_.db_path},
                       {"run_id", result_.run_id},
                       {"resumed_from", result_.resumed_from ? nlohmann::json(*result_.resumed_from) : nullptr}});
  }

  void noteDbFailure(const std::string& what) {
    if (db_failed_) return;
    db_failed_ = true;
    result_.notes.push_back(fmt::format("writing to the results database failed; later results are not stored: {}", what));
  }

  void finishRun(const std::string& status) {
    if (!db_ || db_failed_) return;
    nlohmann::json summary = {{"speedup", result_.speedup},      {"stop_reason", result_.stop_reason},
                              {"evaluated", result_.evaluated},  {"measured", result_.measured},
                              {"reused", result_.reused},        {"rounds", result_.rounds},
                              {"strategy", result_.strategy},    {"elapsed_s", elapsed()}};
    if (result_.best >= 0) {
      const auto& b = result_.candidates[static_cast<size_t>(result_.best)];
      summary["best"] = {{"id", b.id}, {"config", configJson(b.config)}, {"config_text", b.config_text},
                         {"base", b.base}, {"source_hash", b.source_hash}};
    }
    try {
      db_->finishRun(result_.run_id, status, summary);
    } catch (const UserError& e) {
      noteDbFailure(e.what());
    }
  }

  std::string caseKey(size_t i) const { return task_.cases[i].dump(); }

  void store(const CandidateRecord& rec, const std::string& case_key, const std::string& status,
             std::optional<double> time_ms, const nlohmann::json& data) {
    if (!db_ || db_failed_) return;
    MeasurementKey key{task_hash_, bases_.empty() ? hashHex(sources_.source.source.text()) : bases_[static_cast<size_t>(rec.base)]->hash,
                       rec.source_hash, configKey(rec.config), case_key, env_};
    try {
      db_->putMeasurement(key, status, time_ms, data, result_.run_id);
    } catch (const UserError& e) {
      noteDbFailure(e.what());
    }
  }

  // What the database knows of a variant: its compile failure, or its cases in order until
  // the first failure or the first case not stored (then `complete` is false and only the
  // missing cases need measuring). Nullopt when nothing reusable is stored.
  struct Known {
    CandidateRecord rec;
    bool complete = false;
  };
  std::optional<Known> lookup(const std::string& variant_hash, const std::vector<MeasurementRow>* given = nullptr) {
    if (!db_ || !options_.reuse) return std::nullopt;
    std::vector<MeasurementRow> rows;
    try {
      rows = given ? *given : db_->measurementsOfVariant(task_hash_, variant_hash, env_);
    } catch (const UserError& e) {
      noteDbFailure(e.what());
      return std::nullopt;
    }
    if (rows.empty()) return std::nullopt;
    Known k;
    CandidateRecord& rec = k.rec;
    rec.reused = true;
    rec.origin = fmt::format("database (run #{})", rows.back().run_id);
    for (const auto& r : rows) {
      if (r.key.case_key != "*") continue;
      CandidateStatus s = candidateStatusFromString(r.status);
      if (!reusableStatus(s)) return std::nullopt;
      rec.compile.status = s;
      rec.compile.message = r.data.is_object() ? r.data.value("message", "") : "";
      if (r.data.is_object() && r.data.contains("kernels")) rec.compile.kernels = r.data["kernels"];
      rec.status = s;
      rec.message = rec.compile.message;
      k.complete = true;
      return k;
    }
    rec.compile.status = CandidateStatus::kOk;
    for (size_t i = 0; i < task_.cases.size(); ++i) {
      const MeasurementRow* row = nullptr;
      for (const auto& r : rows) if (r.key.case_key == caseKey(i)) row = &r;
      if (!row) break;
      CaseMeasurement m = caseFromJson(row->data);
      if (!reusableStatus(m.status) || (m.status == CandidateStatus::kOk && !m.timing)) break;
      rec.cases.push_back(m);
      if (m.status != CandidateStatus::kOk) {
        rec.status = m.status;
        rec.message = fmt::format("case {}: {}", task_.caseLabel(i), m.message);
        k.complete = true;
        return k;
      }
    }
    if (rec.cases.empty()) return std::nullopt;
    k.complete = rec.cases.size() == task_.cases.size();
    if (k.complete) rec.status = CandidateStatus::kOk;
    return k;
  }

  // --- measuring --------------------------------------------------------------------------
  // The objective of verified cases, and the check that outputs match the original's.
  void score(CandidateRecord& rec) {
    if (rec.status != CandidateStatus::kOk) return;
    if (!baseline_outputs_.empty()) {
      for (size_t i = 0; i < rec.cases.size(); ++i) {
        if (rec.cases[i].outputs != baseline_outputs_[i]) {
          rec.status = CandidateStatus::kWrongResult;
          rec.message = fmt::format("case {}: outputs {} differ from the original's {}", task_.caseLabel(i),
                                    rec.cases[i].outputs.dump(), baseline_outputs_[i].dump());
          return;
        }
      }
    }
    if (baseline_times_.empty()) return;
    std::vector<double> ratios;
    for (size_t i = 0; i < rec.cases.size(); ++i) ratios.push_back(rec.cases[i].timing->median_ms / baseline_times_[i]);
    rec.objective = geomean(ratios);
  }

  // Measures a compiled variant on every case not in rec.cases yet (those came from the
  // database), storing each case as it is measured.
  void evaluate(CandidateRecord& rec, const Variant& v, const CompileOutcome& compiled) {
    rec.compile = compiled;
    if (compiled.status != CandidateStatus::kOk) {
      rec.status = compiled.status;
      rec.message = compiled.message;
      if (reusableStatus(compiled.status)) store(rec, "*", toString(compiled.status), std::nullopt, compiled.toJson());
      return;
    }
    ++result_.measured;
    for (size_t i = rec.cases.size(); i < task_.cases.size(); ++i) {
      CaseMeasurement m = evaluator_->measure(v, i, search_timing_);
      rec.cases.push_back(m);
      std::optional<double> t;
      if (m.status == CandidateStatus::kOk && m.timing) t = m.timing->median_ms;
      store(rec, caseKey(i), toString(m.status), t, m.toJson());
      if (m.status != CandidateStatus::kOk) {
        rec.status = m.status;
        rec.message = fmt::format("case {}: {}", task_.caseLabel(i), m.message);
        return;
      }
    }
    rec.status = CandidateStatus::kOk;
    score(rec);
  }

  void measureBaseline() {
    search_timing_.budget_ms = options_.timing_budget_ms;
    auto base = std::make_unique<Base>();
    base->id = 0;
    base->origin = "as written";
    base->text = sources_.source.source.text();
    base->hash = hashHex(base->text);
    base->ir = &sources_.ir;
    base->tunables = &tunables_;
    bases_.push_back(std::move(base));
    result_.bases.push_back("as written");

    CandidateRecord rec;
    rec.id = 0;
    rec.origin = "baseline";
    rec.config = Space(tunables_, SpaceHints{}).baseline();
    rec.config_text = "as written";
    rec.source_hash = bases_[0]->hash;
    bool reused = false;
    if (auto known = lookup(rec.source_hash); known && known->complete && known->rec.status == CandidateStatus::kOk) {
      rec.cases = known->rec.cases;
      rec.status = CandidateStatus::kOk;
      rec.reused = true;
      rec.origin = "baseline, " + known->rec.origin;
      reused = true;
    } else {
      Variant v = evaluator_->materialize(bases_[0]->text);
      // Compile on the measurement worker itself: the pool is still starting.
      CompileOutcome compiled;
      compiled.status = CandidateStatus::kOk;
      evaluate(rec, v, compiled);
    }
    if (rec.status != CandidateStatus::kOk) {
      std::string what = rec.status == CandidateStatus::kWrongResult
                             ? "does not match the harness reference"
                             : std::string("fails (") + toString(rec.status) + ")";
      std::string detail;
      if (!rec.cases.empty() && !rec.cases.back().detail.empty()) detail = "\n" + rec.cases.back().detail;
      trace_.add("baseline", {{"status", toString(rec.status)}, {"message", rec.message}});
      throw UserError(fmt::format("{}: the kernel as written {}: {}{}", task_.source.string(), what, rec.message,
                                  detail));
    }
    rec.objective = 1.0;
    nlohmann::json times = nlohmann::json::array();
    for (const auto& c : rec.cases) {
      baseline_times_.push_back(c.timing->median_ms);
      baseline_outputs_.push_back(c.outputs);
      times.push_back(c.timing->median_ms);
    }
    rec.compile.kernels = rec.cases.front().kernels;
    noteHints(rec, tunables_, &hints_);
    result_.candidates.push_back(rec);
    seen_sources_[rec.source_hash] = 0;
    trace_.add("baseline", {{"time_ms", times}, {"reused", reused}, {"source_hash", rec.source_hash},
                            {"noise", baselineNoise()}});
    progress_.candidate(result_.candidates.back(), nullptr, 1, elapsed());
    prepareRoofline(rec);
    // The roofline, when known, gives the stop target.
    if (options_.within_roofline_pct) {
      std::vector<double> ratios;
      for (size_t i = 0; i < task_.cases.size() && (options_.roofline_ms || !result_.roofline_ms.empty()); ++i) {
        auto r = options_.roofline_ms ? options_.roofline_ms(i) : result_.roofline_ms[i];
        if (!r || *r <= 0) break;
        ratios.push_back(*r / baseline_times_[i]);
      }
      if (ratios.size() == task_.cases.size()) {
        target_objective_ = geomean(ratios) * (1.0 + *options_.within_roofline_pct / 100.0);
      } else {
        result_.notes.push_back("no roofline is known for this task's cases: --within-roofline is not applied");
      }
    }
    diagnose(rec, *bases_[0]);
  }

  // Run-time facts that sharpen the space: element sizes, values of derived parameters.
  static void noteHints(const CandidateRecord& measured, const TunableSet& tunables, SpaceHints* hints) {
    for (const auto& c : measured.cases) {
      for (const auto& k : c.kernels) {
        std::string name = k.value("name", "");
        if (k.contains("signature")) {
          int smallest = 0;
          for (const auto& [param, type] : k["signature"].items()) {
            std::string t = type.get<std::string>();
            if (t.empty() || t[0] != '*') continue;
            int b = elemBytes(t);
            if (b && (!smallest || b < smallest)) smallest = b;
          }
          if (smallest) hints->elem_bytes[name] = smallest;
        }
        if (k.contains("constexprs")) {
          for (const auto& t : tunables.items) {
            if (t.kernel != name) continue;
            auto it = k["constexprs"].find(t.param);
            if (it != k["constexprs"].end() && it->is_number_integer()) hints->observed[t.id].push_back(it->get<int64_t>());
          }
        }
        if (k.contains("grid") && k["grid"].is_array() && !k["grid"].empty()) {
          double programs = 1;
          for (const auto& g : k["grid"]) programs *= g.is_number() ? g.get<double>() : 1.0;
          hints->baseline_programs[name] = std::max(hints->baseline_programs[name], programs);
        }
        if (k.contains("num_warps")) {
          for (const auto& t : tunables.items) {
            if (t.kernel == name && t.role == TunableRole::kNumWarps) hints->observed[t.id].push_back(k["num_warps"]);
          }
        }
      }
    }
  }

  // The GPU's ceilings (measured once per GPU and cached) and the least time of each case.
  void prepareRoofline(const CandidateRecord& baseline) {
    if (options_.roofline_ms || !options_.builtin_roofline || !result_.gpu) return;
    std::string why;
    ceilings_ = loadOrMeasureCeilings(evaluator_->mainWorker(), result_.environment["gpu"], false, &why);
    if (!ceilings_) {
      result_.roofline_note = "the GPU's ceilings could not be measured: " + why;
      trace_.add("roofline", {{"available", false}, {"reason", why}});
      return;
    }
    CaseMeasurement ins = evaluator_->inspect(evaluator_->materialize(bases_[0]->text), 0);
    result_.compute_class = ins.status == CandidateStatus::kOk ? computeClassOfKernels(ins) : "fp32";
    bool any = false;
    for (const auto& c : baseline.cases) {
      result_.roofline_ms.push_back(rooflineTimeMs(c.work, *ceilings_, result_.compute_class));
      any = any || result_.roofline_ms.back().has_value();
    }
    if (!any) result_.roofline_note = "the harness defines neither flops(case) nor bytes(case)";
    nlohmann::json per_case = nlohmann::json::array();
    for (const auto& r : result_.roofline_ms) per_case.push_back(r ? nlohmann::json(*r) : nlohmann::json(nullptr));
    trace_.add("roofline", {{"available", any}, {"compute_class", result_.compute_class}, {"case_ms", per_case},
                            {"ceilings", ceilings_->toJson()}});
  }

  std::vector<EngineDiagnosis> builtinDiagnosis(const std::string& text, const CandidateRecord& rec) {
    if (rec.cases.empty()) return {};
    CaseMeasurement ins = evaluator_->inspect(evaluator_->materialize(text), 0);
    if (ins.status != CandidateStatus::kOk) {
      trace_.add("diagnosis-failed", {{"candidate", rec.id}, {"reason", ins.message}});
      return {};
    }
    return diagnoseForEngine(ins, rec.cases[0], ceilings_, result_.environment["gpu"]);
  }

  void diagnose(const CandidateRecord& rec, const Base& base) {
    if (!options_.diagnose && !options_.builtin_diagnosis) return;
    if (!result_.gpu) return;
    std::string text = rec.base == base.id ? recordText(rec) : base.text;
    diagnosis_ = options_.diagnose ? options_.diagnose(text, rec) : builtinDiagnosis(text, rec);
    nlohmann::json ds = nlohmann::json::array();
    for (auto& d : diagnosis_) {
      if (!d.bottleneck.empty() && d.bottleneck != "balanced") {
        // The bottleneck is a finding of its own: rules answer it, proposals cite it.
        EngineFinding b;
        b.kind = d.bottleneck;
        b.kernel = d.kernel;
        b.source = "diagnosis";
        b.summary = fmt::format("{} is {}", d.kernel, d.bottleneck);
        registerFinding(b);
      }
      for (auto& f : d.findings) {
        if (f.kernel.empty()) f.kernel = d.kernel;
        if (f.source.empty()) f.source = "diagnosis";
        registerFinding(f);
      }
      ds.push_back(d.toJson());
    }
    trace_.add("diagnosis", {{"candidate", rec.id}, {"kernels", ds}});
  }

  std::vector<Config> autotuneSeeds(const Space& space) {
    std::vector<Config> seeds;
    for (const auto& k : sources_.ir.kernels) {
      if (!k.autotune || !k.autotune->configs_understood) continue;
      for (const auto& cfg : k.autotune->configs_list) {
        Config c = space.baseline();
        for (const auto& t : tunables_.items) {
          if (t.kernel != k.name || t.origin != TunableOrigin::kAutotune || !t.tunable) continue;
          if (cfg.kwargs.count(t.param)) c[t.id] = cfg.kwargs.at(t.param);
          else if (cfg.options.count(t.param)) c[t.id] = cfg.options.at(t.param);
          else if (t.role == TunableRole::kNumWarps) c[t.id] = 4;
          else if (t.role == TunableRole::kNumStages) c[t.id] = 3;
        }
        seeds.push_back(c);
      }
    }
    return seeds;
  }

  // --- the search ---------------------------------------------------------------------------
  struct SearchState {
    std::unique_ptr<Space> full;     // the base's space
    std::unique_ptr<Space> space;    // narrowed by --only
    std::unique_ptr<SearchStrategy> strategy;
    std::unique_ptr<Tuner> tuner;
    int rounds = 0;                  // rounds of search run on this base
  };

  static nlohmann::json regionJson(const Region& r) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [k, vs] : r) {
      nlohmann::json a = nlohmann::json::array();
      for (int64_t v : vs) a.push_back(v == kKeep ? nlohmann::json("as-written") : nlohmann::json(v));
      j[k] = a;
    }
    return j;
  }

  // Builds the space, strategy and tuner of base `b`, and preloads what is known of it.
  void startBase(int b, const SpaceHints& hints) {
    const Base& base = *bases_[static_cast<size_t>(b)];
    state_ = SearchState{};
    state_.full = std::make_unique<Space>(*base.tunables, hints);
    state_.space = std::make_unique<Space>(options_.only.empty() ? *state_.full : state_.full->restricted(options_.only));
    const Space& space = *state_.space;
    StrategyChoice choice = chooseStrategy(options_.strategy, space);
    state_.strategy = makeStrategy(choice.name, options_.seed + static_cast<uint64_t>(b));
    StopRules rules;
    rules.stall_rounds = options_.stall_rounds;
    rules.min_gain = 0.005;
    state_.tuner = std::make_unique<Tuner>(space, *state_.strategy, rules, &trace_);
    if (b == 0) {
      result_.space_size = space.size();
      result_.strategy = choice.name;
      result_.strategy_reason = choice.why;
    }
    nlohmann::json dims = nlohmann::json::object();
    for (const auto& d : space.dims()) {
      nlohmann::json vals = nlohmann::json::array();
      for (int64_t v : d.values) vals.push_back(v == kKeep ? nlohmann::json("as-written") : nlohmann::json(v));
      dims[d.tunable->id] = vals;
    }
    nlohmann::json ev = {{"base", b}, {"size", space.size()}, {"dimensions", dims}, {"strategy", choice.name},
                         {"strategy_reason", choice.why}, {"seed", options_.seed + static_cast<uint64_t>(b)}};
    if (space.size() <= 200000) ev["valid"] = space.enumerateValid(200000).size();
    if (!options_.only.empty()) ev["only"] = regionJson(options_.only);
    trace_.add("space", ev);
    // The base as written is measured; so may be more of it, by earlier runs.
    const CandidateRecord& first = result_.candidates[static_cast<size_t>(base.record)];
    state_.tuner->preload(b == 0 ? space.baseline() : Config{}, first.objective, "base");
    preloadFromDatabase(base, space);
  }

  void preloadFromDatabase(const Base& base, const Space& space) {
    if (!db_ || !options_.reuse) return;
    std::vector<MeasurementRow> rows;
    try {
      rows = db_->measurementsFor(task_hash_, base.hash, env_);
    } catch (const UserError& e) {
      noteDbFailure(e.what());
      return;
    }
    std::map<std::string, std::vector<MeasurementRow>> by_variant;
    std::vector<std::string> order;
    for (auto& r : rows) {
      if (!by_variant.count(r.key.variant_hash)) order.push_back(r.key.variant_hash);
      by_variant[r.key.variant_hash].push_back(std::move(r));
    }
    int loaded = 0;
    std::set<int64_t> runs;
    for (const auto& vh : order) {
      if (seen_sources_.count(vh)) continue;
      const auto& vrows = by_variant[vh];
      auto config = configFromKey(vrows.front().key.params);
      if (!config) continue;
      // Only configurations this base still produces identically (the tool may have changed).
      bool known_dims = true;
      for (const auto& [id, v] : *config) {
        if (!base.tunables->find(id)) known_dims = false;
      }
      // ... and that the search may propose now (--only, the current static pruning).
      if (!known_dims || !space.valid(*config)) continue;
      std::string text;
      try {
        text = applyConfig(*base.ir, *base.tunables, *config);
      } catch (const std::logic_error&) {
        continue;
      }
      if (hashHex(text) != vh) continue;
      auto known = lookup(vh, &vrows);
      if (!known || !known->complete) continue;
      CandidateRecord rec = known->rec;
      rec.id = static_cast<int>(result_.candidates.size());
      rec.round = 0;
      rec.base = base.id;
      rec.config = *config;
      rec.config_text = describeConfig(*base.tunables, *config);
      rec.source_hash = vh;
      score(rec);
      state_.tuner->preload(*config, rec.status == CandidateStatus::kOk ? rec.objective : std::nullopt, rec.origin);
      seen_sources_[vh] = rec.id;
      runs.insert(vrows.back().run_id);
      result_.candidates.push_back(rec);
      ++loaded;
    }
    result_.preloaded += loaded;
    if (loaded) {
      trace_.add("preload", {{"base", base.id}, {"configurations", loaded}, {"runs", runs}});
      const CandidateRecord* b = bestRecord();
      progress_.status(fmt::format("reusing {} configurations measured before (best so far {:.2f}x)", loaded,
                                   b && b->objective ? 1.0 / *b->objective : 1.0));
    }
  }

  void search() {
    startBase(0, hints_);
    int workers = std::max(1, evaluator_->compileWorkers());
    int batch = options_.batch > 0 ? options_.batch : std::max(8, workers);
    std::vector<Config> seeds = autotuneSeeds(*state_.space);
    const double reserve_s = confirmReserve();
    progress_.status(fmt::format("searching {:.0f} configurations ({} strategy: {}; {} compile workers; engine {})",
                                 state_.space->size(), result_.strategy, result_.strategy_reason,
                                 evaluator_->compileWorkers(), engine_->name()));
    while (true) {
      if (elapsed() > options_.budget_s - reserve_s) {
        result_.stop_reason = "budget";
        break;
      }
      if (options_.max_candidates && result_.evaluated >= options_.max_candidates) {
        result_.stop_reason = "max-candidates";
        break;
      }
      if (target_objective_) {
        const CandidateRecord* b = bestRecord();
        if (b && b->objective && *b->objective <= *target_objective_) {
          result_.stop_reason = fmt::format("within {}% of the roofline", *options_.within_roofline_pct);
          break;
        }
      }
      int base_before = current_base_;
      std::vector<RegionRequest> regions = engineRound();
      if (current_base_ != base_before) {
        seeds.clear();
        continue;  // a pass won: search the new base from the next round
      }
      int n = batch;
      if (options_.max_candidates) n = std::min(n, options_.max_candidates - result_.evaluated);
      std::vector<Proposed> proposals;
      for (auto& s : seeds) {
        if (static_cast<int>(proposals.size()) >= n) break;
        proposals.push_back({s, fmt::format("autotune config {}", proposals.size() + 1), ""});
      }
      seeds.clear();
      int left = n - static_cast<int>(proposals.size());
      if (left > 0) {
        for (auto& p : state_.tuner->nextRound(left, regions)) proposals.push_back({p.config, p.origin, p.proposal_id});
      }
      if (proposals.empty()) {
        result_.stop_reason = state_.tuner->stopReason().empty() ? "space exhausted" : state_.tuner->stopReason();
        break;
      }
      ++result_.rounds;
      ++state_.rounds;
      double best_before = bestObjective();
      runBatch(proposals);
      std::string why = state_.tuner->endRound(baselineNoise());
      if (bestObjective() < best_before) {
        const CandidateRecord* b = bestRecord();
        if (b) diagnose(*b, *bases_[static_cast<size_t>(b->base)]);
      }
      if (!why.empty()) {
        result_.stop_reason = why;
        break;
      }
    }
  }

  // Seconds kept back for the confirmation and shutdown: two alternations of baseline and
  // best on every case, each a timing budget plus verification.
  double confirmReserve() const {
    double per_case = 0;
    for (const auto& c : result_.candidates[0].cases) per_case += 2 * 2 * (confirm_timing_ms_ / 1000.0 + 0.15 + c.wall_seconds * 0.25);
    return std::min(options_.budget_s * 0.2, 1.0 + per_case);
  }

  double bestObjective() const {
    const CandidateRecord* b = bestRecord();
    return b && b->objective ? *b->objective : 1.0;
  }

  double baselineNoise() const {
    double n = 0;
    for (const auto& c : result_.candidates[0].cases) if (c.timing) n = std::max(n, c.timing->noise());
    return n;
  }

  // The source a candidate ran: a pass's output, a base as written, or a base with a
  // configuration applied.
  std::string recordText(const CandidateRecord& rec) const {
    if (auto it = pass_texts_.find(rec.id); it != pass_texts_.end()) return it->second;
    const Base& base = *bases_[static_cast<size_t>(rec.base)];
    return textOf(base, rec.config, rec.id != base.record);
  }

  std::string textOf(const Base& base, const Config& config, bool apply = true) const {
    if (!apply || config.empty()) return base.text;
    return applyConfig(*base.ir, *base.tunables, config);
  }

  // Most register spills of any kernel a compile reported (0 when it reported none).
  static int64_t spillsOf(const nlohmann::json& kernels) {
    int64_t most = 0;
    if (!kernels.is_array()) return 0;
    for (const auto& k : kernels) {
      if (k.is_object() && k.contains("spills") && k["spills"].is_number_integer()) most = std::max(most, k["spills"].get<int64_t>());
    }
    return most;
  }

  // Measures the batch's compiled candidates in the order their compiles finish, not the
  // order they were proposed: one slow compile no longer holds up the ready ones while the
  // budget runs. A candidate that spills registers where the kernel as written does not is
  // measured after the others that are ready or still compiling (it is rarely the fastest).
  // What the budget leaves unmeasured is marked as such.
  template <typename P>
  void measureInCompileOrder(std::vector<P>& pending) {
    std::vector<size_t> todo;
    for (size_t i = 0; i < pending.size(); ++i) {
      const auto& p = pending[i];
      if (!p.known && p.duplicate_of < 0 && p.rec.status == CandidateStatus::kNotRun && p.compiled.valid()) todo.push_back(i);
    }
    const int64_t base_spills = spillsOf(result_.candidates.empty() ? nlohmann::json::array()
                                                                    : result_.candidates[0].compile.kernels);
    auto ready = [](const std::shared_future<CompileOutcome>& f) {
      return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    };
    while (!todo.empty()) {
      if (elapsed() > options_.budget_s - confirmReserve()) {
        for (size_t i : todo) pending[i].rec.message = "budget ran out before it was measured";
        return;
      }
      size_t pick = todo.size();
      size_t spilling = todo.size();
      bool compiling = false;
      for (size_t j = 0; j < todo.size(); ++j) {
        const auto& f = pending[todo[j]].compiled;
        if (!ready(f)) {
          compiling = true;
          continue;
        }
        const CompileOutcome& c = f.get();
        if (c.status == CandidateStatus::kOk && spillsOf(c.kernels) > base_spills) {
          if (spilling == todo.size()) spilling = j;
          continue;
        }
        pick = j;
        break;
      }
      if (pick == todo.size() && !compiling) pick = spilling;
      if (pick == todo.size()) {
        pending[todo.front()].compiled.wait_for(std::chrono::milliseconds(5));
        continue;
      }
      auto& p = pending[todo[pick]];
      evaluate(p.rec, p.v, p.compiled.get());
      todo.erase(todo.begin() + static_cast<std::ptrdiff_t>(pick));
    }
  }

  void runBatch(const std::vector<Proposed>& proposals) {
    struct Pending {
      CandidateRecord rec;
      Variant v;
      std::shared_future<CompileOutcome> compiled;
      int duplicate_of = -1;
      bool known = false;
    };
    const Base& base = *bases_[static_cast<size_t>(current_base_)];
    const Space& space = *state_.space;
    std::vector<Pending> pending;
    for (const auto& pr : proposals) {
      std::string why;
      Pending p;
      p.rec.id = static_cast<int>(result_.candidates.size() + pending.size());
      p.rec.round = result_.rounds;
      p.rec.base = base.id;
      p.rec.origin = pr.origin;
      p.rec.proposal = pr.proposal;
      p.rec.config = pr.config;
      p.rec.config_text = describeConfig(*base.tunables, pr.config);
      if (!space.valid(pr.config, &why)) {
        p.rec.status = CandidateStatus::kPruned;
        p.rec.message = why;
        ++result_.pruned;
        pending.push_back(std::move(p));
        continue;
      }
      std::string text;
      try {
        text = textOf(base, pr.config);
      } catch (const std::logic_error& e) {
        p.rec.status = CandidateStatus::kCompileError;
        p.rec.message = fmt::format("rewrite failed: {}", e.what());
        pending.push_back(std::move(p));
        continue;
      }
      p.rec.source_hash = hashHex(text);
      auto dup = seen_sources_.find(p.rec.source_hash);
      if (dup != seen_sources_.end()) {
        p.duplicate_of = dup->second;
      } else if (auto known = lookup(p.rec.source_hash); known && known->complete) {
        p.known = true;
        p.rec.status = known->rec.status;
        p.rec.message = known->rec.message;
        p.rec.cases = known->rec.cases;
        p.rec.compile = known->rec.compile;
        p.rec.reused = true;
        p.rec.origin += ", " + known->rec.origin;
        seen_sources_[p.rec.source_hash] = p.rec.id;
      } else {
        // Cases stored by an interrupted run are kept; only the others are measured.
        if (known) p.rec.cases = known->rec.cases;
        p.v = evaluator_->materialize(text);
        p.compiled = evaluator_->compileAsync(p.v);
        seen_sources_[p.rec.source_hash] = p.rec.id;
      }
      pending.push_back(std::move(p));
    }
    measureInCompileOrder(pending);
    for (auto& p : pending) {
      if (p.known) {
        ++result_.reused;
        score(p.rec);
      } else if (p.duplicate_of >= 0) {
        const CandidateRecord* twin = findRecord(p.duplicate_of, pending);
        if (twin) {
          p.rec.status = twin->status;
          p.rec.objective = twin->objective;
          p.rec.message = fmt::format("same source as #{}", p.duplicate_of);
        }
      }
      ++result_.evaluated;
      std::optional<double> obj;
      if (p.rec.status == CandidateStatus::kOk) obj = p.rec.objective;
      if (p.rec.status != CandidateStatus::kNotRun) {
        state_.tuner->observe({p.rec.config, p.rec.origin, p.rec.proposal}, obj);
      }
      traceCandidate(p.rec);
      result_.candidates.push_back(p.rec);
      progress_.candidate(result_.candidates.back(), bestRecord(), static_cast<int>(result_.candidates.size()),
                          elapsed());
    }
  }

  void traceCandidate(const CandidateRecord& r) {
    nlohmann::json j = {{"id", r.id},         {"round", r.round},   {"base", r.base},
                        {"origin", r.origin}, {"config", configJson(r.config)}, {"config_text", r.config_text},
                        {"status", toString(r.status)}, {"reused", r.reused}};
    if (!r.proposal.empty()) j["proposal"] = r.proposal;
    if (r.objective) j["objective"] = *r.objective;
    if (!r.message.empty()) j["message"] = r.message.substr(0, 300);
    if (r.compile.seconds > 0) j["compile_s"] = r.compile.seconds;
    trace_.add("candidate", j);
  }

  template <typename P>
  const CandidateRecord* findRecord(int id, const std::vector<P>& pending) const {
    for (const auto& c : result_.candidates) if (c.id == id) return &c;
    for (const auto& p : pending) if (p.rec.id == id) return &p.rec;
    return nullptr;
  }

  const CandidateRecord* bestRecord() const {
    const CandidateRecord* best = nullptr;
    for (const auto& c : result_.candidates) {
      if (c.status == CandidateStatus::kOk && c.objective && (!best || *c.objective < *best->objective)) best = &c;
    }
    return best;
  }

  // --- the engine ---------------------------------------------------------------------------
  std::string registerFinding(EngineFinding& f) {
    std::string key = f.kind + "|" + f.kernel + "|" + f.source + "|" + f.summary;
    auto it = finding_ids_.find(key);
    if (it != finding_ids_.end()) {
      f.id = it->second;
      return f.id;
    }
    f.id = fmt::format("F{}", finding_ids_.size() + 1);
    finding_ids_[key] = f.id;
    findings_.push_back(f);
    trace_.add("finding", f.toJson());
    return f.id;
  }

  // A proposal's references to findings, as ids.
  std::vector<std::string> resolveFindings(const std::vector<std::string>& refs) const {
    std::vector<std::string> out;
    for (const auto& r : refs) {
      std::string id;
      for (const auto& f : findings_) {
        if (f.id == r || f.kind + "@" + f.kernel == r) id = f.id;
      }
      if (id.empty()) {
        for (const auto& f : findings_) if (f.kind == r) id = f.id;
      }
      out.push_back(id.empty() ? r : id);
    }
    return out;
  }

  std::vector<RegionRequest> engineRound() {
    const Base& base = *bases_[static_cast<size_t>(current_base_)];
    EngineInput in;
    in.round = result_.rounds + 1;
    in.source = base.text;
    in.tunables = base.tunables;
    in.space = state_.space.get();
    in.diagnosis = diagnosis_;
    in.history = state_.tuner->history();
    in.budget_left_s = options_.budget_s - elapsed();
    if (auto b = state_.tuner->best()) {
      in.best = b->config;
      in.best_objective = b->objective;
      for (auto it = result_.candidates.rbegin(); it != result_.candidates.rend(); ++it) {
        if (it->base == base.id && it->status == CandidateStatus::kOk && it->objective == b->objective) {
          in.best_kernels = !it->cases.empty() ? it->cases[0].kernels : it->compile.kernels;
          break;
        }
      }
    }
    if (options_.passes) {
      for (const auto& p : options_.passes->available()) {
        if (!options_.disabled_passes.count(p)) in.passes.push_back(p);
      }
    }
    EngineOutput out = engine_->propose(in);
    if (!out.error.empty()) {
      if (!engine_error_traced_) trace_.add("engine-error", {{"engine", engine_->name()}, {"message", out.error}});
      engine_error_traced_ = true;
      return {};
    }
    for (auto& f : out.findings) {
      if (f.source.empty()) f.source = engine_->name();
      registerFinding(f);
    }
    std::vector<RegionRequest> regions;
    for (auto& p : out.proposals) {
      p.findings = resolveFindings(p.findings);
      nlohmann::json body = p.toJson();
      body.erase("id");
      body["base"] = base.id;
      std::string key = body.dump();
      auto it = proposal_ids_.find(key);
      if (it == proposal_ids_.end()) {
        it = proposal_ids_.emplace(key, fmt::format("P{}", proposal_ids_.size() + 1)).first;
        p.id = it->second;
        nlohmann::json ev = p.toJson();
        ev["round"] = in.round;
        ev["base"] = base.id;
        trace_.add("proposal", ev);
      }
      p.id = it->second;
      if (p.kind == Proposal::Kind::kRegion) {
        std::string label;
        for (const auto& fid : p.findings) {
          for (const auto& f : findings_) if (f.id == fid) label += (label.empty() ? "" : ", ") + f.id + " " + f.kind;
        }
        regions.push_back({p.id, p.region, p.share, label});
      } else {
        tryPass(p);
        if (current_base_ != base.id) return {};
      }
    }
    return regions;
  }

  void tryPass(const Proposal& p) {
    const Base& base = *bases_[static_cast<size_t>(current_base_)];
    std::string key = fmt::format("{}|{}", base.id, p.id);
    if (passes_tried_.count(key)) return;
    // A pass is tried on the best configuration found on this base, so it waits for the
    // base's first round of search (a pass that pays off only with large tiles would lose
    // against the kernel as written, and be dropped).
    if (state_.rounds == 0) return;
    passes_tried_.insert(key);
    auto skip = [&](const std::string& why) {
      trace_.add("pass-skipped", {{"proposal", p.id}, {"pass", p.pass}, {"kernel", p.kernel}, {"reason", why}});
    };
    if (!options_.passes) return skip("no transformation passes are available to the loop yet");
    if (options_.disabled_passes.count(p.pass)) return skip("switched off with --no-pass");
    auto avail = options_.passes->available();
    if (std::find(avail.begin(), avail.end(), p.pass) == avail.end()) return skip("no such pass");
    if (elapsed() > options_.budget_s - 10) return skip("not enough budget left");
    // (engineRound, the only caller, runs inside the search: the base's tuner exists.)
    std::string on_text = base.text;
    std::string on_config;
    if (auto b = state_.tuner->best(); b && !b->config.empty()) {
      on_text = textOf(base, b->config);
      on_config = describeConfig(*base.tunables, b->config);
    }
    PassApplication out = options_.passes->apply(on_text, p.kernel, p.pass, p.params);
    if (!out.applied) {
      trace_.add("pass-refused", {{"proposal", p.id}, {"pass", p.pass}, {"kernel", p.kernel}, {"reason", out.message}});
      return;
    }
    CandidateRecord rec;
    rec.id = static_cast<int>(result_.candidates.size());
    rec.round = result_.rounds + 1;
    rec.base = base.id;
    rec.origin = fmt::format("pass {}", p.pass);
    rec.proposal = p.id;
    rec.config_text = fmt::format("pass {}{}{}", p.pass, p.params.empty() ? "" : " " + p.params.dump(),
                                  on_config.empty() ? "" : " on " + on_config);
    rec.source_hash = hashHex(out.source);
    if (auto dup = seen_sources_.find(rec.source_hash); dup != seen_sources_.end()) {
      trace_.add("pass-refused", {{"proposal", p.id}, {"pass", p.pass},
                                  {"reason", fmt::format("the same source as #{}", dup->second)}});
      return;
    }
    seen_sources_[rec.source_hash] = rec.id;
    pass_texts_[rec.id] = out.source;
    auto known = lookup(rec.source_hash);
    if (known && known->complete) {
      rec.status = known->rec.status;
      rec.cases = known->rec.cases;
      rec.compile = known->rec.compile;
      rec.message = known->rec.message;
      rec.reused = true;
      ++result_.reused;
      score(rec);
    } else {
      if (known) rec.cases = known->rec.cases;
      Variant v = evaluator_->materialize(out.source);
      evaluate(rec, v, evaluator_->compileAsync(v).get());
    }
    ++result_.evaluated;
    double before = bestObjective();
    traceCandidate(rec);
    result_.candidates.push_back(rec);
    progress_.candidate(result_.candidates.back(), bestRecord(), static_cast<int>(result_.candidates.size()), elapsed());
    bool wins = rec.status == CandidateStatus::kOk && rec.objective &&
                *rec.objective < before * (1.0 - std::max(0.005, baselineNoise()));
    trace_.add("pass-result", {{"proposal", p.id}, {"pass", p.pass}, {"candidate", rec.id},
                               {"status", toString(rec.status)},
                               {"objective", rec.objective ? nlohmann::json(*rec.objective) : nullptr},
                               {"best_before", before}, {"won", wins}});
    if (wins) switchBase(rec, out.source, fmt::format("pass {} ({}) on base {}", p.pass, p.id, base.id));
  }

  // A pass's variant won: it becomes the source whose parameters are searched next.
  void switchBase(const CandidateRecord& rec, const std::string& text, const std::string& origin) {
    auto b = std::make_unique<Base>();
    b->id = static_cast<int>(bases_.size());
    b->origin = origin;
    b->text = text;
    b->hash = rec.source_hash;
    b->record = rec.id;
    try {
      b->parsed = std::make_unique<ParsedSource>(parseSource(evaluator_->mainWorker(), task_.source, text));
    } catch (const std::exception& e) {
      trace_.add("base-refused", {{"candidate", rec.id}, {"reason", e.what()}});
      return;
    }
    b->owned_ir = std::make_unique<ModuleIR>(buildModuleIR(*b->parsed));
    b->owned_tunables = std::make_unique<TunableSet>(discoverTunables(*b->owned_ir, task_.launcher, task_.kernels));
    b->ir = b->owned_ir.get();
    b->tunables = b->owned_tunables.get();
    SpaceHints hints = hints_;
    hints.observed.clear();
    noteHints(rec, *b->tunables, &hints);
    current_base_ = b->id;
    trace_.add("base", {{"base", b->id}, {"origin", origin}, {"candidate", rec.id}, {"source_hash", b->hash},
                        {"tunables", b->tunables->active().size()}});
    result_.bases.push_back(origin);
    bases_.push_back(std::move(b));
    startBase(current_base_, hints);
    diagnose(rec, *bases_.back());
  }

  // --- confirmation -------------------------------------------------------------------------
  // Re-measures the best candidate and the baseline alternately with a larger timing
  // budget, so that the reported speed-up is not the winner's luck in one measurement.
  void confirm() {
    const CandidateRecord* best = bestRecord();
    result_.best_source = sources_.source.source.text();
    if (!best || best->id == 0) {
      result_.speedup = 1.0;
      result_.confirm_baseline = result_.candidates[0].cases;
      if (result_.stop_reason.empty()) result_.stop_reason = "done";
      result_.notes.push_back("no configuration beat the kernel as written: the original is handed back");
      trace_.add("confirm", {{"best", nullptr}, {"accepted", false}});
      return;
    }
    progress_.status(fmt::format("confirming #{} against the kernel as written", best->id));
    std::string best_text = recordText(*best);
    Variant vb = evaluator_->materialize(sources_.source.source.text());
    Variant vc = evaluator_->materialize(best_text);
    TimingOptions t = search_timing_;
    t.budget_ms = std::max(confirm_timing_ms_, options_.timing_budget_ms);
    std::vector<std::vector<double>> basev(task_.cases.size()), cand(task_.cases.size());
    std::vector<CaseMeasurement> base_last(task_.cases.size()), cand_last(task_.cases.size());
    bool failed = false;
    for (int rep = 0; rep < 2 && !failed; ++rep) {
      for (size_t i = 0; i < task_.cases.size(); ++i) {
        CaseMeasurement mb = evaluator_->measure(vb, i, t);
        CaseMeasurement mc = evaluator_->measure(vc, i, t);
        if (mb.status != CandidateStatus::kOk || mc.status != CandidateStatus::kOk) {
          failed = true;
          result_.notes.push_back(fmt::format("confirmation run failed on case {}: {} / {}", task_.caseLabel(i),
                                              mb.message, mc.message));
          break;
        }
        basev[i].push_back(mb.timing->median_ms);
        cand[i].push_back(mc.timing->median_ms);
        base_last[i] = mb;
        cand_last[i] = mc;
      }
    }
    if (failed) {
      result_.speedup = 1.0;
      result_.confirm_baseline = result_.candidates[0].cases;
      result_.notes.push_back("the original is handed back");
      trace_.add("confirm", {{"best", best->id}, {"accepted", false}, {"reason", "the confirmation run failed"}});
      return;
    }
    std::vector<double> ratios;
    double noise = 0;
    nlohmann::json per = nlohmann::json::array();
    for (size_t i = 0; i < task_.cases.size(); ++i) {
      double b = *std::min_element(basev[i].begin(), basev[i].end());
      double c = *std::min_element(cand[i].begin(), cand[i].end());
      // Keep the median of the better repetition as the reported figure.
      base_last[i].timing->median_ms = b;
      cand_last[i].timing->median_ms = c;
      ratios.push_back(c / b);
      noise = std::max({noise, base_last[i].timing->noise(), cand_last[i].timing->noise()});
      per.push_back({{"case", task_.caseLabel(i)}, {"baseline_ms", b}, {"best_ms", c}});
    }
    double obj = geomean(ratios);
    result_.confirm_baseline = base_last;
    result_.confirm_best = cand_last;
    bool accepted = obj < 1.0 - std::max(0.01, noise);
    if (accepted) {
      result_.best = best->id;
      result_.best_source = best_text;
      result_.speedup = 1.0 / obj;
    } else {
      result_.speedup = 1.0;
      result_.notes.push_back(fmt::format(
          "the best candidate (#{}) was within the noise of the original on re-measurement ({:.3f}x); "
          "the original is handed back",
          best->id, 1.0 / obj));
    }
    trace_.add("confirm", {{"best", best->id}, {"cases", per}, {"speedup", 1.0 / obj}, {"noise", noise},
                           {"accepted", accepted}});
    if (result_.stop_reason.empty()) result_.stop_reason = "done";
  }

  const Task& task_;
  const TaskSources& sources_;
  const TunableSet& tunables_;
  const OptimizeOptions& options_;
  OptimizeProgress& progress_;
  Clock::time_point t0_;
  fs::path work_dir_;
  std::unique_ptr<Evaluator> evaluator_;
  std::shared_ptr<ReasoningEngine> engine_;
  OptimizeResult result_;
  Trace trace_;
  SpaceHints hints_;
  std::vector<double> baseline_times_;
  std::vector<nlohmann::json> baseline_outputs_;
  std::map<std::string, int> seen_sources_;
  TimingOptions search_timing_;
  double confirm_timing_ms_ = 600;
  std::optional<Ceilings> ceilings_;  // tests tell confirmation runs by budget_ms >= 600
  std::optional<double> target_objective_;
  // database
  std::unique_ptr<ResultsDb> db_;
  bool db_failed_ = false;
  MeasureEnv env_;
  std::string task_hash_;
  // bases and the search over the current one
  std::vector<std::unique_ptr<Base>> bases_;
  int current_base_ = 0;
  std::map<int, std::string> pass_texts_;  // candidate id -> the source a pass made
  SearchState state_;
  // engine bookkeeping
  std::vector<EngineDiagnosis> diagnosis_;
  std::map<std::string, std::string> finding_ids_;   // key -> id
  std::vector<EngineFinding> findings_;
  std::map<std::string, std::string> proposal_ids_;  // body -> id
  std::set<std::string> passes_tried_;
  bool engine_error_traced_ = false;
};

}  // namespace

OptimizeResult optimize(const Task& task, const TaskSources& sources, const TunableSet& tunables,
                        const OptimizeOptions& options, OptimizeProgress& progress) {
  return Loop(task, sources, tunables, options, progress).run();
}

nlohmann::json compileChecks(const Task& task, const TaskSources& sources, const TunableSet& tunables,
                             WorkerProcess& worker) {
  nlohmann::json out = nlohmann::json::array();
  std::set<std::string> kernels;
  for (int s : tunables.sites) kernels.insert(sources.ir.launches[static_cast<size_t>(s)].kernel);
  for (const auto& name : kernels) {
    const Kernel* k = sources.ir.kernel(name);
    nlohmann::json check = {{"kernel", name}, {"target", "cuda:90"}};
    auto sig_it = task.signatures.find(name);
    if (sig_it == task.signatures.end()) {
      check["status"] = "skipped";
      check["reason"] = fmt::format("no [signature.{}] in the task: parameter types are known only from a run on a GPU",
                                    name);
      out.push_back(check);
      continue;
    }
    nlohmann::json signature = nlohmann::json::object(), constexprs = nlohmann::json::object();
    for (const auto& [p, v] : sig_it->second) {
      if (v.is_string()) signature[p] = v;
      else constexprs[p] = v;
    }
    nlohmann::json options = nlohmann::json::object();
    std::vector<std::string> missing;
    for (const auto& p : k->params) {
      if (!p.is_constexpr || constexprs.contains(p.name)) continue;
      const Tunable* t = nullptr;
      for (const auto& x : tunables.items) if (x.kernel == name && x.param == p.name) t = &x;
      if (t && t->value) constexprs[p.name] = *t->value;
      else if (p.default_int) constexprs[p.name] = *p.default_int;
      else missing.push_back(p.name);
    }
    for (const auto& t : tunables.items) {
      if (t.kernel == name && (t.role == TunableRole::kNumWarps || t.role == TunableRole::kNumStages) && t.value) {
        options[t.param] = *t.value;
      }
    }
    if (!missing.empty()) {
      std::string list;
      for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
      check["status"] = "skipped";
      check["reason"] = fmt::format("the value of {} is computed at run time; give it in [signature.{}]", list, name);
      out.push_back(check);
      continue;
    }
    nlohmann::json args = {{"path", task.source.string()},
                           {"kernel", name},
                           {"signature", signature},
                           {"constexprs", constexprs},
                           {"options", options},
                           {"target", {{"backend", "cuda"}, {"arch", 90}, {"warp_size", 32}}},
                           {"want", {"spills"}}};
    WorkerReply r = worker.call("compile", args, std::chrono::milliseconds(300000));
    if (r.ok()) {
      check["status"] = "ok";
      check["result"] = r.result;
    } else {
      check["status"] = r.result.is_object() ? r.result.value("status", "compile-error") : "compile-error";
      check["reason"] = r.error_type.empty() ? r.message : r.error_type + ": " + r.message;
    }
    out.push_back(check);
  }
  return out;
}

}  // namespace tf

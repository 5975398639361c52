#include "search/optimizer.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <thread>

#include "search/space.h"
#include "search/strategy.h"
#include "util/error.h"
#include "util/hash.h"

namespace tf {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

nlohmann::json CandidateRecord::toJson() const {
  nlohmann::json cfg = nlohmann::json::object();
  for (const auto& [k, v] : config) cfg[k] = v == kKeep ? nlohmann::json("as-written") : nlohmann::json(v);
  nlohmann::json j = {{"id", id},
                      {"round", round},
                      {"origin", origin},
                      {"config", cfg},
                      {"config_text", config_text},
                      {"source_hash", source_hash},
                      {"status", toString(status)}};
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

class Loop {
 public:
  Loop(const Task& task, const TaskSources& sources, const TunableSet& tunables, const OptimizeOptions& options,
       OptimizeProgress& progress)
      : task_(task), sources_(sources), tunables_(tunables), options_(options), progress_(progress),
        t0_(Clock::now()) {}

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
    int want = options_.compile_workers > 0 ? options_.compile_workers : defaultCompileWorkers();
    // Compile workers start (import torch and Triton) while the baseline is measured.
    std::thread pool_starter;
    if (!tunables_.active().empty()) {
      pool_starter = std::thread([this, want] { started_workers_ = evaluator_->startCompilePool(want); });
    }
    progress_.status("measuring the kernel as written");
    measureBaseline();
    if (pool_starter.joinable()) pool_starter.join();
    if (!tunables_.active().empty()) search();
    else result_.stop_reason = "nothing to tune";
    confirm();
    finishTiming();
    progress_.finish();
    return std::move(result_);
  }

 private:
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - t0_).count(); }
  void finishTiming() { result_.elapsed_s = elapsed(); }

  // Measures a configuration on every case; fills the record's status and objective.
  void evaluate(CandidateRecord& rec, const Variant& v, const CompileOutcome& compiled) {
    rec.compile = compiled;
    if (compiled.status != CandidateStatus::kOk) {
      rec.status = compiled.status;
      rec.message = compiled.message;
      return;
    }
    std::vector<double> ratios;
    for (size_t i = 0; i < task_.cases.size(); ++i) {
      CaseMeasurement m = evaluator_->measure(v, i, search_timing_);
      rec.cases.push_back(m);
      if (m.status != CandidateStatus::kOk) {
        rec.status = m.status;
        rec.message = fmt::format("case {}: {}", task_.caseLabel(i), m.message);
        return;
      }
      if (!baseline_times_.empty()) ratios.push_back(m.timing->median_ms / baseline_times_[i]);
    }
    // The drop-in replacement must return what the original returns.
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
    rec.status = CandidateStatus::kOk;
    if (!ratios.empty()) rec.objective = geomean(ratios);
  }

  void measureBaseline() {
    CandidateRecord rec;
    rec.id = 0;
    rec.origin = "baseline";
    rec.config = Space(tunables_, SpaceHints{}).baseline();
    rec.config_text = "as written";
    const std::string& text = sources_.source.source.text();
    rec.source_hash = hashHex(text);
    Variant v = evaluator_->materialize(text);
    // Compile on the measurement worker itself: the pool is still starting.
    CompileOutcome compiled;
    compiled.status = CandidateStatus::kOk;
    evaluate(rec, v, compiled);
    if (rec.status != CandidateStatus::kOk) {
      std::string what = rec.status == CandidateStatus::kWrongResult
                             ? "does not match the harness reference"
                             : std::string("fails (") + toString(rec.status) + ")";
      std::string detail;
      if (!rec.cases.empty() && !rec.cases.back().detail.empty()) detail = "\n" + rec.cases.back().detail;
      throw UserError(fmt::format("{}: the kernel as written {}: {}{}", task_.source.string(), what, rec.message,
                                  detail));
    }
    rec.objective = 1.0;
    for (const auto& c : rec.cases) {
      baseline_times_.push_back(c.timing->median_ms);
      baseline_outputs_.push_back(c.outputs);
    }
    rec.compile.kernels = rec.cases.front().kernels;
    noteHints(rec);
    result_.candidates.push_back(rec);
    seen_sources_[rec.source_hash] = 0;
    progress_.candidate(result_.candidates.back(), nullptr, 1, elapsed());
  }

  // Run-time facts that sharpen the space: element sizes, values of derived parameters.
  void noteHints(const CandidateRecord& baseline) {
    for (const auto& c : baseline.cases) {
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
          if (smallest) hints_.elem_bytes[name] = smallest;
        }
        if (k.contains("constexprs")) {
          for (const auto& t : tunables_.items) {
            if (t.kernel != name) continue;
            auto it = k["constexprs"].find(t.param);
            if (it != k["constexprs"].end() && it->is_number_integer()) hints_.observed[t.id].push_back(it->get<int64_t>());
          }
        }
        if (k.contains("num_warps")) {
          for (const auto& t : tunables_.items) {
            if (t.kernel == name && t.role == TunableRole::kNumWarps) hints_.observed[t.id].push_back(k["num_warps"]);
          }
        }
      }
    }
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

  void search() {
    Space space(tunables_, hints_);
    result_.space_size = space.size();
    auto strategy = makeStrategy(chooseStrategy(options_.strategy, space).name, options_.seed);
    result_.strategy = strategy->name();
    std::vector<Observation> history;
    history.push_back({result_.candidates[0].config, 1.0});
    int workers = std::max(1, evaluator_->compileWorkers());
    int batch = std::max(8, 2 * workers);
    double best_obj = 1.0;
    int stall = 0;
    std::vector<Config> seeds = autotuneSeeds(space);
    const double reserve_s = std::min(12.0, options_.budget_s * 0.15);  // for the confirmation
    progress_.status(fmt::format("searching {:.0f} configurations ({} strategy, {} compile workers)", space.size(),
                                 strategy->name(), evaluator_->compileWorkers()));
    while (true) {
      if (elapsed() > options_.budget_s - reserve_s) {
        result_.stop_reason = "budget";
        break;
      }
      if (options_.max_candidates && static_cast<int>(result_.candidates.size()) > options_.max_candidates) {
        result_.stop_reason = "max-candidates";
        break;
      }
      std::vector<std::pair<Config, std::string>> proposals;
      for (auto& s : seeds) proposals.emplace_back(s, fmt::format("autotune config {}", proposals.size() + 1));
      seeds.clear();
      std::vector<Config> more = strategy->propose(space, history, batch - static_cast<int>(proposals.size()));
      for (auto& c : more) proposals.emplace_back(c, result_.rounds == 0 ? "prior" : "search");
      if (proposals.empty()) {
        result_.stop_reason = "space exhausted";
        break;
      }
      ++result_.rounds;
      double round_best = best_obj;
      runBatch(space, proposals, history);
      for (const auto& c : result_.candidates) {
        if (c.objective && *c.objective < round_best) round_best = *c.objective;
      }
      double noise = baselineNoise();
      if (round_best < best_obj * (1.0 - std::max(0.005, noise))) {
        best_obj = round_best;
        stall = 0;
      } else if (++stall >= options_.stall_rounds) {
        result_.stop_reason = fmt::format("no gain in {} rounds", stall);
        break;
      }
    }
  }

  double baselineNoise() const {
    double n = 0;
    for (const auto& c : result_.candidates[0].cases) if (c.timing) n = std::max(n, c.timing->noise());
    return n;
  }

  void runBatch(const Space& space, const std::vector<std::pair<Config, std::string>>& proposals,
                std::vector<Observation>& history) {
    struct Pending {
      CandidateRecord rec;
      Variant v;
      std::shared_future<CompileOutcome> compiled;
      int duplicate_of = -1;
    };
    std::vector<Pending> pending;
    for (const auto& [config, origin] : proposals) {
      std::string why;
      Pending p;
      p.rec.id = static_cast<int>(result_.candidates.size() + pending.size());
      p.rec.round = result_.rounds;
      p.rec.origin = origin;
      p.rec.config = config;
      p.rec.config_text = describeConfig(tunables_, config);
      if (!space.valid(config, &why)) {
        p.rec.status = CandidateStatus::kPruned;
        p.rec.message = why;
        ++result_.pruned;
        pending.push_back(std::move(p));
        continue;
      }
      std::string text;
      try {
        text = applyConfig(sources_.ir, tunables_, config);
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
      } else {
        p.v = evaluator_->materialize(text);
        p.compiled = evaluator_->compileAsync(p.v);
        seen_sources_[p.rec.source_hash] = p.rec.id;
      }
      pending.push_back(std::move(p));
    }
    for (auto& p : pending) {
      if (p.rec.status == CandidateStatus::kNotRun && p.duplicate_of < 0) {
        if (elapsed() > options_.budget_s - 5) {
          p.rec.message = "budget ran out before it was measured";
        } else {
          evaluate(p.rec, p.v, p.compiled.get());
        }
      } else if (p.duplicate_of >= 0) {
        const CandidateRecord* twin = findRecord(p.duplicate_of, pending);
        if (twin) {
          p.rec.status = twin->status;
          p.rec.objective = twin->objective;
          p.rec.message = fmt::format("same source as #{}", p.duplicate_of);
        }
      }
      history.push_back({p.rec.config, p.rec.status == CandidateStatus::kOk ? p.rec.objective : std::nullopt});
      result_.candidates.push_back(p.rec);
      progress_.candidate(result_.candidates.back(), bestRecord(), static_cast<int>(result_.candidates.size()),
                          elapsed());
    }
  }

  const CandidateRecord* findRecord(int id, const std::vector<auto>& pending) const {
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
      return;
    }
    progress_.status(fmt::format("confirming #{} against the kernel as written", best->id));
    std::string best_text = applyConfig(sources_.ir, tunables_, best->config);
    Variant vb = evaluator_->materialize(sources_.source.source.text());
    Variant vc = evaluator_->materialize(best_text);
    TimingOptions t = search_timing_;
    t.budget_ms = 600;
    std::vector<std::vector<double>> base(task_.cases.size()), cand(task_.cases.size());
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
        base[i].push_back(mb.timing->median_ms);
        cand[i].push_back(mc.timing->median_ms);
        base_last[i] = mb;
        cand_last[i] = mc;
      }
    }
    if (failed) {
      result_.speedup = 1.0;
      result_.confirm_baseline = result_.candidates[0].cases;
      result_.notes.push_back("the original is handed back");
      return;
    }
    std::vector<double> ratios;
    double noise = 0;
    for (size_t i = 0; i < task_.cases.size(); ++i) {
      double b = *std::min_element(base[i].begin(), base[i].end());
      double c = *std::min_element(cand[i].begin(), cand[i].end());
      // Keep the median of the better repetition as the reported figure.
      base_last[i].timing->median_ms = b;
      cand_last[i].timing->median_ms = c;
      ratios.push_back(c / b);
      noise = std::max({noise, base_last[i].timing->noise(), cand_last[i].timing->noise()});
    }
    double obj = geomean(ratios);
    result_.confirm_baseline = base_last;
    result_.confirm_best = cand_last;
    if (obj < 1.0 - std::max(0.01, noise)) {
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
  OptimizeResult result_;
  SpaceHints hints_;
  std::vector<double> baseline_times_;
  std::vector<nlohmann::json> baseline_outputs_;
  std::map<std::string, int> seen_sources_;
  TimingOptions search_timing_;
  int started_workers_ = 0;
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

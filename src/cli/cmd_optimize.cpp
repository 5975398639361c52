// tritonforge optimize TASK.toml [--budget S] [--out DIR] [--json [--progress]] [--strategy S] [--seed K]
//   [--db FILE | --no-db] [--fresh] [--engine E] [--only PARAM=V1,V2 ...] [--no-pass P ...] ...
//   [--llm-endpoint URL] [--llm-max-requests N] [--llm-timeout S] [--dry-run]
// Environment: TRITONFORGE_LLM_ENDPOINT (the default of --llm-endpoint); the worker that asks
// the model reads TRITONFORGE_LLM_API_KEY, else OPENAI_API_KEY (this file never does).
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/optimize_command.h"
#include "cli/progress.h"
#include "kernel/tunables.h"
#include "report/optimize_report.h"
#include "search/dry_run.h"
#include "search/optimizer.h"
#include "search/strategy.h"
#include "transform/pass.h"
#include "transform/pass_applier.h"
#include "store/baseline_file.h"
#include "store/results_db.h"
#include "task/task.h"
#include "task/task_sources.h"
#include "util/error.h"
#include "worker/worker_process.h"

namespace tf {

void printTunables(const TunableSet& t) {
  std::fprintf(stderr, "Tunables:\n");
  for (const auto& x : t.items) {
    std::string value = x.value ? std::to_string(*x.value) : x.expr_text;
    std::fprintf(stderr, "  %-32s %-18s %-10s %-12s %s\n", x.id.c_str(), toString(x.origin), toString(x.role),
                 value.c_str(), x.tunable ? "tuned" : ("left alone: " + x.note).c_str());
  }
  for (const auto& n : t.notes) std::fprintf(stderr, "  note: %s\n", n.c_str());
}

namespace {

// "--only BLOCK_M=64,128" (a parameter name, or a tunable id "kernel.PARAM") -> region.
Region parseOnly(const std::vector<std::string>& specs, const TunableSet& tunables) {
  Region r;
  for (const auto& spec : specs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 >= spec.size()) {
      throw UserError(fmt::format("--only {}: expected PARAM=V1,V2,...", spec));
    }
    std::string name = spec.substr(0, eq);
    std::vector<const Tunable*> match;
    for (const auto& t : tunables.items) {
      if (t.tunable && (t.id == name || t.param == name)) match.push_back(&t);
    }
    if (match.empty()) {
      std::string known;
      for (const Tunable* t : tunables.active()) known += (known.empty() ? "" : ", ") + t->id;
      throw UserError(fmt::format("--only {}: no tunable parameter named '{}' (tunables: {})", spec, name,
                                  known.empty() ? "none" : known));
    }
    std::vector<int64_t> values;
    std::string list = spec.substr(eq + 1);
    size_t pos = 0;
    while (pos <= list.size()) {
      size_t comma = list.find(',', pos);
      std::string item = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      try {
        size_t used = 0;
        long long v = std::stoll(item, &used);
        if (used != item.size()) throw std::invalid_argument(item);
        values.push_back(v);
      } catch (const std::exception&) {
        throw UserError(fmt::format("--only {}: '{}' is not an integer", spec, item));
      }
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
    for (const Tunable* t : match) r[t->id] = values;
  }
  return r;
}

// The engine's settings from the flags; bad values are bad input (exit 2) before anything runs.
EngineSettings engineSettings(const OptimizeFlags& f, const GlobalOptions& global) {
  EngineSettings es;
  es.worker = workerOptionsFor(global, false);
  es.llm_endpoint = f.llm_endpoint;
  if (es.llm_endpoint.empty()) {
    if (const char* env = std::getenv("TRITONFORGE_LLM_ENDPOINT"); env && *env) es.llm_endpoint = env;
  }
  es.llm_max_requests = f.llm_max_requests;
  es.llm_timeout_s = f.llm_timeout;
  checkPositiveFlag("--llm-timeout", f.llm_timeout, 3600);
  // The model engine's settings are checked whatever the engine: an endpoint given on the
  // command line for another engine too (a typo should not wait for the day the engine is
  // switched); without one, only the request cap.
  EngineSettings probe = es;
  if (!llmModelOf(f.engine) && f.llm_endpoint.empty()) probe.llm_endpoint = "http://unused";
  checkLlmSettings(probe);
  return es;
}

int runDryRun(const OptimizeFlags& f, const GlobalOptions& global, const Task& task, const TaskSources& sources,
              const TunableSet& tunables, const EngineSettings& es, const PassFilter& switched_off) {
  std::unique_ptr<ReasoningEngine> engine = makeEngine(f.engine, es);
  std::vector<std::string> passes;
  if (!f.no_passes) {
    // The passes the loop could apply (the applier starts no worker to say so).
    TransformSettings settings;
    settings.source_path = task.source;
    TransformPassApplier applier(workerOptionsFor(global, false), std::move(settings), switched_off.disabled());
    passes = applier.enabled();
  }
  WorkerOptions wo = workerOptionsFor(global, false);
  wo.name = "compile worker";
  WorkerProcess worker(wo);
  nlohmann::json dry = dryRun(task, sources, tunables, *engine, worker, passes);
  if (f.json) std::cout << dry.dump(2) << std::endl;
  else std::fputs(dryRunSummary(dry).c_str(), stdout);
  return 0;
}

}  // namespace

void applyEffort(OptimizeFlags& f) {
  auto set = [&f](const char* flag, auto& field, auto value) {
    if (!f.given.count(flag)) field = value;
  };
  if (f.effort == "default") return;
  if (f.effort == "quick") {
    // Reach what @triton.autotune over a standard config list reaches, in about its time:
    // the best-known configurations first (earlier runs in the results database, the kernel's
    // own autotune configs, then the rules' prior ranking), short timings, parameters only,
    // and stop at the first round without a gain.
    set("--budget", f.budget, 20.0);
    set("--stall-rounds", f.stall_rounds, 1);
    set("--timing-ms", f.timing_ms, 100.0);
    set("--strategy", f.strategy, std::string("local"));
    set("--no-passes", f.no_passes, true);
    return;
  }
  if (f.effort == "full") {
    // Leave nothing out: wider domains, every pass, no stop for rounds without a gain (the
    // budget, the candidate cap and the roofline target still stop it).
    set("--budget", f.budget, 300.0);
    set("--stall-rounds", f.stall_rounds, 0);
    return;
  }
  throw UserError(fmt::format("--effort must be quick, default or full, not '{}'", f.effort));
}

// The flags' checks that need no task (bad values are bad input, exit 2).
void checkOptimizeFlags(OptimizeFlags& f, const GlobalOptions& global) {
  applyEffort(f);
  checkPositiveFlag("--budget", f.budget, 1e9);
  checkPositiveFlag("--timing-ms", f.timing_ms, 3.6e6);
  checkJobsFlag(f.jobs);
  checkTimeoutFlag("--compile-timeout", f.compile_timeout);
  checkTimeoutFlag("--run-timeout", f.run_timeout);
  if (f.within_roofline != -1 && !(std::isfinite(f.within_roofline) && f.within_roofline >= 0)) {
    throw UserError(fmt::format("--within-roofline must be a percentage >= 0, not {}", f.within_roofline));
  }
  if (f.max_candidates < 0) {
    throw UserError(fmt::format("--max-candidates must be 0 (no cap) or more, not {}", f.max_candidates));
  }
  if (f.batch < 0) throw UserError(fmt::format("--batch must be 0 (automatic) or more, not {}", f.batch));
  if (f.stall_rounds < 0) throw UserError(fmt::format("--stall-rounds must be 0 (never) or more, not {}", f.stall_rounds));
  if (f.no_db && !f.db.empty()) throw UserError("--db and --no-db exclude each other");
  checkStrategyName(f.strategy);
  EngineSettings engine_settings = engineSettings(f, global);
  makeEngine(f.engine, engine_settings);  // rejects an unknown engine before anything runs
  PassFilter switched_off;
  for (const auto& name : f.no_pass) switched_off.disable(name);  // an unknown name is bad input
  // A --db that cannot be written, or is not a results database, is an error now, before
  // anything is printed; nothing is created until the task has been accepted.
  if (!f.no_db && !f.db.empty()) ResultsDb::checkUsable(f.db);
  // So is a --save-baseline file that exists but is not a baseline file (it is not overwritten).
  if (!f.save_baseline.empty() && std::filesystem::exists(f.save_baseline)) loadBaselineFile(f.save_baseline);
}

// Loads and checks one task and builds its options (flags already checked).
std::unique_ptr<PreparedRun> prepareRun(const OptimizeFlags& f, const GlobalOptions& global, const std::string& task_path,
                                        const std::filesystem::path& out_root,
                                        std::chrono::steady_clock::time_point started) {
  auto p = std::make_unique<PreparedRun>();
  p->engine_settings = engineSettings(f, global);
  for (const auto& name : f.no_pass) p->switched_off.disable(name);
  p->task = loadTask(task_path);
  const Task& task = p->task;
  checkOutputDir(task, out_root);
  {
    WorkerOptions wo = workerOptionsFor(global, false);
    wo.name = "parse worker";
    WorkerProcess parser(wo);
    p->sources = loadTaskSources(task, parser);
  }
  p->tunables = std::make_unique<TunableSet>(
      discoverTunables(p->sources->ir, task.launcher, task.kernels, task.direction == "backward"));
  const TunableSet& tunables = *p->tunables;
  if (tunables.sites.empty()) {
    std::string why;
    for (const auto& n : tunables.notes) why += "; " + n;
    throw UserError(fmt::format("{}: {} '{}' launches no @triton.jit kernel of this file or of the modules "
                                "of its package it imports{}",
                                task.source.string(),
                                task.direction == "backward" ? "the backward of the launcher" : "the launcher",
                                task.launcher, why));
  }
  OptimizeOptions& options = p->options;
  options.only = parseOnly(f.only, tunables);
  options.budget_s = f.budget;
  // Measured on the H200: bench wall times 3-4 s past the loop's end (report.html's figures).
  options.outputs_s = std::min(3.5, 0.06 * f.budget);
  options.started = started;
  options.compile_workers = f.jobs;
  options.strategy = f.strategy;
  options.seed = f.seed;
  options.max_candidates = f.max_candidates;
  options.stall_rounds = f.stall_rounds;
  options.batch = f.batch;
  options.timing_budget_ms = f.timing_ms;
  options.start_configs = f.start_configs;
  options.keep_work = f.keep_work;
  options.engine = f.engine;
  options.effort = f.effort;
  options.warm_start_from_db = f.effort == "quick";
  options.every_pass = f.effort == "full";
  options.wide_space = f.effort == "full";
  options.widen_exhausted = !f.no_widen;
  options.engine_settings = p->engine_settings;
  if (!f.no_passes) {
    TransformSettings settings;
    settings.source_path = task.source;
    settings.signatures = task.signatures;
    settings.rtol = task.check.rtol;
    settings.atol = task.check.atol;
    // Every variant is compiled by the loop's pool anyway (for every case's specialization,
    // in parallel): the pass worker only checks that it parses.
    settings.compile = false;
    settings.imported = p->sources->importedKernels();
    options.passes = std::make_shared<TransformPassApplier>(workerOptionsFor(global, false), std::move(settings),
                                                            p->switched_off.disabled());
  }
  options.builtin_diagnosis = !f.no_diagnosis;
  if (f.within_roofline >= 0) options.within_roofline_pct = f.within_roofline;
  options.reuse = !f.fresh;
  if (!f.no_db) {
    options.db_path = f.db.empty() ? ResultsDb::defaultPath() : std::filesystem::path(f.db);
  }
  options.evaluator.worker = workerOptionsFor(global, true);
  options.evaluator.timeouts.warm = std::chrono::milliseconds(static_cast<int64_t>(f.compile_timeout * 1000));
  options.evaluator.timeouts.run = std::chrono::milliseconds(static_cast<int64_t>(f.run_timeout * 1000));
  return p;
}

namespace {

void printEffort(const OptimizeFlags& f) {
  std::fprintf(stderr, "effort %s: budget %g s, stall rounds %d, %s strategy%s\n", f.effort.c_str(), f.budget,
               f.stall_rounds, f.strategy.c_str(),
               f.effort == "quick" ? ", no passes, warm start from the results database"
                                   : ", wider spaces, every pass");
}

}  // namespace

int runOptimize(const OptimizeFlags& given_flags, const GlobalOptions& global) {
  const auto started = std::chrono::steady_clock::now();
  OptimizeFlags f = given_flags;
  checkOptimizeFlags(f, global);
  std::unique_ptr<PreparedRun> p = prepareRun(f, global, f.task, f.out, started);
  const Task& task = p->task;
  const TunableSet& tunables = *p->tunables;
  const bool quiet = f.json && !f.progress;
  if (!quiet) printTunables(tunables);
  if (f.dry_run) return runDryRun(f, global, task, *p->sources, tunables, p->engine_settings, p->switched_off);
  const OptimizeOptions& options = p->options;

  if (!quiet && f.effort != "default") printEffort(f);
  auto progress = makeProgress(quiet, global.verbose, f.budget);
  OptimizeResult result = optimize(task, *p->sources, tunables, options, *progress);
  nlohmann::json result_json;
  auto dir = writeOptimizeOutputs(task, tunables, result, options, f.out, &result_json);
  if (!f.save_baseline.empty() && result.gpu) {
    saveBaselineEntry(f.save_baseline, baselineEntryFromResult(result_json, (dir / "result.json").string()));
    if (!f.json) std::fprintf(stderr, "baseline of %s saved to %s\n", task.name.c_str(), f.save_baseline.c_str());
  }
  if (f.json) {
    std::cout << result_json.dump(2) << std::endl;
  } else {
    std::fputs(optimizeSummary(task, tunables, result, dir).c_str(), f.summary_to_stderr ? stderr : stdout);
  }
  return result.gpu ? 0 : 3;
}

CommandRunner registerOptimize(CLI::App& app, const GlobalOptions& global);
const CommandRegistration kOptimizeRegistration("optimize", 50, &registerOptimize);

CommandRunner registerOptimize(CLI::App& app, const GlobalOptions& global) {
  auto flags = std::make_shared<OptimizeFlags>();
  CLI::App* sub = app.add_subcommand("optimize", "Search for a faster verified version of a task's kernel(s)");
  sub->add_option("task", flags->tasks,
                  "The task file (TOML); several, or folders of them (every *.toml directly inside), are "
                  "scheduled over the GPUs")
      ->required();
  sub->add_option("--budget", flags->budget, "Wall-clock budget in seconds (default 60; quick 20, full 300)");
  sub->add_option("--effort", flags->effort,
                  "quick (warm start from the results database, short budget, parameters only, early stop), "
                  "default, or full (wider spaces, every pass, no stop on rounds without a gain); flags given "
                  "explicitly override the preset");
  sub->add_option("--out", flags->out, "Output folder; results go to OUT/NAME/ (default tritonforge-out)");
  sub->add_flag("--json", flags->json, "Print only the result JSON on stdout");
  sub->add_flag("--progress", flags->progress,
                "With --json, still show the progress on stderr (for programs that read the JSON: the Python API)");
  sub->add_option("--strategy", flags->strategy,
                  "Search strategy: auto (default), bayes, local, random, exhaustive");
  sub->add_option("--seed", flags->seed, "Seed for every random choice (default 0)");
  sub->add_option("--jobs", flags->jobs, "Compile workers (default: every CPU core but one, the measurement worker's)");
  sub->add_option("--max-candidates", flags->max_candidates, "Stop after this many candidates");
  sub->add_option("--stall-rounds", flags->stall_rounds,
                  "Stop after this many rounds without a gain (default 3; 0: never)");
  sub->add_flag("--no-widen", flags->no_widen,
                "Stop when every configuration of the space was measured, instead of widening its domains "
                "(tiles, warps, stages, groups: --effort full's) while the budget has time left");
  sub->add_option("--batch", flags->batch, "Candidates per round (default: the number of compile workers, 8 at least)");
  sub->add_option("--timing-ms", flags->timing_ms, "Timing budget per case and candidate in ms (default 250)");
  sub->add_option("--only", flags->only,
                  "Search only these values of a parameter: PARAM=V1,V2,... (repeatable)")
      ->allow_extra_args(false)
      ->take_all();
  sub->add_option("--db", flags->db, "Results database (default: the per-user cache, results.sqlite)");
  sub->add_flag("--no-db", flags->no_db, "Neither store nor reuse measurements");
  sub->add_flag("--fresh", flags->fresh, "Measure everything again (still store the results)");
  sub->add_option("--engine", flags->engine,
                  "Reasoning engine: rules (default), none, cmd:PROGRAM [ARGS], llm:MODEL");
  sub->add_option("--llm-endpoint", flags->llm_endpoint,
                  "llm engine: base URL of an OpenAI-compatible API (default $TRITONFORGE_LLM_ENDPOINT); the key "
                  "comes from $TRITONFORGE_LLM_API_KEY or $OPENAI_API_KEY");
  sub->add_option("--llm-max-requests", flags->llm_max_requests,
                  "llm engine: requests per run, retries and repairs included (default 8)");
  sub->add_option("--llm-timeout", flags->llm_timeout, "llm engine: seconds one request may take (default 60)");
  sub->add_flag("--dry-run", flags->dry_run,
                "Compile, diagnose from static and compiled facts, ask the engine once; measure nothing (no GPU "
                "needed)");
  sub->add_option("--no-pass", flags->no_pass,
                  "Switch off a transformation pass (repeatable; names may be comma separated)")
      ->allow_extra_args(false)
      ->take_all()
      ->delimiter(',');
  sub->add_flag("--no-passes", flags->no_passes, "Tune parameters only: apply no transformation pass");
  sub->add_flag("--no-diagnosis", flags->no_diagnosis, "Do not diagnose the kernel between rounds");
  sub->add_option("--within-roofline", flags->within_roofline,
                  "Stop once the best is within this % of the roofline (when one is known)");
  sub->add_option("--save-baseline", flags->save_baseline,
                  "Record the best per case (time, noise, configuration, toolchain) in this baseline file for "
                  "`tritonforge check` (other tasks' entries are kept)");
  sub->add_flag("--keep-work", flags->keep_work, "Keep the folder of candidate sources");
  sub->add_option("--compile-timeout", flags->compile_timeout, "Seconds one candidate may take to compile");
  sub->add_option("--run-timeout", flags->run_timeout, "Seconds one measurement may take");
  sub->add_option("--gpus", flags->gpus,
                  "Measure on several GPUs: all, N (the first N) or a list (0,2); one measurement worker per GPU. "
                  "Default: one GPU, as before (docs/gpus.md)");
  sub->add_option("--ray", flags->ray,
                  "Run the measurement workers as Ray actors (one GPU each) of the cluster at ADDRESS "
                  "(host:port, or auto); needs `pip install ray` (docs/gpus.md)");
  return [flags, sub, &global] {
    for (const char* name : {"--budget", "--stall-rounds", "--timing-ms", "--strategy", "--no-passes"}) {
      if (sub->count(name) > 0) flags->given.insert(name);
    }
    namespace fs = std::filesystem;
    std::error_code ec;
    if (flags->tasks.size() == 1 && !fs::is_directory(flags->tasks[0], ec) && flags->gpus.empty() &&
        flags->ray.empty()) {
      flags->task = flags->tasks[0];
      return runOptimize(*flags, global);
    }
    return runOptimizeMany(*flags, global);
  };
}

}  // namespace tf

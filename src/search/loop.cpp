// optimize() (optimizer.h): the run and its rounds. Map:
//   optimize        the worker, the database, the baseline, the search, the confirmation
//   searchBases     rounds: engine -> pass trials -> proposals -> evaluateBatch -> endRound,
//                   until a stop condition holds or the space is exhausted
//   autotuneSeeds   the kernel's own @triton.autotune configurations, tried first
#include <fmt/format.h>

#include <thread>

#include "search/baseline.h"
#include "search/batch_evaluation.h"
#include "search/confirmation.h"
#include "search/engine_round.h"
#include "search/measure_callbacks.h"
#include "search/pass_trials.h"
#include "search/run_state.h"
#include "search/stored_measurements.h"
#include "store/measure_env.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/temp_dir.h"

namespace tf {

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

namespace {

int defaultCompileWorkers() {
  unsigned hw = std::thread::hardware_concurrency();
  int n = hw > 2 ? static_cast<int>(hw) - 2 : 1;
  return std::clamp(n, 1, 14);
}

nlohmann::json regionJson(const Region& r) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, vs] : r) {
    nlohmann::json a = nlohmann::json::array();
    for (int64_t v : vs) a.push_back(v == kKeep ? nlohmann::json("as-written") : nlohmann::json(v));
    j[k] = a;
  }
  return j;
}

// The kernel's own @triton.autotune configurations: what its author would try first.
std::vector<Config> autotuneSeeds(const RunContext& ctx, const Space& space) {
  std::vector<Config> seeds;
  for (const auto& k : ctx.sources.ir.kernels) {
    if (!k.autotune || !k.autotune->configs_understood) continue;
    for (const auto& cfg : k.autotune->configs_list) {
      Config c = space.baseline();
      for (const auto& t : ctx.tunables.items) {
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

void searchBases(const RunContext& ctx, RunState& state) {
  startBase(ctx, state, 0, state.hints);
  const OptimizeOptions& o = ctx.options;
  int workers = std::max(1, ctx.evaluator.compileWorkers());
  int batch = o.batch > 0 ? o.batch : std::max(8, workers);
  std::vector<Config> seeds = autotuneSeeds(ctx, *state.search.space);
  StopSettings settings;
  settings.budget = state.budget;
  settings.max_candidates = o.max_candidates;
  settings.stall_rounds = o.stall_rounds;
  settings.target_objective = state.target_objective;
  if (o.within_roofline_pct) settings.target_reason = fmt::format("within {}% of the roofline", *o.within_roofline_pct);
  StopConditions stop = makeStopConditions(settings);
  ctx.progress.status(fmt::format("searching {:.0f} configurations ({} strategy: {}; {} compile workers; engine {})",
                                  state.search.space->size(), state.result.strategy, state.result.strategy_reason,
                                  ctx.evaluator.compileWorkers(), ctx.engine.name()));
  while (true) {
    SearchProgress p;
    p.elapsed_s = ctx.clock.elapsed();
    p.evaluated = state.result.evaluated;
    p.stalled_rounds = state.search.tuner->stalledRounds();
    if (state.best()) p.best_objective = state.bestObjective();
    if (std::string why = stop.check(p); !why.empty()) {
      state.result.stop_reason = why;
      break;
    }
    EngineRound round = engineRound(ctx, state);
    bool switched = false;
    for (const auto& pass : round.passes) {
      if (tryPass(ctx, state, pass)) {
        switched = true;
        break;
      }
    }
    if (switched) {
      seeds.clear();
      continue;  // a pass won: search the new base from the next round
    }
    int n = batch;
    if (o.max_candidates) n = std::min(n, o.max_candidates - state.result.evaluated);
    std::vector<Proposed> proposals;
    for (auto& s : seeds) {
      if (static_cast<int>(proposals.size()) >= n) break;
      proposals.push_back({s, fmt::format("autotune config {}", proposals.size() + 1), ""});
    }
    seeds.clear();
    int left = n - static_cast<int>(proposals.size());
    if (left > 0) {
      for (auto& tp : state.search.tuner->nextRound(left, round.regions)) {
        proposals.push_back({tp.config, tp.origin, tp.proposal_id});
      }
    }
    if (proposals.empty()) {
      state.result.stop_reason = "space exhausted";
      break;
    }
    ++state.result.rounds;
    ++state.search.rounds;
    double best_before = state.bestObjective();
    evaluateBatch(ctx, state, proposals);
    state.search.tuner->endRound(state.baselineNoise());
    if (state.bestObjective() < best_before) diagnoseCandidate(ctx, state, *state.best());
  }
}

nlohmann::json runSummary(const RunState& state, double elapsed) {
  const OptimizeResult& r = state.result;
  nlohmann::json summary = {{"speedup", r.speedup},     {"stop_reason", r.stop_reason}, {"evaluated", r.evaluated},
                            {"measured", r.measured},   {"reused", r.reused},           {"rounds", r.rounds},
                            {"strategy", r.strategy},   {"elapsed_s", elapsed}};
  if (r.best >= 0) {
    const auto& b = r.candidates[static_cast<size_t>(r.best)];
    summary["best"] = {{"id", b.id}, {"config", configJson(b.config)}, {"config_text", b.config_text},
                       {"base", b.base}, {"source_hash", b.source_hash}};
  }
  return summary;
}

}  // namespace

OptimizeResult optimize(const Task& task, const TaskSources& sources, const TunableSet& tunables,
                        const OptimizeOptions& options, OptimizeProgress& progress) {
  RunClock clock(options.started ? *options.started : RunClock::Clock::now());
  // A private folder for the run's variants, removed at the end (and on SIGINT / SIGTERM).
  TempDir work("tritonforge-optimize-");
  if (options.keep_work) work.keep();
  std::shared_ptr<ReasoningEngine> engine =
      options.engine_impl ? options.engine_impl : std::shared_ptr<ReasoningEngine>(makeEngine(options.engine));
  Evaluator evaluator(task, options.evaluator, work.path());
  // Until the baseline says how long the confirmation needs, nothing runs past the budget.
  evaluator.setDeadlines(clock.at(options.budget_s), clock.at(options.budget_s));
  Trace trace;
  MeasureCallbacks callbacks;
  RunState state;
  state.search_timing.budget_ms = options.timing_budget_ms;
  OptimizeResult& result = state.result;
  result.engine = engine->name();
  result.budget_s = options.budget_s;
  progress.status("starting the worker");
  result.environment = evaluator.start();
  result.gpu = evaluator.hasGpu();
  if (!result.gpu) {
    result.no_gpu_reason = evaluator.noGpuReason();
    result.compile_checks = compileChecks(task, sources, tunables, evaluator.mainWorker());
    result.best_source = sources.source.source.text();
    result.stop_reason = "no GPU";
    result.elapsed_s = clock.elapsed();
    return std::move(state.result);
  }

  if (options.keep_work) result.notes.push_back("the candidates' sources are kept in " + work.path().string());
  // Everything a stored timing depends on: only rows measured alike are reused.
  MeasureEnv env = measureEnvOf(result.environment, state.search_timing.toJson());
  std::string task_hash = taskHash(task, sources);
  nlohmann::json opts = {{"budget_s", options.budget_s},         {"strategy", options.strategy},
                         {"engine", engine->name()},              {"stall_rounds", options.stall_rounds},
                         {"max_candidates", options.max_candidates}, {"timing_budget_ms", options.timing_budget_ms},
                         {"batch", options.batch},                {"only", regionJson(options.only)},
                         {"reuse", options.reuse}};
  std::unique_ptr<StoredMeasurements> stored;
  if (!options.db_path.empty()) {
    stored = StoredMeasurements::open(options.db_path, task, task_hash, env, options.reuse, &result.notes);
  }
  if (stored) {
    result.db_path = stored->path().string();
    RunInfo info;
    info.task_name = task.name;
    info.task_path = task.path.string();
    info.source_hash = hashHex(sources.source.source.text());
    info.strategy = options.strategy;
    info.seed = options.seed;
    info.options = opts;
    result.resumed_from = stored->beginRun(info, &result.run_id);
    stored->attachTrace(trace);
  }
  trace.add("run", {{"task", task.name},
                    {"task_hash", task_hash},
                    {"strategy", options.strategy},
                    {"seed", options.seed},
                    {"engine", engine->name()},
                    {"budget_s", options.budget_s},
                    {"options", opts},
                    {"environment", {{"gpu", env.gpu}, {"driver", env.driver}, {"triton", env.triton},
                                     {"torch", env.torch}, {"cuda", env.cuda}, {"tool_version", env.tool_version},
                                     {"worker_protocol", env.worker_protocol}, {"timing", env.timing}}},
                    {"database", result.db_path},
                    {"run_id", result.run_id},
                    {"resumed_from", result.resumed_from ? nlohmann::json(*result.resumed_from) : nullptr}});

  RunContext ctx{task, sources, tunables, options, progress, evaluator, *engine, trace, stored.get(), callbacks, clock};
  if (stored) callbacks.add(databaseCallback(*stored, state));
  callbacks.add(traceCallback(ctx));
  callbacks.add(strategyCallback());
  callbacks.add(progressCallback(ctx));

  int want = options.compile_workers > 0 ? options.compile_workers : defaultCompileWorkers();
  // Compile workers start (import torch and Triton) while the baseline is measured.
  std::thread pool_starter;
  if (!tunables.active().empty()) pool_starter = std::thread([&evaluator, want] { evaluator.startCompilePool(want); });
  progress.status("measuring the kernel as written");
  try {
    measureBaseline(ctx, state);
  } catch (...) {
    if (pool_starter.joinable()) pool_starter.join();
    if (stored) stored->finishRun("failed", runSummary(state, clock.elapsed()));
    throw;
  }
  if (pool_starter.joinable()) pool_starter.join();
  // Nothing compiled after the search's end could be measured; measurements may run to the
  // end of the budget (the confirmation's).
  evaluator.setDeadlines(clock.at(state.budget.searchEnd()), clock.at(state.budget.budget_s));
  if (!tunables.active().empty()) searchBases(ctx, state);
  else result.stop_reason = "nothing to tune";
  trace.add("stop", {{"reason", result.stop_reason}, {"rounds", result.rounds}, {"evaluated", result.evaluated},
                     {"measured", result.measured}, {"reused", result.reused}, {"elapsed_s", clock.elapsed()}});
  confirm(ctx, state);
  result.elapsed_s = clock.elapsed();
  if (stored) stored->finishRun("done", runSummary(state, result.elapsed_s));
  result.trace = trace.toJson();
  progress.finish();
  return std::move(state.result);
}

}  // namespace tf

// optimize() (optimizer.h): the run and its rounds. Map:
//   optimize        the worker, the database, the baseline, the search, the confirmation
//   searchBases     rounds: engine -> pass trials and the strategy's proposals (ordered by
//                   predicted compile time) -> evaluateBatch -> what the round teaches
//                   (compile times, structural failures) -> a winning pass's new base,
//                   until a stop condition holds or the space is exhausted
//   autotuneSeeds   a warm start (options.start_configs, then the best configurations of earlier
//                   runs in the results database with --effort quick), then the kernel's own
//                   @triton.autotune configurations, tried first
//   warmStartRound  round 1: the warm start on the measurement worker, before the pool is awaited
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <thread>

#include "search/baseline.h"
#include "search/batch_evaluation.h"
#include "search/confirmation.h"
#include "search/engine_round.h"
#include "search/measure_callbacks.h"
#include "search/pass_trials.h"
#include "search/per_shape.h"
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
  // Backward measures other kernels and other outputs: another task (forward keeps its hash).
  if (task.direction != "forward") h = fnv1a64(std::string(1, '\0') + task.direction, h);
  return fmt::format("{:016x}", h);
}

namespace {

// Every core but the one the measurement worker needs (compiles are CPU-bound and slow: a
// 16-core GPU machine gets 15 workers).
int defaultCompileWorkers() {
  unsigned hw = std::thread::hardware_concurrency();
  int n = hw > 1 ? static_cast<int>(hw) - 1 : 1;
  return std::clamp(n, 1, 64);
}

// In how many shares the kernel as written's own @triton.autotune list is compiled before its
// baseline, one compile worker each (Evaluator::warmCasesAhead); 1: the measurement worker
// compiles it as the launcher runs. A list of 4 or more pays for waiting on the pool's start
// (on the H200 the as-written lists of an int8 GEMM took 30 s of a 56 s run, compiled one
// after the other); a list computed at run time is taken to be long.
int autotuneShares(const ModuleIR& ir, int workers) {
  constexpr size_t kShareFrom = 4, kUnreadList = 16;
  size_t longest = 0;
  for (const auto& k : ir.kernels) {
    if (!k.autotune) continue;
    longest = std::max(longest, k.autotune->configs_understood ? k.autotune->configs_list.size() : kUnreadList);
  }
  if (longest < kShareFrom || workers < 2) return 1;
  return static_cast<int>(std::min<size_t>(longest, static_cast<size_t>(workers)));
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
std::vector<std::pair<Config, std::string>> autotuneSeeds(const RunContext& ctx, const RunState& state,
                                                          const Space& space) {
  std::vector<std::pair<Config, std::string>> seeds;
  // A warm start first: each given configuration over the kernel as written.
  for (const Config& start : ctx.options.start_configs) {
    Config c = space.baseline();
    for (const auto& t : ctx.tunables.items) {
      auto it = start.find(t.id);
      if (t.tunable && it != start.end()) c[t.id] = it->second;
    }
    seeds.emplace_back(c, "warm start");
  }
  // Then what earlier runs in the results database found best (`--effort quick`).
  for (const auto& [start, origin] : state.db_warm_starts) {
    Config c = space.baseline();
    for (const auto& [id, v] : start) {
      if (c.count(id)) c[id] = v;
    }
    if (space.valid(c)) seeds.emplace_back(c, origin);
  }
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
      seeds.emplace_back(c, "");
    }
  }
  return seeds;
}

// Learns from the round's failures (successes first: a dimension a verified candidate
// changed is never frozen), narrows the space of the dimensions it freezes, and returns the
// probes the next round measures (the kernel as written with one suspect dimension changed).
std::vector<Proposed> learnFromFailures(const RunContext& ctx, RunState& state, size_t first) {
  const Config baseline = state.search.full->baseline();
  Region freeze;
  std::vector<Proposed> probes;
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = first; i < state.result.candidates.size(); ++i) {
      const CandidateRecord& c = state.result.candidates[i];
      if (c.kind != CandidateKind::kSearch || (c.status == CandidateStatus::kOk) != (pass == 0)) continue;
      FailurePatterns::Learned learned = state.failures.observe(c, baseline);
      for (const auto& pr : learned.probes) {
        // The first failing value that is valid with everything else as written.
        for (int64_t v : pr.values) {
          Config probe = baseline;
          probe[pr.tunable] = v;
          if (!state.search.space->valid(probe)) continue;
          probes.push_back({probe, fmt::format("probe {}", pr.tunable), ""});
          ctx.trace.add("freeze-probe", {{"base", state.current_base}, {"dimension", pr.tunable}, {"value", v},
                                         {"signature", pr.signature}});
          break;
        }
      }
      for (const auto& f : learned.freezes) {
        nlohmann::json dims = nlohmann::json::object();
        for (const auto& id : f.tunables) {
          int64_t v = baseline.count(id) ? baseline.at(id) : kKeep;
          freeze[id] = {v};
          dims[id] = v == kKeep ? nlohmann::json("as-written") : nlohmann::json(v);
        }
        ctx.trace.add("freeze", {{"base", state.current_base}, {"dimensions", dims}, {"signature", f.signature},
                                 {"candidates", f.candidates},
                                 {"reason", "these values fail with the same error whenever they change"}});
      }
    }
  }
  if (!freeze.empty()) {
    for (const auto& [id, vals] : freeze) state.search.frozen[id] = vals;
    auto narrowed = std::make_unique<Space>(state.search.space->restricted(freeze));
    state.search.tuner->setSpace(*narrowed);
    state.search.space = std::move(narrowed);
  }
  return probes;
}

// Orders a round by predicted compile time (fast first, so that measurements start early)
// and puts off what the budget says would not compile before the search ends.
// Returns how many were deferred.
size_t orderByCompileTime(const RunContext& ctx, RunState& state, std::vector<Proposed>* proposals) {
  const CompileTimeModel& model = state.compile_model;
  if (model.observations() < CompileTimeModel::kMinObservations) return 0;
  const Space& space = *state.search.space;
  const double left = state.budget.searchLeft();
  std::vector<std::pair<double, Proposed>> scored;
  nlohmann::json deferred = nlohmann::json::array();
  for (auto& p : *proposals) {
    double t = model.predict(space.features(p.config)).value_or(0);
    if (!state.budget.mayStart(BudgetStage::kCompile, t) && proposals->size() > 1) {
      deferred.push_back({{"config", configJson(p.config)}, {"predicted_s", t}});
      continue;
    }
    scored.emplace_back(t, std::move(p));
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  proposals->clear();
  for (auto& [t, p] : scored) proposals->push_back(std::move(p));
  if (!deferred.empty()) {
    ctx.trace.add("compile-deferred", {{"round", state.result.rounds + 1}, {"left_s", left}, {"configurations", deferred}});
  }
  return deferred.size();
}

// Compile times of the round's candidates teach the model and set the adaptive limit.
void learnCompileTimes(const RunContext& ctx, RunState& state, size_t first) {
  for (size_t i = first; i < state.result.candidates.size(); ++i) {
    const CandidateRecord& c = state.result.candidates[i];
    if (c.kind != CandidateKind::kSearch || c.reused || c.compile.seconds <= 0) continue;
    if (c.compile.status != CandidateStatus::kOk && c.compile.status != CandidateStatus::kOutOfResources &&
        c.compile.status != CandidateStatus::kCompileError) {
      continue;
    }
    state.compile_model.observe(state.search.space->features(c.config), c.compile.seconds);
  }
  if (auto m = state.compile_model.median(); m && state.compile_model.observations() >= 3) {
    ctx.evaluator.setCompileLimit(std::chrono::milliseconds(static_cast<int64_t>(1000 * std::max(10.0, 3 * *m))));
  }
}

// The warm start (--retune's recorded best, --effort quick's configurations of earlier runs in
// the results database, or quick's first choice without them): measured first, on the
// measurement worker, while the compile pool is still starting (on the H200 fifteen workers
// were ready 5-9 s into a run, the baseline 3-5 s). A configuration the database measured
// alike is taken from it at once. Counted as round 1.
void warmStartRound(const RunContext& ctx, RunState& state, std::vector<std::pair<Config, std::string>>* seeds) {
  // Two at most: each compiles in turn here, where the pool would compile the rest together.
  constexpr size_t kMostOnTheWorker = 2;
  std::vector<Proposed> warm;
  size_t n = 0;
  while (n < seeds->size() && n < kMostOnTheWorker && !(*seeds)[n].second.empty()) {
    warm.push_back({(*seeds)[n].first, (*seeds)[n].second, ""});
    ++n;
  }
  if (warm.empty()) return;
  seeds->erase(seeds->begin(), seeds->begin() + static_cast<std::ptrdiff_t>(n));
  ctx.progress.status(fmt::format("measuring the warm start ({} configurations)", warm.size()));
  ++state.result.rounds;
  ++state.search.rounds;
  size_t first = state.result.candidates.size();
  evaluateBatch(ctx, state, warm, {}, /*on_measurement_worker=*/true);
  state.search.tuner->endRound(state.baselineNoise());
  learnCompileTimes(ctx, state, first);
}

void applyDeadlines(Evaluator& evaluator, const Budget& budget, const RunClock& clock);

void searchBases(const RunContext& ctx, RunState& state, const std::function<void()>& await_pool) {
  startBase(ctx, state, 0, state.hints);
  const OptimizeOptions& o = ctx.options;
  std::vector<std::pair<Config, std::string>> seeds = autotuneSeeds(ctx, state, *state.search.space);
  if (o.warm_start_from_db && (seeds.empty() || seeds.front().second.empty())) {
    // --effort quick with nothing to start from: the strategy's first choice is measured on
    // the measurement worker all the same. On a fresh H200 machine the pool's first round of
    // a cold attention kernel compiled past the search's end of a 20 s budget, and nothing
    // was measured at all.
    for (auto& tp : state.search.tuner->nextRound(1, {})) {
      seeds.insert(seeds.begin(), {tp.config, "first choice (" + tp.origin + ")"});
    }
  }
  warmStartRound(ctx, state, &seeds);
  prepareDiagnosis(ctx, state);
  await_pool();
  int workers = std::max(1, ctx.evaluator.compileWorkers());
  // Several lanes measure a round together: enough candidates to keep each busy.
  int batch = o.batch > 0 ? o.batch : std::max({8, workers, 4 * ctx.evaluator.lanes()});
  std::vector<Proposed> probes;
  StopSettings settings;
  settings.budget = state.budget.plan();
  settings.max_candidates = o.max_candidates;
  settings.stall_rounds = o.stall_rounds;
  settings.target_objective = state.target_objective;
  if (o.within_roofline_pct) settings.target_reason = fmt::format("within {}% of the roofline", *o.within_roofline_pct);
  StopConditions stop = makeStopConditions(settings);
  ctx.progress.status(fmt::format("searching {:.0f} configurations ({} strategy: {}; {} compile workers; engine {})",
                                  state.search.space->size(), state.result.strategy, state.result.strategy_reason,
                                  ctx.evaluator.compileWorkers(), ctx.engine.name()));
  while (true) {
    // Time for a per-shape dispatch, once the measurements make one worth it: the search ends
    // that much earlier (and its compiles and measurements with it).
    compileDispatchAhead(ctx, state);
    if (double keep = dispatchKeepBack(state); keep != state.budget.keptBack()) {
      ctx.trace.add("keep-back", {{"for", "per-shape dispatch"}, {"seconds", keep}, {"elapsed_s", state.budget.elapsed()}});
      state.budget.keepBack(keep);
      applyDeadlines(ctx.evaluator, state.budget, ctx.clock);
    }
    // The round is judged on the progress it starts with, and on what it finds (below).
    SearchProgress p;
    p.keep_back_s = state.budget.keptBack();
    p.elapsed_s = state.budget.elapsed();
    p.evaluated = state.result.evaluated;
    p.stalled_rounds = state.search.tuner->stalledRounds();
    if (state.best()) p.best_objective = state.bestObjective();
    if (std::string why = stop.check(p); !why.empty()) {
      state.result.stop_reason = why;
      break;
    }
    EngineRound round = engineRound(ctx, state);
    std::vector<Prepared> prepared;
    // A kernel as written that is slow to compile: the first round's passes go on its first
    // configuration, chosen below (lateAnchorReason).
    const std::string late_anchor = round.passes.empty() ? "" : lateAnchorReason(state);
    std::vector<PassTrial> trials;
    if (late_anchor.empty()) trials = preparePassTrials(ctx, state, round.passes, &prepared);
    int n = batch;
    if (o.max_candidates) {
      n = std::min(n, o.max_candidates - state.result.evaluated - static_cast<int>(prepared.size()));
    }
    std::vector<Proposed> proposals = std::move(probes);
    probes.clear();
    for (auto& [s, origin] : seeds) {
      if (static_cast<int>(proposals.size()) >= n) break;
      proposals.push_back({s, origin.empty() ? fmt::format("autotune config {}", proposals.size() + 1) : origin, ""});
    }
    seeds.clear();
    int left = n - static_cast<int>(proposals.size());
    if (left > 0) {
      for (auto& tp : state.search.tuner->nextRound(left, round.regions)) {
        proposals.push_back({tp.config, tp.origin, tp.proposal_id});
      }
    }
    std::optional<Config> anchored;
    if (!late_anchor.empty()) {
      // The round's first configuration the space admits (an invalid one is pruned, unmeasured).
      auto valid = std::find_if(proposals.begin(), proposals.end(),
                                [&](const Proposed& p) { return state.search.space->valid(p.config); });
      if (valid != proposals.end()) {
        valid->anchor = true;
        anchored = valid->config;
        ctx.trace.add("pass-anchor", {{"round", state.result.rounds + 1}, {"reason", late_anchor},
                                      {"config", configJson(valid->config)}});
      }
      trials = preparePassTrials(ctx, state, round.passes, &prepared, anchored ? &*anchored : nullptr);
    }
    if (proposals.empty() && prepared.empty() && left > 0) {
      // Every configuration was measured with time left: the wider space's first round, else
      // every pass the engine did not propose on this base.
      if (widenSpace(ctx, state)) {
        for (auto& tp : state.search.tuner->nextRound(left, round.regions)) {
          proposals.push_back({tp.config, tp.origin, tp.proposal_id});
        }
      } else if (proposeEveryPass(ctx, state)) {
        round = engineRound(ctx, state);
        trials = preparePassTrials(ctx, state, round.passes, &prepared);
      }
    }
    p.deferred = orderByCompileTime(ctx, state, &proposals);
    p.nothing_to_run = proposals.empty() && prepared.empty();
    if (std::string why = stop.check(p); !why.empty()) {
      state.result.stop_reason = why;
      break;
    }
    ++state.result.rounds;
    ++state.search.rounds;
    double best_before = state.bestObjective();
    size_t first = state.result.candidates.size();
    std::vector<int> ids = evaluateBatch(ctx, state, proposals, std::move(prepared));
    size_t k = 0;
    int anchor_id = -1;  // the anchor's candidate (orderByCompileTime may have moved it)
    for (size_t i = first; anchored && i < state.result.candidates.size(); ++i) {
      const CandidateRecord& c = state.result.candidates[i];
      if (c.kind == CandidateKind::kSearch && c.config == *anchored) {
        anchor_id = c.id;
        break;
      }
    }
    for (auto& t : trials) {
      for (size_t i = 0; i < t.params.size() && k < ids.size(); ++i) t.candidates.push_back(ids[k++]);
      t.anchor_candidate = anchor_id;
    }
    if (!proposals.empty()) state.search.tuner->endRound(state.baselineNoise());
    bool any_ended = false;
    for (size_t i = first; i < state.result.candidates.size(); ++i) {
      any_ended = any_ended || state.result.candidates[i].status != CandidateStatus::kNotRun;
    }
    p.stopped_by_budget = !any_ended && state.result.candidates.size() > first;
    if (std::string why = stop.check(p); !why.empty()) {
      state.result.stop_reason = why;
      break;
    }
    learnCompileTimes(ctx, state, first);
    probes = learnFromFailures(ctx, state, first);
    if (concludePassTrials(ctx, state, trials, best_before)) {
      seeds.clear();
      probes.clear();
      state.failures.newBase();
      continue;  // a pass won: search the new base from the next round
    }
    if (state.bestObjective() < best_before) diagnoseCandidate(ctx, state, *state.best());
  }
  // Few candidates measured under the budget: say why.
  if (state.result.stop_reason.rfind("budget", 0) == 0 && state.result.measured < 10) {
    const auto& m = state.compile_model;
    std::string compiles = m.median() ? fmt::format("compiles took {:.1f} s at the median ({:.1f} s at most)",
                                                    *m.median(), m.max().value_or(0))
                                      : std::string("no compile finished");
    state.result.notes.push_back(fmt::format(
        "only {} candidates were measured in the budget ({:.0f} s, of which the kernel as written took {:.1f} s to "
        "compile and measure): {} on {} compile workers, and a case's measurement {:.1f} s; a larger --budget or "
        "--jobs measures more",
        state.result.measured, state.budget.total(), state.baseline_seconds, compiles,
        ctx.evaluator.compileWorkers(), expectedMeasureSeconds(state, 1)));
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

// The evaluator's deadlines, as the budget sets them: no compile past the compile stage's, no
// measurement past the measurement's.
void applyDeadlines(Evaluator& evaluator, const Budget& budget, const RunClock& clock) {
  evaluator.setDeadlines(clock.at(budget.deadline(BudgetStage::kCompile)),
                         clock.at(budget.deadline(BudgetStage::kMeasure)));
}

}  // namespace

OptimizeResult optimize(const Task& task, const TaskSources& sources, const TunableSet& tunables,
                        const OptimizeOptions& options, OptimizeProgress& progress) {
  RunClock clock(options.started ? *options.started : RunClock::Clock::now());
  // A private folder for the run's variants, removed at the end (and on SIGINT / SIGTERM).
  TempDir work("tritonforge-optimize-");
  if (options.keep_work) work.keep();
  std::shared_ptr<ReasoningEngine> engine =
      options.engine_impl ? options.engine_impl : std::shared_ptr<ReasoningEngine>(makeEngine(options.engine, options.engine_settings));
  Evaluator evaluator(task, options.evaluator, work.path());
  RunState state;
  // Until the baseline says how long the confirmation needs, nothing is kept back: nothing
  // runs past the budget's end.
  state.budget = Budget(options.loopBudget(), clock);
  applyDeadlines(evaluator, state.budget, clock);
  Trace trace;
  MeasureCallbacks callbacks;
  state.search_timing.budget_ms = options.timing_budget_ms;
  OptimizeResult& result = state.result;
  result.engine = engine->name();
  result.budget_s = options.budget_s;
  // Compile workers start (import torch and Triton) while the measurement worker starts and
  // the baseline is measured; they also import what the kernel as written imports (a real
  // project's package can take seconds), so that the first compiles do not pay it. Measured
  // on the H200 (quick preset, suite GEMMs): started after the measurement worker, fifteen of
  // them were ready 5.4 s later, the first round's critical path.
  std::thread pool_starter;
  struct JoinOnExit {
    std::thread& t;
    ~JoinOnExit() {
      if (t.joinable()) t.join();
    }
  } join_pool{pool_starter};
  int want = options.compile_workers > 0 ? options.compile_workers : defaultCompileWorkers();
  // With nothing to tune, the passes may still rewrite the kernel or its launch.
  const bool searchable = !tunables.active().empty() || options.passes != nullptr;
  // When the pool was up and when the cases ahead were queued (seconds of the run), for the
  // trace: the start-up's critical path on short runs (--effort quick).
  double pool_ready_s = -1, pool_queued_s = -1;
  int pool_workers = 0;
  const int shares = searchable && !evaluator.sharedPool() ? autotuneShares(sources.ir, want) : 1;
  if (searchable) {
    Variant as_written = evaluator.materialize(sources.source.source.text());
    pool_starter = std::thread([&evaluator, &clock, &pool_ready_s, &pool_queued_s, &pool_workers, want, shares,
                                as_written] {
      pool_workers = evaluator.startCompilePool(want, as_written);
      pool_ready_s = clock.elapsed();
      evaluator.warmCasesAhead(as_written, std::min(shares, std::max(pool_workers, 1)));
      pool_queued_s = clock.elapsed();
    });
  }
  // The pool's start joined once, with its trace event.
  bool pool_joined = false;
  auto join_pool_starter = [&] {
    if (pool_joined) return;
    pool_joined = true;
    if (pool_starter.joinable()) {
      pool_starter.join();
      trace.add("compile-pool", {{"workers", pool_workers}, {"ready_s", pool_ready_s},
                                 {"cases_queued_s", pool_queued_s}, {"autotune_shares", shares},
                                 {"joined_s", clock.elapsed()}});
    }
  };
  // A long autotune list: case 0 is measured once the pool has compiled its shares.
  std::function<void()> before_baseline;
  if (shares > 1) {
    before_baseline = [&] {
      join_pool_starter();
      double t0 = clock.elapsed();
      bool done = evaluator.awaitFirstCaseAhead(clock.at(state.budget.deadline(BudgetStage::kMeasure)));
      trace.add("autotune-shares", {{"shares", shares}, {"waited_s", clock.elapsed() - t0}, {"done", done}});
    };
  }
  progress.status("starting the worker");
  result.environment = evaluator.start();
  result.gpu = evaluator.hasGpu();
  if (!result.gpu) {
    result.no_gpu_reason = evaluator.noGpuReason();
    result.compile_checks = compileChecks(task, sources, tunables, evaluator.mainWorker());
    result.best_source = sources.source.source.text();
    result.stop_reason = "no GPU";
    result.engine_usage = engine->usage();
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
                         {"reuse", options.reuse},                {"effort", options.effort}};
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
                    {"effort", options.effort},
                    {"options", opts},
                    {"environment", {{"gpu", env.gpu}, {"driver", env.driver}, {"triton", env.triton},
                                     {"torch", env.torch}, {"cuda", env.cuda}, {"tool_version", env.tool_version},
                                     {"worker_protocol", env.worker_protocol}, {"timing", env.timing}}},
                    {"database", result.db_path},
                    {"run_id", result.run_id},
                    {"resumed_from", result.resumed_from ? nlohmann::json(*result.resumed_from) : nullptr}});

  RunContext ctx{task, sources, tunables, options, progress, evaluator, *engine, trace, stored.get(), callbacks, clock};
  if (options.warm_start_from_db) {
    std::vector<std::string> ids;
    for (const Tunable* t : tunables.active()) ids.push_back(t->id);
    if (stored) state.db_warm_starts = stored->warmStarts(ids, 4);
    nlohmann::json configs = nlohmann::json::array();
    for (const auto& [c, origin] : state.db_warm_starts) configs.push_back({{"config", configJson(c)}, {"origin", origin}});
    std::string why = !stored ? "no results database (--no-db)"
                              : configs.empty() ? "the results database holds no finished run of this task, nor of "
                                                  "another with the same tunable parameters, on this GPU that beat "
                                                  "its kernel as written"
                                                : "";
    ctx.trace.add("warm-start", {{"from", "results database"}, {"configurations", configs}, {"reason", why}});
    if (!why.empty()) result.notes.push_back("effort quick: no warm start from the results database: " + why);
  }
  if (stored) callbacks.add(databaseCallback(*stored, state));
  callbacks.add(traceCallback(ctx));
  callbacks.add(strategyCallback());
  callbacks.add(progressCallback(ctx));

  progress.status("measuring the kernel as written");
  try {
    measureBaseline(ctx, state, before_baseline);
  } catch (...) {
    if (stored) stored->finishRun("failed", runSummary(state, clock.elapsed()));
    throw;
  }
  state.baseline_seconds = clock.elapsed();
  // Now that the confirmation's reserve is kept back: compiles end with the search,
  // measurements may run to the end of the budget (the confirmation's). Set once the pool's
  // starter (which reads them) is done.
  auto await_pool = [&] {
    join_pool_starter();
    applyDeadlines(evaluator, state.budget, clock);
  };
  if (searchable) {
    searchBases(ctx, state, await_pool);
  } else {
    prepareDiagnosis(ctx, state);
    result.stop_reason = "nothing to tune";
  }
  await_pool();
  trace.add("stop", {{"reason", result.stop_reason}, {"rounds", result.rounds}, {"evaluated", result.evaluated},
                     {"measured", result.measured}, {"reused", result.reused}, {"elapsed_s", clock.elapsed()}});
  if (searchable) {
    // The time kept back from the search is the dispatch's.
    state.budget.keepBack(0);
    applyDeadlines(evaluator, state.budget, clock);
    perShapeDispatch(ctx, state);
  }
  // Compile workers still running after the search copy their inputs on the GPU beside the
  // confirmation's timings: the suspected cause of a confirmation that read 28% noise on the
  // H200 (liger's cross-entropy, 2 GB of logits, the search stopped before its deadline).
  evaluator.stopCompiles();
  confirm(ctx, state);
  if (evaluator.lanes() > 1) {
    result.lanes = nlohmann::json::array();
    for (int l = 0; l < evaluator.lanes(); ++l) {
      int measured = 0;
      for (const auto& c : result.candidates) measured += !c.reused && c.lane == l && !c.cases.empty() ? 1 : 0;
      const auto& hello = evaluator.laneHello(l);
      result.lanes.push_back({{"lane", l},
                              {"device", evaluator.laneDevice(l)},
                              {"gpu", hello.contains("gpu") && hello["gpu"].is_object() ? hello["gpu"].value("name", "")
                                                                                        : std::string()},
                              {"alive", evaluator.laneAlive(l)},
                              {"measured", measured}});
    }
  }
  for (const auto& note : evaluator.laneNotes()) result.notes.push_back(note);
  result.engine_usage = engine->usage();
  result.elapsed_s = clock.elapsed();
  if (stored) stored->finishRun("done", runSummary(state, result.elapsed_s));
  result.trace = trace.toJson();
  progress.finish();
  return std::move(state.result);
}

}  // namespace tf

#include "search/baseline.h"

#include <fmt/format.h>

#include <future>

#include "search/batch_evaluation.h"
#include "search/engine_round.h"
#include "search/loop_diagnosis.h"
#include "search/pass_trials.h"
#include "search/stored_measurements.h"
#include "util/error.h"
#include "util/hash.h"

namespace tf {
namespace {

// The GPU's ceilings (measured once per GPU and cached) and the least time of each case.
void prepareRoofline(const RunContext& ctx, RunState& state, const CandidateRecord& baseline) {
  if (ctx.options.roofline_ms || !ctx.options.builtin_roofline || !state.result.gpu) return;
  std::string why;
  auto left = std::chrono::milliseconds(static_cast<int64_t>(1000 * state.budget.left()));
  if (left.count() <= 0) return;
  state.ceilings = loadOrMeasureCeilings(ctx.evaluator.client(), state.result.environment["gpu"], false, &why,
                                         std::min(left, ctx.evaluator.client().timeouts().ceilings));
  if (!state.ceilings) {
    state.result.roofline_note = "the GPU's ceilings could not be measured: " + why;
    ctx.trace.add("roofline", {{"available", false}, {"reason", why}});
    return;
  }
  CaseMeasurement ins = ctx.evaluator.inspect(ctx.evaluator.materialize(state.bases[0]->text), 0);
  state.result.compute_class = ins.status == CandidateStatus::kOk ? computeClassOfKernels(ins) : "fp32";
  bool any = false;
  for (const auto& c : baseline.cases) {
    state.result.roofline_ms.push_back(rooflineTimeMs(c.work, *state.ceilings, state.result.compute_class));
    any = any || state.result.roofline_ms.back().has_value();
  }
  if (!any) state.result.roofline_note = "the harness defines neither flops(case) nor bytes(case)";
  nlohmann::json per_case = nlohmann::json::array();
  for (const auto& r : state.result.roofline_ms) per_case.push_back(r ? nlohmann::json(*r) : nlohmann::json(nullptr));
  ctx.trace.add("roofline", {{"available", any}, {"compute_class", state.result.compute_class}, {"case_ms", per_case},
                             {"ceilings", state.ceilings->toJson()}});
}

// With --within-roofline: the objective at which the search stops.
void prepareTarget(const RunContext& ctx, RunState& state) {
  if (!ctx.options.within_roofline_pct) return;
  std::vector<double> ratios;
  for (size_t i = 0; i < ctx.task.cases.size(); ++i) {
    std::optional<double> r;
    if (ctx.options.roofline_ms) r = ctx.options.roofline_ms(i);
    else if (i < state.result.roofline_ms.size()) r = state.result.roofline_ms[i];
    if (!r || *r <= 0) break;
    ratios.push_back(*r / state.baseline.times_ms[i]);
  }
  if (ratios.size() == ctx.task.cases.size()) {
    state.target_objective = geomean(ratios) * (1.0 + *ctx.options.within_roofline_pct / 100.0);
  } else {
    state.result.notes.push_back("no roofline is known for this task's cases: --within-roofline is not applied");
  }
}

// With several lanes: the kernel as written on every other lane too (in parallel), so that
// each lane's candidates are scored against a baseline measured on the same GPU. A lane on
// which it fails is dropped. These measurements are not stored: the database keeps lane 0's.
void measureLaneBaselines(const RunContext& ctx, RunState& state) {
  Evaluator& ev = ctx.evaluator;
  if (ev.lanes() <= 1) return;
  state.lane_baselines.assign(static_cast<size_t>(ev.lanes()), BaselineReference{});
  state.lane_baselines[0] = state.baseline;
  Variant v = ev.materialize(state.bases[0]->text);
  const size_t n = ctx.task.cases.size();
  std::vector<std::future<std::vector<CaseMeasurement>>> runs(static_cast<size_t>(ev.lanes()));
  for (int l = 1; l < ev.lanes(); ++l) {
    if (!ev.laneAlive(l)) continue;
    runs[static_cast<size_t>(l)] = std::async(std::launch::async, [&ev, v, n, l, timing = state.search_timing] {
      std::vector<CaseMeasurement> out;
      for (size_t i = 0; i < n; ++i) {
        out.push_back(ev.measure(v, i, timing, l));
        if (out.back().status != CandidateStatus::kOk) break;
      }
      return out;
    });
  }
  for (int l = 1; l < ev.lanes(); ++l) {
    auto& f = runs[static_cast<size_t>(l)];
    if (!f.valid()) continue;
    std::vector<CaseMeasurement> got = f.get();
    BaselineReference ref;
    std::string failed;
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i].status != CandidateStatus::kOk) {
        failed = fmt::format("case {}: {}", ctx.task.caseLabel(i), got[i].message);
        break;
      }
      ref.times_ms.push_back(got[i].timing->median_ms);
      ref.noise.push_back(got[i].timing->noise());
      ref.outputs.push_back(got[i].outputs);
      ref.labels.push_back(ctx.task.caseLabel(i));
    }
    if (failed.empty() && got.size() < n) failed = "not every case was measured";
    if (!failed.empty()) {
      ev.dropLane(l, "the kernel as written did not run on it: " + failed);
      continue;
    }
    ctx.trace.add("lane-baseline", {{"lane", l}, {"gpu", ev.laneDevice(l)}, {"time_ms", ref.times_ms}});
    state.lane_baselines[static_cast<size_t>(l)] = std::move(ref);
  }
}

}  // namespace

void measureBaseline(const RunContext& ctx, RunState& state, const std::function<void()>& before_measure) {
  auto base = std::make_unique<Base>();
  base->id = 0;
  base->origin = "as written";
  base->text = ctx.sources.source.source.text();
  base->hash = hashHex(base->text);
  base->ir = &ctx.sources.ir;
  base->tunables = &ctx.tunables;
  state.bases.push_back(std::move(base));
  state.result.bases.push_back("as written");
  // What this GPU allows (shared memory per block, SMs), where its worker reported it.
  GpuLimits limits = GpuLimits::fromHello(state.result.environment.contains("gpu") ? state.result.environment["gpu"]
                                                                                  : nlohmann::json());
  state.hints.smem_limit = limits.sharedPerBlock();
  state.hints.wide = ctx.options.wide_space;
  state.hints.sms = limits.sms;

  CandidateRecord rec;
  rec.id = 0;
  rec.kind = CandidateKind::kBaseline;
  rec.origin = "baseline";
  rec.config = Space(ctx.tunables, SpaceHints{}).baseline();
  rec.config_text = "as written";
  rec.source_hash = state.bases[0]->hash;
  bool reused = false;
  std::optional<StoredMeasurements::Known> known;
  if (ctx.stored) known = ctx.stored->lookup(rec.source_hash);
  if (known && known->complete && known->rec.status == CandidateStatus::kOk) {
    rec.cases = known->rec.cases;
    rec.status = CandidateStatus::kOk;
    rec.reused = true;
    rec.origin = "baseline, " + known->rec.origin;
    reused = true;
  } else {
    Variant v = ctx.evaluator.materialize(state.bases[0]->text);
    // Compiled on the measurement worker itself, as the launcher runs, while the pool starts;
    // a long autotune list is compiled by the pool in shares first (before_measure waits).
    if (before_measure) before_measure();
    CompileOutcome compiled;
    compiled.status = CandidateStatus::kOk;
    measureCandidate(ctx, state, rec, v, compiled);
  }
  if (!rec.cases.empty() && rec.cases.back().task_error) {
    throw UserError(fmt::format("{}: {}", ctx.task.path.string(), *rec.cases.back().task_error));
  }
  if (rec.status == CandidateStatus::kNotRun) {
    throw EnvironmentError(fmt::format("{}: the budget of {:.0f} s ran out before the kernel as written was measured "
                                       "(raise --budget)",
                                       ctx.task.source.string(), ctx.options.budget_s));
  }
  if (rec.status != CandidateStatus::kOk) {
    std::string what = rec.status == CandidateStatus::kWrongResult
                           ? "does not match the harness reference"
                           : std::string("fails (") + toString(rec.status) + ")";
    std::string detail;
    if (!rec.cases.empty() && !rec.cases.back().detail.empty()) detail = "\n" + rec.cases.back().detail;
    ctx.trace.add("baseline", {{"status", toString(rec.status)}, {"message", rec.message}});
    throw UserError(fmt::format("{}: the kernel as written {}: {}{}", ctx.task.source.string(), what, rec.message,
                                detail));
  }
  rec.objective = 1.0;
  nlohmann::json times = nlohmann::json::array();
  std::vector<double> walls;
  for (size_t i = 0; i < rec.cases.size(); ++i) {
    const auto& c = rec.cases[i];
    state.baseline.times_ms.push_back(c.timing->median_ms);
    state.baseline.noise.push_back(c.timing->noise());
    state.baseline.outputs.push_back(c.outputs);
    state.baseline.labels.push_back(ctx.task.caseLabel(i));
    times.push_back(c.timing->median_ms);
    walls.push_back(c.wall_seconds);
  }
  rec.compile.kernels = rec.cases.front().kernels;
  noteHints(rec, ctx.tunables, &state.hints);
  state.seen_sources[rec.source_hash] = 0;
  // A fresh process pays its start and the cases' inputs and references again.
  double setup = 0;
  for (const auto& c : rec.cases) setup += c.setup_seconds;
  state.budget.reserveForConfirmation(walls, ctx.options.confirm_timing_ms, ctx.evaluator.workerStartSeconds() + setup);
  state.result.reserve_s = state.budget.reserve();
  const CandidateRecord& added = recordCandidate(ctx, state, std::move(rec));
  ctx.trace.add("baseline", {{"time_ms", times}, {"reused", reused}, {"source_hash", added.source_hash},
                             {"noise", state.baselineNoise()}, {"reserve_s", state.budget.reserve()}});
  measureLaneBaselines(ctx, state);
}

void prepareDiagnosis(const RunContext& ctx, RunState& state) {
  prepareRoofline(ctx, state, state.result.candidates[0]);
  prepareTarget(ctx, state);
  diagnoseCandidate(ctx, state, state.result.candidates[0]);
  if (const CandidateRecord* best = state.best(); best && best->id != 0) diagnoseCandidate(ctx, state, *best);
}

}  // namespace tf

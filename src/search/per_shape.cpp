// The per-shape dispatch stage (per_shape.h).
#include "search/per_shape.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>

#include "search/batch_evaluation.h"
#include "search/scoring.h"
#include "task/case_label.h"
#include "task/source_parser.h"
#include "transform/dispatch_source.h"
#include "util/error.h"

namespace tf {
namespace {

constexpr const char* kDispatchOrigin = "per-shape dispatch";
// Extra shapes verified per routed bucket, at most.
constexpr size_t kShapesPerBucket = 2;
// The share of the budget a dispatch may take: beyond it, the search's own time is worth more.
constexpr double kMostOfBudget = 0.3;

bool timedOnEvery(const CandidateRecord& c, size_t n) {
  if (c.status != CandidateStatus::kOk || c.cases.size() != n) return false;
  return std::all_of(c.cases.begin(), c.cases.end(), [](const CaseMeasurement& m) { return m.timing && m.timing->median_ms > 0; });
}

std::string optionText(const RunState& state, int id) {
  if (id < 0) return "as written";
  const CandidateRecord& c = state.result.candidates[static_cast<size_t>(id)];
  return fmt::format("#{} ({})", c.id, c.config_text.empty() ? c.origin : c.config_text);
}

std::optional<int64_t> featureValue(const CaseMeasurement& m, const DispatchFeature& f) {
  CaseFeatures cf = caseFeatures(m.arguments);
  for (size_t i = 0; i < cf.features.size(); ++i) {
    if (cf.features[i] == f) return cf.values[i];
  }
  return std::nullopt;
}

// The dispatch's source: the module as written, each variant's module renamed after it, the
// launcher that picks (transform/dispatch_source.h); `refused` says why there is none.
MergedSource dispatchSource(const RunContext& ctx, const RunState& state, const DispatchOutlook& o) {
  // The variants' whole modules, parsed (their positions are those of the text with the
  // configuration applied).
  std::vector<ParsedSource> parsed;
  std::vector<std::string> notes;
  try {
    for (int opt : o.plan.options) {
      int id = o.option_ids[static_cast<size_t>(opt)];
      parsed.push_back(parseSource(ctx.evaluator.client(), ctx.task.source,
                                   state.recordText(state.result.candidates[static_cast<size_t>(id)])));
      notes.push_back(optionText(state, id));
    }
  } catch (const std::exception& e) {
    return {"", fmt::format("a variant did not parse: {}", e.what())};
  }
  DispatchSourceSpec spec;
  spec.launcher = ctx.task.launcher;
  spec.arg_index = o.plan.feature.index;
  spec.arg_name = o.plan.feature.name;
  spec.dim = o.plan.feature.dim;
  spec.variant_notes = notes;
  std::string gpu;
  if (const auto& env = state.result.environment; env.is_object() && env.contains("gpu") && env["gpu"].is_object()) {
    gpu = env["gpu"].value("name", "");
  }
  spec.header_note = fmt::format("Picked by tritonforge from measurements{}; each route verified on the cases it lists "
                                 "and on shapes near them.", gpu.empty() ? "" : " on " + gpu);
  for (const auto& b : o.plan.buckets) {
    if (b.option < 0) continue;
    DispatchRoute r;
    r.lo = b.lo;
    r.hi = b.hi;
    r.variant = static_cast<int>(std::find(o.plan.options.begin(), o.plan.options.end(), b.option) - o.plan.options.begin());
    std::string cases;
    for (size_t c : b.cases) cases += (cases.empty() ? "" : "; ") + ctx.task.caseLabel(c);
    r.note = "measured on " + cases;
    spec.routes.push_back(r);
  }
  std::vector<const ParsedSource*> ptrs;
  for (const auto& p : parsed) ptrs.push_back(&p);
  return mergeDispatch(ctx.sources.source, ptrs, spec);
}

// What shapes near the measured ones found, inside each routed bucket: `failed` (wrong where
// the kernel as written is right), `unverified` (a bucket without a verified shape); each
// bucket's shapes go to its entry of `buckets` ("extra_shapes").
struct NearbyOutcome {
  std::string failed, unverified;
};

NearbyOutcome verifyNearbyShapes(const RunContext& ctx, const RunState& state, const DispatchOutlook& o,
                                 const std::string& merged, nlohmann::json& buckets) {
  const DispatchPlan& plan = o.plan;
  std::string param = featureParam(ctx.task.cases, o.features, plan.feature);
  Variant vm = ctx.evaluator.materialize(merged);
  Variant vw = ctx.evaluator.materialize(ctx.sources.source.source.text());
  NearbyOutcome out;
  std::string& failed = out.failed;
  std::string& unverified = out.unverified;
  for (size_t bi = 0; bi < plan.buckets.size() && failed.empty(); ++bi) {
    const DispatchBucket& b = plan.buckets[bi];
    if (b.option < 0) continue;
    nlohmann::json shapes = nlohmann::json::array();
    size_t verified = 0, tried = 0;
    for (size_t c : b.cases) {
      for (const auto& shape : nearbyShapes(ctx.task.cases[c], param)) {
        if (verified >= kShapesPerBucket || tried >= 2 * kShapesPerBucket || !failed.empty()) break;
        // One per bucket is required; a second only with the time for it.
        if (verified >= 1 && !state.budget.mayStart(BudgetStage::kMeasure, expectedMeasureSeconds(state, 1))) break;
        if (std::find(ctx.task.cases.begin(), ctx.task.cases.end(), shape) != ctx.task.cases.end()) continue;
        ++tried;
        CaseMeasurement m = ctx.evaluator.verifyShape(vm, shape);
        nlohmann::json entry = {{"case", shape}};
        if (m.status == CandidateStatus::kNotRun) {
          entry["status"] = "not run: the budget ran out";
          shapes.push_back(entry);
          break;
        }
        std::optional<int64_t> value = featureValue(m, plan.feature);
        if (value) entry["feature"] = *value;
        if (m.status == CandidateStatus::kOk) {
          bool inside = value && *value >= b.lo && *value <= b.hi;
          entry["status"] = inside ? "verified" : "verified (outside this bucket)";
          verified += inside ? 1 : 0;
        } else {
          // Wrong here, and right as written: the dispatch is not handed back. Wrong both ways:
          // a shape the harness does not support.
          CaseMeasurement w = ctx.evaluator.verifyShape(vw, shape);
          if (w.status == CandidateStatus::kOk) {
            entry["status"] = fmt::format("{}: {}", toString(m.status), m.message);
            failed = fmt::format("on the shape {} ({} = {}): {}", caseLabelOf(shape), plan.feature.label(),
                                 value ? std::to_string(*value) : "?", m.message);
          } else {
            entry["status"] = "skipped: the kernel as written fails on it too";
          }
        }
        shapes.push_back(entry);
      }
    }
    buckets[bi]["extra_shapes"] = shapes;
    if (verified == 0 && unverified.empty()) {
      unverified = fmt::format("no shape near those measured could be verified inside {}..{}", b.lo, b.hi);
    }
  }
  return out;
}

}  // namespace

std::optional<DispatchOutlook> dispatchOutlook(const RunState& state) {
  const auto& cands = state.result.candidates;
  const size_t n = state.baseline.times_ms.size();
  if (cands.empty() || n < 2 || !timedOnEvery(cands[0], n)) return std::nullopt;
  DispatchOutlook o;
  DispatchInput in;
  for (size_t c = 0; c < n; ++c) {
    o.features.push_back(caseFeatures(cands[0].cases[c].arguments));
    if (o.features.back().features.empty()) return std::nullopt;
    in.as_written_ms.push_back(state.baseline.times_ms[c]);
    in.tolerance.push_back(caseTolerance(state.baseline.noise[c], 0));
  }
  in.cases = o.features;
  for (const auto& c : cands) {
    if (c.id == 0 || c.origin.rfind(kDispatchOrigin, 0) == 0 || !timedOnEvery(c, n)) continue;
    const BaselineReference& ref = c.reused ? state.baseline : state.baselineOf(c.lane);
    if (ref.times_ms.size() != n) continue;
    std::vector<double> ms;
    for (size_t i = 0; i < n; ++i) ms.push_back(c.cases[i].timing->median_ms * state.baseline.times_ms[i] / ref.times_ms[i]);
    in.option_ms.push_back(std::move(ms));
    o.option_ids.push_back(c.id);
  }
  std::optional<DispatchPlan> plan = planDispatch(in);
  if (!plan) return std::nullopt;
  o.single_best = state.bestObjective();
  if (plan->objective > o.single_best * (1.0 - kMinClaimedGain)) return std::nullopt;
  o.plan = std::move(*plan);
  return o;
}

double dispatchSeconds(const RunState& state, const DispatchOutlook& o) {
  const size_t n = state.baseline.times_ms.size();
  // The merged module compiles its kernels under new names (each case compiles the variant it
  // routes to: about one candidate's compile), unless compiled ahead (the last plan's source;
  // a later plan's shares most of its kernels).
  const double median_compile = state.compile_model.median().value_or(5.0);
  const bool ahead = !state.dispatch_hash.empty() && state.dispatch_compile.valid() &&
                     state.dispatch_compile.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  const double compile = ahead ? median_compile / 4 : median_compile;
  size_t routed = 0;
  for (const auto& b : o.plan.buckets) routed += b.option >= 0 ? 1 : 0;
  // One nearby shape per routed bucket at least (a second when there is time): it runs
  // untimed, and sometimes compiles another specialization.
  const double per_shape = median_compile / 4 + expectedMeasureSeconds(state, 1);
  return compile + expectedMeasureSeconds(state, n) + static_cast<double>(routed) * per_shape;
}

void compileDispatchAhead(const RunContext& ctx, RunState& state) {
  if (!state.search.space || ctx.evaluator.compileWorkers() == 0) return;
  std::optional<DispatchOutlook> o = dispatchOutlook(state);
  if (!o) return;
  MergedSource merged = dispatchSource(ctx, state, *o);
  if (!merged.refused.empty()) return;  // the stage after the search says why
  Variant v = ctx.evaluator.materialize(merged.text);
  if (v.hash == state.dispatch_hash) return;
  state.dispatch_hash = v.hash;
  state.dispatch_compile = ctx.evaluator.compileAsync(v);
  ctx.trace.add("per-shape-compile", {{"source_hash", v.hash}, {"feature", o->plan.feature.label()},
                                      {"elapsed_s", state.budget.elapsed()}});
}

double dispatchKeepBack(const RunState& state) {
  std::optional<DispatchOutlook> o = dispatchOutlook(state);
  if (!o) return 0;
  // Beyond the estimate: the stage's own margin (kPassVariant's second) and a second for the
  // parse and the merge (on the H200, a search that kept back the bare estimate left the stage
  // short of its margin, and the dispatch was not built).
  double s = dispatchSeconds(state, *o) + 2.0;
  if (s > kMostOfBudget * state.budget.total()) return 0;
  // Too late for it (the plan came with the search's last rounds): the search keeps its time
  // rather than stopping for a stage that could not start anyway.
  if (state.budget.keptBack() == 0 && state.budget.elapsed() + s > state.budget.searchEnd()) return 0;
  return s;
}

void perShapeDispatch(const RunContext& ctx, RunState& state) {
  if (!state.search.space || state.bases.empty()) return;
  std::optional<DispatchOutlook> o = dispatchOutlook(state);
  if (!o) return;
  const DispatchPlan& plan = o->plan;
  nlohmann::json ev = {{"feature", plan.feature.label()},
                       {"objective_search", plan.objective},
                       {"single_best_objective", o->single_best}};
  nlohmann::json buckets = nlohmann::json::array();
  for (const auto& b : plan.buckets) {
    nlohmann::json cases = nlohmann::json::array();
    for (size_t c : b.cases) cases.push_back(ctx.task.caseLabel(c));
    int id = b.option >= 0 ? o->option_ids[static_cast<size_t>(b.option)] : -1;
    buckets.push_back({{"lo", b.lo}, {"hi", b.hi}, {"candidate", id >= 0 ? nlohmann::json(id) : nlohmann::json(nullptr)},
                       {"runs", optionText(state, id)}, {"cases", cases}});
  }
  ev["buckets"] = buckets;
  auto skip = [&](const std::string& why) {
    ev["built"] = false;
    ev["reason"] = why;
    ctx.trace.add("per-shape", ev);
    state.result.notes.push_back(fmt::format("a per-shape dispatch ({:.3f}x on the search's measurements, against {:.3f}x "
                                             "for the best single candidate) was not built: {}",
                                             1.0 / plan.objective, 1.0 / o->single_best, why));
  };
  const double expected = dispatchSeconds(state, *o);
  ev["expected_s"] = expected;
  ev["left_s"] = state.budget.searchLeft();
  if (expected > kMostOfBudget * state.budget.total()) {
    return skip(fmt::format("it would take about {:.0f} s, more than {:.0f}% of the budget", expected, 100 * kMostOfBudget));
  }
  if (BudgetAnswer may = state.budget.mayStart(BudgetStage::kPassVariant, expected); !may) return skip(may.reason);
  ctx.progress.status(fmt::format("building a per-shape dispatch on {} ({} variants)", plan.feature.label(), plan.options.size()));

  MergedSource merged = dispatchSource(ctx, state, *o);
  if (!merged.refused.empty()) return skip(merged.refused);

  Prepared item;
  item.rec.kind = CandidateKind::kPass;
  item.rec.origin = kDispatchOrigin;
  std::string routes;
  for (const auto& b : plan.buckets) {
    int id = b.option >= 0 ? o->option_ids[static_cast<size_t>(b.option)] : -1;
    routes += fmt::format("{}{}..{}: {}", routes.empty() ? "" : ", ", b.lo, b.hi, id >= 0 ? fmt::format("#{}", id) : "as written");
  }
  item.rec.config_text = fmt::format("per-shape on {}: {}", plan.feature.label(), routes);
  item.text = merged.text;
  std::vector<int> ids = evaluateBatch(ctx, state, {}, {item});
  if (ids.empty()) return skip("it was not evaluated");
  CandidateRecord& rec = state.result.candidates[static_cast<size_t>(ids[0])];
  ev["candidate"] = rec.id;
  ev["built"] = true;
  ev["status"] = toString(rec.status);
  if (rec.objective) ev["objective"] = *rec.objective;
  if (!rec.eligible()) {
    ev["reason"] = rec.status != CandidateStatus::kOk ? rec.message : "slower than the kernel as written on some case";
    ctx.trace.add("per-shape", ev);
    state.result.dispatch = ev;
    return;
  }

  const NearbyOutcome nearby = verifyNearbyShapes(ctx, state, *o, merged.text, ev["buckets"]);
  const std::string& failed = nearby.failed;
  const std::string& unverified = nearby.unverified;
  if (!failed.empty()) {
    rec.status = CandidateStatus::kWrongResult;
    rec.message = "per-shape dispatch: wrong " + failed;
    ev["status"] = toString(rec.status);
    ev["reason"] = rec.message;
  } else if (!unverified.empty()) {
    // Verified on its measured cases only: kept out of the hand-back, and said why.
    rec.status = CandidateStatus::kNotRun;
    rec.message = "per-shape dispatch: " + unverified;
    ev["status"] = toString(rec.status);
    ev["reason"] = rec.message;
  }
  ctx.trace.add("per-shape", ev);
  state.result.dispatch = ev;
}

}  // namespace tf

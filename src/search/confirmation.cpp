#include "search/confirmation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "search/scoring.h"

namespace tf {
namespace {

void handBackOriginal(const RunContext& ctx, RunState& state, const std::string& note, nlohmann::json event) {
  OptimizeResult& r = state.result;
  r.best = -1;
  r.speedup = 1.0;
  r.best_source = ctx.sources.source.source.text();
  if (r.confirm_baseline.empty()) r.confirm_baseline = r.candidates[0].cases;
  if (!note.empty()) r.notes.push_back(note);
  event["accepted"] = false;
  ctx.trace.add("confirm", event);
}

// The search's own measurements decide: the best's cases against the baseline's, each within
// twice its noise (the measurements are shorter than the confirmation's).
void acceptFromSearch(const RunContext& ctx, RunState& state, const CandidateRecord& best, const std::string& why) {
  std::vector<std::string> slower;
  std::vector<double> ratios;
  // Against the baseline of the lane that measured it (the only one with one GPU).
  const BaselineReference& ref = best.reused ? state.baseline : state.baselineOf(best.lane);
  double noise = state.baselineNoise();
  for (double x : ref.noise) noise = std::max(noise, x);
  for (size_t i = 0; i < best.cases.size(); ++i) {
    double ratio = best.cases[i].timing->median_ms / ref.times_ms[i];
    ratios.push_back(ratio);
    double tol = 2 * caseTolerance(ref.noise[i], best.cases[i].timing->noise());
    noise = std::max(noise, best.cases[i].timing->noise());
    if (ratio > 1.0 + tol) slower.push_back(ref.labels[i]);
  }
  double obj = geomean(ratios);
  nlohmann::json ev = {{"best", best.id}, {"remeasured", false}, {"reason", why}, {"speedup", 1.0 / obj}};
  if (!slower.empty() || obj >= 1.0 - 2 * std::max(kMinCaseTolerance, noise)) {
    return handBackOriginal(ctx, state,
                            fmt::format("{}; on the search's measurements the best candidate (#{}) is not faster "
                                        "beyond twice the noise: the original is handed back",
                                        why, best.id),
                            ev);
  }
  if (1.0 / obj < 1.0 + kMinClaimedGain) {
    ev["reason"] = why + "; a gain under the smallest one claimed";
    return handBackOriginal(ctx, state,
                            fmt::format("{}; the best candidate (#{}) is {:.3f}x on the search's measurements, under "
                                        "the {:.0f}% a gain must reach to be claimed: reported as noise, the original "
                                        "is handed back",
                                        why, best.id, 1.0 / obj, 100 * kMinClaimedGain),
                            ev);
  }
  OptimizeResult& r = state.result;
  r.best = best.id;
  r.best_source = state.recordText(best);
  r.speedup = 1.0 / obj;
  r.confirm_baseline = r.candidates[0].cases;
  r.confirm_best = best.cases;
  r.notes.push_back(fmt::format("{}: the speed-up is the search's measurement, not re-measured", why));
  ev["accepted"] = true;
  ctx.trace.add("confirm", ev);
}

}  // namespace

// The candidate handed back: the best, unless it is a rewrite (a pass's output, or a
// configuration of one) and a configuration of the source as written measured within the
// noise of it (at least 0.5%): the rewrite then buys nothing the measurement can tell, and the
// smaller change is handed back (measured on an H100, lightllm_mrope: a launcher-glue rewrite
// on 2 warps and 2 warps alone both 1.317x).
static const CandidateRecord* handedBack(const RunContext& ctx, const RunState& state) {
  const CandidateRecord* best = state.best();
  if (!best || (best->base == 0 && best->kind != CandidateKind::kPass)) return best;
  const double limit = *best->objective * (1.0 + std::max(0.005, state.baselineNoise()));
  const CandidateRecord* plain = nullptr;
  for (const auto& c : state.result.candidates) {
    if (c.id == 0 || c.base != 0 || !c.eligible() || *c.objective > limit) continue;
    if (c.kind != CandidateKind::kSearch && c.kind != CandidateKind::kStored) continue;
    if (!plain || *c.objective < *plain->objective) plain = &c;
  }
  if (!plain) return best;
  ctx.trace.add("simpler-within-noise", {{"best", best->id}, {"best_objective", *best->objective},
                                          {"handed_back", plain->id}, {"objective", *plain->objective}});
  return plain;
}

void confirm(const RunContext& ctx, RunState& state) {
  OptimizeResult& r = state.result;
  const CandidateRecord* found = handedBack(ctx, state);
  r.best_source = ctx.sources.source.source.text();
  if (!found || found->id == 0) {
    r.speedup = 1.0;
    r.confirm_baseline = r.candidates[0].cases;
    if (r.stop_reason.empty()) r.stop_reason = "done";
    r.notes.push_back("no configuration beat the kernel as written: the original is handed back");
    ctx.trace.add("confirm", {{"best", nullptr}, {"accepted", false}});
    return;
  }
  const CandidateRecord best = *found;
  if (r.stop_reason.empty()) r.stop_reason = "done";
  const size_t n = ctx.task.cases.size();
  // Two alternations of baseline and best on every case: 4n measurements. Each costs its
  // timing budget plus what verification and the request cost in the search; the budget
  // shrinks the timing to fit what is left of it.
  double overhead = Budget::kRequestOverheadS;
  if (!state.recent_case_seconds.empty()) {
    std::vector<double> recent = state.recent_case_seconds;
    std::sort(recent.begin(), recent.end());
    overhead = std::max(overhead, recent[recent.size() / 2] - state.search_timing.budget_ms / 1000.0);
  }
  const double wanted_ms = std::max(ctx.options.confirm_timing_ms, state.search_timing.budget_ms);
  if (!state.budget.confirmationTimingMs(n, overhead, wanted_ms)) {
    return acceptFromSearch(ctx, state, best, "the budget left no time to re-measure");
  }
  // Baseline and best alternate on one lane: the one that measured the best, while it lives.
  int lane = ctx.evaluator.laneAlive(best.lane) ? best.lane : ctx.evaluator.firstAliveLane();
  if (lane < 0) return acceptFromSearch(ctx, state, best, "every measurement worker was lost before the re-measurement");
  // In a fresh process: nothing of the search's process carries over (an autotuner's choice
  // made there under load, caches, the allocator's state), as in the user's own run. It costs
  // a worker start (kept back in the reserve); without the time for it, the search's process.
  // Its start and the cases' inputs and references made again (what the baseline's first
  // measurement of each case spent on them) must fit with the measurements; otherwise the
  // search's process, which has them, re-measures.
  bool fresh = false;
  double start_s = ctx.evaluator.workerStartSeconds();
  double setup_s = 0;
  for (const auto& c : r.candidates[0].cases) setup_s += c.setup_seconds;
  if (start_s > 0 && state.budget.confirmationTimingMs(n, overhead, wanted_ms, start_s + setup_s)) {
    ctx.progress.status(fmt::format("starting a fresh measurement process to confirm #{}", best.id));
    fresh = ctx.evaluator.freshWorker(lane);
  }
  if (!fresh) {
    r.notes.push_back(fmt::format("the confirmation re-measured in the search's own process (no time or no start for a "
                                  "fresh one: its start {:.1f} s and the cases' inputs and references {:.1f} s)",
                                  start_s, setup_s));
  }
  // The timing fitted to what is left once the process has started.
  std::optional<double> fitted = state.budget.confirmationTimingMs(n, overhead, wanted_ms);
  if (!fitted) {
    return acceptFromSearch(ctx, state, best, "the budget left no time to re-measure after a fresh process started");
  }
  const double timing_ms = *fitted;
  ctx.progress.status(fmt::format("confirming #{} against the kernel as written", best.id));
  std::string best_text = state.recordText(best);
  Variant vb = ctx.evaluator.materialize(ctx.sources.source.source.text());
  Variant vc = ctx.evaluator.materialize(best_text);
  TimingOptions t = state.search_timing;
  t.budget_ms = timing_ms;
  std::vector<CaseMeasurement> base_last(n), cand_last(n);
  int alternations = 0;
  for (int rep = 0; rep < 2; ++rep) {
    bool out_of_budget = false;
    for (size_t i = 0; i < n; ++i) {
      CaseMeasurement mb = ctx.evaluator.measure(vb, i, t, lane);
      CaseMeasurement mc = ctx.evaluator.measure(vc, i, t, lane);
      if (mb.worker_lost || mc.worker_lost) {
        return acceptFromSearch(ctx, state, best, "the measurement worker was lost during the re-measurement");
      }
      if (mb.status == CandidateStatus::kNotRun || mc.status == CandidateStatus::kNotRun) {
        // A whole alternation on every case is a re-measurement: the second is a refinement.
        if (rep == 0) return acceptFromSearch(ctx, state, best, "the budget ran out during the re-measurement");
        out_of_budget = true;
        break;
      }
      if (mb.status != CandidateStatus::kOk || mc.status != CandidateStatus::kOk) {
        r.notes.push_back(fmt::format("confirmation run failed on case {}: {} / {}", ctx.task.caseLabel(i),
                                      mb.message, mc.message));
        return handBackOriginal(ctx, state, "the original is handed back",
                                {{"best", best.id}, {"reason", "the confirmation run failed"}});
      }
      // The better repetition of each side is kept, with its own spread: a repetition that
      // something else on the GPU disturbed is slower and wider, and is the one set aside.
      if (rep == 0 || mb.timing->median_ms < base_last[i].timing->median_ms) base_last[i] = mb;
      if (rep == 0 || mc.timing->median_ms < cand_last[i].timing->median_ms) cand_last[i] = mc;
    }
    if (out_of_budget) {
      r.notes.push_back("the confirmation's second alternation did not fit the budget: one alternation on every case "
                        "decided");
      break;
    }
    ++alternations;
  }
  std::vector<double> ratios;
  std::vector<std::string> slower;
  double noise = 0, sum_sq_tol = 0;
  nlohmann::json per_case = nlohmann::json::array();
  for (size_t i = 0; i < n; ++i) {
    double b = base_last[i].timing->median_ms;
    double c = cand_last[i].timing->median_ms;
    ratios.push_back(c / b);
    double tol = caseTolerance(base_last[i].timing->noise(), cand_last[i].timing->noise());
    noise = std::max({noise, base_last[i].timing->noise(), cand_last[i].timing->noise()});
    sum_sq_tol += tol * tol;
    bool case_slower = c / b > 1.0 + tol;
    if (case_slower) slower.push_back(ctx.task.caseLabel(i));
    per_case.push_back({{"case", ctx.task.caseLabel(i)}, {"baseline_ms", b}, {"best_ms", c}, {"tolerance", tol},
                        {"slower", case_slower}});
  }
  double obj = geomean(ratios);
  // The geometric mean of n cases measured independently is n-fold surer than one of them:
  // its margin is the cases' tolerances added in quadrature over n (one case: its own).
  double margin = std::max(kMinCaseTolerance, std::sqrt(sum_sq_tol) / static_cast<double>(n));
  r.confirm_baseline = base_last;
  r.confirm_best = cand_last;
  nlohmann::json ev = {{"best", best.id}, {"cases", per_case}, {"speedup", 1.0 / obj}, {"noise", noise},
                       {"margin", margin}, {"timing_ms", timing_ms}, {"fresh_process", fresh},
                       {"alternations", alternations}};
  if (!slower.empty()) {
    std::string list;
    for (const auto& s : slower) list += (list.empty() ? "" : ", ") + s;
    ev["reason"] = "slower on " + list;
    return handBackOriginal(ctx, state,
                            fmt::format("the best candidate (#{}) was slower than the original on {} on "
                                        "re-measurement; the original is handed back",
                                        best.id, list),
                            ev);
  }
  if (!(obj < 1.0 - margin)) {
    return handBackOriginal(ctx, state,
                            fmt::format("the best candidate (#{}) was within the noise of the original on "
                                        "re-measurement ({:.3f}x); the original is handed back",
                                        best.id, 1.0 / obj),
                            ev);
  }
  if (1.0 / obj < 1.0 + kMinClaimedGain) {
    ev["reason"] = "a gain under the smallest one claimed";
    return handBackOriginal(ctx, state,
                            fmt::format("the best candidate (#{}) was {:.3f}x on re-measurement, under the {:.0f}% a "
                                        "gain must reach to be claimed: reported as noise, the original is handed back",
                                        best.id, 1.0 / obj, 100 * kMinClaimedGain),
                            ev);
  }
  r.best = best.id;
  r.best_source = best_text;
  r.speedup = 1.0 / obj;
  ev["accepted"] = true;
  ctx.trace.add("confirm", ev);
}

}  // namespace tf

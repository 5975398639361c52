// Map: evaluateBatch (prune, rewrite, reuse or compile) -> measureInCompileOrder (measure what
// is compiled first; spilling variants last; nothing past the search's end) -> recordCandidate.
// With several measurement lanes (--gpus), measureOnLanes hands each compiled candidate to a
// free lane; a lane measures on its own thread, and everything the results lead to (records,
// callbacks, scoring against that lane's baseline) happens back on the driver thread.
#include "search/batch_evaluation.h"

#include <fmt/format.h>

#include <algorithm>
#include <future>

#include "search/measure_callbacks.h"
#include "search/scoring.h"
#include "search/stored_measurements.h"
#include "transform/apply_config.h"
#include "util/hash.h"

namespace tf {
namespace {

// Most register spills of any kernel a compile reported (0 when it reported none).
int64_t spillsOf(const nlohmann::json& kernels) {
  int64_t most = 0;
  if (!kernels.is_array()) return 0;
  for (const auto& k : kernels) {
    if (k.is_object() && k.contains("spills") && k["spills"].is_number_integer()) {
      most = std::max(most, k["spills"].get<int64_t>());
    }
  }
  return most;
}

struct Pending {
  CandidateRecord rec;
  Variant v;
  std::shared_future<CompileOutcome> compiled;
  bool at_first_call = false;        // compiled by the measurement worker's first call of it
  int duplicate_of = -1;
  bool known = false;
  bool anchor = false;               // Proposed::anchor
};

bool ready(const std::shared_future<CompileOutcome>& f) {
  return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

// The next of `todo` to measure: the first whose compile finished and does not spill more than
// the kernel as written, the configuration the round's passes were applied to first (their
// variants are judged against it), then a pass's variant before the base's other
// configurations (a structural change that wins decisively makes them moot:
// dropMootConfigurations); a spilling one only when nothing else is compiling; todo.size():
// none is ready yet.
size_t pickNext(const std::vector<Pending>& pending, const std::vector<size_t>& todo, int64_t base_spills) {
  size_t spilling = todo.size();
  bool compiling = false;
  for (size_t j = 0; j < todo.size(); ++j) {
    const auto& p = pending[todo[j]];
    if (!p.anchor) continue;
    if (!ready(p.compiled)) return todo.size();  // the passes' variants wait for it
    return j;
  }
  for (size_t j = 0; j < todo.size(); ++j) {
    const auto& p = pending[todo[j]];
    if (p.rec.kind != CandidateKind::kPass || !ready(p.compiled)) continue;
    const CompileOutcome& c = p.compiled.get();
    if (c.status != CandidateStatus::kOk || spillsOf(c.kernels) <= base_spills) return j;
  }
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
    return j;
  }
  return compiling ? todo.size() : spilling;
}

// How much faster than the best the base's configurations reached (before this batch or in
// it) a pass's variant must measure for the batch's remaining configurations of the base to be
// left unmeasured: the variant becomes the next base, whose own tuning is what the budget is
// for. Measured on the H200 (the suite's conv2d_direct, a direct convolution taking 19.7 ms as
// written, 60 s budget): implicit-gemm's variant measured 37.8x at 18.6 s, and the round's
// remaining configurations of the scalar kernel (10-90 ms each) took the other 42 s, so the
// implicit GEMM was never tuned (0.52 ms, against 0.15 for the same GEMM written by hand).
constexpr double kDecisivePass = 2.0;

void dropMootConfigurations(const RunContext& ctx, const RunState& state, std::vector<Pending>& pending,
                            std::vector<size_t>& todo, const CandidateRecord& measured) {
  if (measured.kind != CandidateKind::kPass || measured.status != CandidateStatus::kOk || !measured.objective) return;
  double best = state.bestObjective();
  for (const auto& p : pending) {
    if (p.rec.kind == CandidateKind::kSearch && p.rec.status == CandidateStatus::kOk && p.rec.objective) {
      best = std::min(best, *p.rec.objective);
    }
  }
  if (*measured.objective * kDecisivePass > best) return;
  int dropped = 0;
  for (auto it = todo.begin(); it != todo.end();) {
    auto& rec = pending[*it].rec;
    if (rec.kind != CandidateKind::kSearch) {
      ++it;
      continue;
    }
    rec.message = fmt::format("not measured: candidate #{} (a pass) measured {:.1f}x faster than the base's best", measured.id,
                              best / *measured.objective);
    it = todo.erase(it);
    ++dropped;
  }
  if (dropped) {
    ctx.trace.add("configurations-moot", {{"candidate", measured.id}, {"dropped", dropped},
                                          {"gain_over_best", best / *measured.objective}});
  }
}

// A measured case's wall time, for the estimate of the next measurement's. The baseline's walls
// and those of a candidate compiled by its first call include the compile: no estimate.
void noteCaseSeconds(RunState& state, const CandidateRecord& rec, const CaseMeasurement& m,
                     bool compiles_at_first_call) {
  if (m.status != CandidateStatus::kOk || rec.kind == CandidateKind::kBaseline || compiles_at_first_call) return;
  state.recent_case_seconds.push_back(m.wall_seconds);
  if (state.recent_case_seconds.size() > 16) state.recent_case_seconds.erase(state.recent_case_seconds.begin());
}

// Every case passed: when, and (compiled by its first call, no compile reply) the kernels the
// run reported.
void measuredWhole(const RunContext& ctx, CandidateRecord& rec) {
  rec.status = CandidateStatus::kOk;
  rec.done_s = ctx.clock.elapsed();
  if (rec.compile.kernels.empty() && !rec.cases.empty()) rec.compile.kernels = rec.cases.front().kernels;
}

// What a lane's thread measured of one candidate: cases from rec.cases.size() on, up to the
// first that did not pass. The driver applies it (applyLaneCases).
struct LaneJob {
  size_t index = 0;                  // into pending
  int lane = 0;
  size_t from = 0;                   // cases the candidate had before (from the database)
  std::future<std::vector<CaseMeasurement>> cases;
};

std::vector<CaseMeasurement> measureCasesOn(Evaluator& evaluator, const Variant& v, size_t from, size_t n,
                                            const TimingOptions& timing, int lane) {
  std::vector<CaseMeasurement> out;
  for (size_t i = from; i < n; ++i) {
    out.push_back(evaluator.measure(v, i, timing, lane));
    if (out.back().status != CandidateStatus::kOk) break;
  }
  return out;
}

// Applies a lane's measurements to the candidate, on the driver thread, as measureCandidate
// does for one lane. Returns false when the lane's worker was lost under it: the candidate
// keeps the cases measured before and goes back to the queue.
bool applyLaneCases(const RunContext& ctx, RunState& state, CandidateRecord& rec, std::vector<CaseMeasurement> cases,
                    int lane, bool compiles_at_first_call) {
  rec.lane = lane;
  for (auto& m : cases) {
    if (m.worker_lost) return false;
    size_t i = rec.cases.size();
    noteCaseSeconds(state, rec, m, compiles_at_first_call);
    rec.cases.push_back(std::move(m));
    ctx.callbacks.caseMeasured(rec, i, rec.cases.back());
    const CaseMeasurement& last = rec.cases.back();
    if (last.status != CandidateStatus::kOk) {
      rec.status = last.status;
      rec.message = last.status == CandidateStatus::kNotRun ? last.message
                                                            : fmt::format("case {}: {}", ctx.task.caseLabel(i), last.message);
      return true;
    }
  }
  if (rec.cases.size() < ctx.task.cases.size()) return true;  // not expected: a lane answers every case or fails
  measuredWhole(ctx, rec);
  scoreCandidate(rec, state.baselineOf(lane));
  return true;
}

// Several lanes: each free lane takes the next compiled candidate (pickNext), measures all its
// cases on its own thread, and the driver applies the results as they come. A lane whose
// worker is lost is dropped and its candidate measured again on another (cases stored before
// are kept: they came from a lane that measured them whole). Budget: a candidate is started
// only if its expected measurement fits before the search's end, as with one lane.
void measureOnLanes(const RunContext& ctx, RunState& state, std::vector<Pending>& pending, std::vector<size_t> todo,
                    int64_t base_spills) {
  Evaluator& ev = ctx.evaluator;
  std::vector<LaneJob> running;
  std::vector<bool> busy(static_cast<size_t>(ev.lanes()), false);
  bool out_of_budget = false;
  const size_t n = ctx.task.cases.size();
  while (!todo.empty() || !running.empty()) {
    // Collect what finished.
    for (size_t r = 0; r < running.size();) {
      if (running[r].cases.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        ++r;
        continue;
      }
      LaneJob job = std::move(running[r]);
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(r));
      busy[static_cast<size_t>(job.lane)] = false;
      auto& p = pending[job.index];
      std::vector<CaseMeasurement> got = job.cases.get();
      std::string lost_why;
      for (const auto& m : got) {
        if (m.worker_lost) lost_why = m.message;
      }
      if (applyLaneCases(ctx, state, p.rec, std::move(got), job.lane, p.at_first_call)) {
        dropMootConfigurations(ctx, state, pending, todo, p.rec);
      } else {
        // Only whole candidates count: drop what the lost lane measured of this one.
        ev.dropLane(job.lane, lost_why);
        ctx.trace.add("lane-lost", {{"lane", job.lane}, {"gpu", ev.laneDevice(job.lane)}, {"candidate", p.rec.id},
                                    {"reason", lost_why}});
        ctx.progress.status(fmt::format("{} was lost ({}); candidate #{} is measured again on another",
                                        ev.laneLabel(job.lane), lost_why, p.rec.id));
        // The cases it measured are stored (the callbacks ran) but not kept here: another
        // lane measures them all again, so that all of a candidate's cases share one baseline.
        p.rec.cases.resize(job.from);
        p.rec.status = CandidateStatus::kNotRun;
        p.rec.lane = 0;
        --state.result.measured;  // counted again when another lane measures it
        todo.insert(todo.begin(), job.index);
      }
    }
    if (ev.aliveLanes() == 0) {
      for (size_t i : todo) pending[i].rec.message = "every measurement worker was lost before it was measured";
      todo.clear();
    }
    int lane = -1;
    for (int l = 0; l < ev.lanes(); ++l) {
      if (!busy[static_cast<size_t>(l)] && ev.laneAlive(l)) {
        lane = l;
        break;
      }
    }
    if (!out_of_budget && !todo.empty() && lane >= 0) {
      if (BudgetAnswer may = state.budget.mayStart(BudgetStage::kMeasure, expectedMeasureSeconds(state, n)); !may) {
        for (size_t i : todo) pending[i].rec.message = may.reason;
        todo.clear();
        out_of_budget = true;
        continue;
      }
      size_t pick = pickNext(pending, todo, base_spills);
      if (pick < todo.size()) {
        size_t idx = todo[pick];
        todo.erase(todo.begin() + static_cast<std::ptrdiff_t>(pick));
        auto& p = pending[idx];
        const CompileOutcome compiled = p.compiled.get();
        p.rec.compile = compiled;
        if (compiled.status != CandidateStatus::kOk) {
          p.rec.status = compiled.status;
          p.rec.message = compiled.message;
          if (compiled.status != CandidateStatus::kNotRun) ctx.callbacks.compileFailed(p.rec);
          continue;
        }
        ++state.result.measured;
        busy[static_cast<size_t>(lane)] = true;
        LaneJob job;
        job.index = idx;
        job.lane = lane;
        job.from = p.rec.cases.size();
        job.cases = std::async(std::launch::async, measureCasesOn, std::ref(ev), p.v, p.rec.cases.size(), n,
                               state.search_timing, lane);
        running.push_back(std::move(job));
        continue;
      }
    }
    // Nothing to start: wait a little for a lane or a compile.
    if (!running.empty()) running.front().cases.wait_for(std::chrono::milliseconds(5));
    else if (!todo.empty()) pending[todo.front()].compiled.wait_for(std::chrono::milliseconds(5));
  }
}

// Measures the batch's compiled candidates in the order their compiles finish, not the
// order they were proposed: one slow compile no longer holds up the ready ones while the
// budget runs. A candidate that spills registers where the kernel as written does not is
// measured after the others that are ready or still compiling (it is rarely the fastest).
// What the budget leaves unmeasured is marked as such.
void measureInCompileOrder(const RunContext& ctx, RunState& state, std::vector<Pending>& pending) {
  std::vector<size_t> todo;
  for (size_t i = 0; i < pending.size(); ++i) {
    const auto& p = pending[i];
    if (!p.known && p.duplicate_of < 0 && p.rec.status == CandidateStatus::kNotRun && p.compiled.valid()) todo.push_back(i);
  }
  const int64_t base_spills =
      spillsOf(state.result.candidates.empty() ? nlohmann::json::array() : state.result.candidates[0].compile.kernels);
  if (ctx.evaluator.lanes() > 1) return measureOnLanes(ctx, state, pending, std::move(todo), base_spills);
  while (!todo.empty()) {
    const size_t cases = ctx.task.cases.size();
    if (BudgetAnswer may = state.budget.mayStart(BudgetStage::kMeasure, expectedMeasureSeconds(state, cases)); !may) {
      for (size_t i : todo) pending[i].rec.message = may.reason;
      return;
    }
    size_t pick = pickNext(pending, todo, base_spills);
    if (pick == todo.size()) {
      pending[todo.front()].compiled.wait_for(std::chrono::milliseconds(5));
      continue;
    }
    auto& p = pending[todo[pick]];
    measureCandidate(ctx, state, p.rec, p.v, p.compiled.get(), p.at_first_call);
    todo.erase(todo.begin() + static_cast<std::ptrdiff_t>(pick));
    dropMootConfigurations(ctx, state, pending, todo, p.rec);
  }
}

const CandidateRecord* findRecord(const RunState& state, int id, const std::vector<Pending>& pending) {
  for (const auto& c : state.result.candidates) {
    if (c.id == id) return &c;
  }
  for (const auto& p : pending) {
    if (p.rec.id == id) return &p.rec;
  }
  return nullptr;
}

}  // namespace

double expectedMeasureSeconds(const RunState& state, size_t cases) {
  // The median of the last measurements of a case. Before the search has measured one, the
  // baseline's walls are no estimate: each includes the first call of its specialization (the
  // compile, and an @triton.autotune kernel's own benchmarking), 3-35 s on real kernels where a
  // measurement takes under a second. Gated on them, a 20 s budget measured no candidate at
  // all (H200, 2026-12-01, 8 of 14 real kernels: 45 candidates "not-run"). So until one is
  // measured the estimate is the timing budget plus the verification runs, at most the
  // baseline's walls; the run deadline (the budget's end) still bounds what a case takes.
  std::vector<double> recent = state.recent_case_seconds;
  if (recent.empty()) {
    double first_guess = state.search_timing.budget_ms / 1000.0 + 0.3;
    for (const auto& c : state.result.candidates.empty() ? std::vector<CaseMeasurement>{} : state.result.candidates[0].cases) {
      recent.push_back(std::min(first_guess, c.wall_seconds));
    }
  }
  if (recent.empty()) return 0;
  std::nth_element(recent.begin(), recent.begin() + static_cast<std::ptrdiff_t>(recent.size() / 2), recent.end());
  return static_cast<double>(cases) * std::max(0.02, recent[recent.size() / 2]);
}

const CandidateRecord& recordCandidate(const RunContext& ctx, RunState& state, CandidateRecord rec) {
  state.result.candidates.push_back(std::move(rec));
  CandidateRecord& added = state.result.candidates.back();
  ctx.callbacks.candidateDone(added, state);
  return state.result.candidates.back();
}

void measureCandidate(const RunContext& ctx, RunState& state, CandidateRecord& rec, const Variant& v,
                      const CompileOutcome& compiled, bool compiles_at_first_call) {
  rec.compile = compiled;
  if (compiled.status != CandidateStatus::kOk) {
    rec.status = compiled.status;
    rec.message = compiled.message;
    if (compiled.status != CandidateStatus::kNotRun) ctx.callbacks.compileFailed(rec);
    return;
  }
  ++state.result.measured;
  for (size_t i = rec.cases.size(); i < ctx.task.cases.size(); ++i) {
    CaseMeasurement m = ctx.evaluator.measure(v, i, state.search_timing);
    noteCaseSeconds(state, rec, m, compiles_at_first_call);
    rec.cases.push_back(m);
    ctx.callbacks.caseMeasured(rec, i, rec.cases.back());
    if (m.status != CandidateStatus::kOk) {
      rec.status = m.status;
      rec.message = m.status == CandidateStatus::kNotRun ? m.message
                                                         : fmt::format("case {}: {}", ctx.task.caseLabel(i), m.message);
      if (m.status != CandidateStatus::kNotRun) rec.done_s = ctx.clock.elapsed();
      return;
    }
  }
  measuredWhole(ctx, rec);
  scoreCandidate(rec, state.baseline);
}

std::vector<int> evaluateBatch(const RunContext& ctx, RunState& state, const std::vector<Proposed>& proposals,
                               std::vector<Prepared> prepared, bool on_measurement_worker) {
  const Base& base = state.base();
  const Space& space = *state.search.space;
  std::vector<Pending> pending;
  std::vector<int> prepared_ids;
  // Looks the source up (this run, then the database) and starts its compile when unknown.
  auto enqueue = [&](Pending p, const std::string& text) {
    p.rec.source_hash = hashHex(text);
    auto dup = state.seen_sources.find(p.rec.source_hash);
    std::optional<StoredMeasurements::Known> known;
    if (dup == state.seen_sources.end() && ctx.stored) known = ctx.stored->lookup(p.rec.source_hash);
    if (dup != state.seen_sources.end()) {
      p.duplicate_of = dup->second;
      p.rec.done_s = ctx.clock.elapsed();  // known now, unless its twin is in this batch (below)
    } else if (known && known->complete) {
      p.known = true;
      p.rec.status = known->rec.status;
      p.rec.message = known->rec.message;
      p.rec.cases = known->rec.cases;
      p.rec.compile = known->rec.compile;
      p.rec.reused = true;
      p.rec.done_s = ctx.clock.elapsed();
      p.rec.origin += ", " + known->rec.origin;
      state.seen_sources[p.rec.source_hash] = p.rec.id;
    } else {
      // Cases stored by an interrupted run are kept; only the others are measured.
      if (known) p.rec.cases = known->rec.cases;
      p.v = ctx.evaluator.materialize(text);
      if (on_measurement_worker) {
        std::promise<CompileOutcome> first_call;
        CompileOutcome at_launch;
        at_launch.status = CandidateStatus::kOk;
        first_call.set_value(at_launch);
        p.compiled = first_call.get_future().share();
        p.at_first_call = true;
      } else {
        p.compiled = ctx.evaluator.compileAsync(p.v);
      }
      state.seen_sources[p.rec.source_hash] = p.rec.id;
    }
    pending.push_back(std::move(p));
  };
  for (const auto& pr : proposals) {
    std::string why;
    Pending p;
    p.rec.id = static_cast<int>(state.result.candidates.size() + pending.size());
    p.rec.round = state.result.rounds;
    p.rec.base = base.id;
    p.rec.kind = CandidateKind::kSearch;
    p.rec.origin = pr.origin;
    p.rec.proposal = pr.proposal;
    p.rec.config = pr.config;
    p.rec.config_text = describeConfig(*base.tunables, pr.config);
    p.anchor = pr.anchor;
    if (!space.valid(pr.config, &why)) {
      p.rec.status = CandidateStatus::kPruned;
      p.rec.message = why;
      ++state.result.pruned;
      pending.push_back(std::move(p));
      continue;
    }
    std::string text;
    try {
      text = RunState::textOf(base, pr.config);
    } catch (const std::logic_error& e) {
      p.rec.status = CandidateStatus::kCompileError;
      p.rec.message = fmt::format("rewrite failed: {}", e.what());
      pending.push_back(std::move(p));
      continue;
    }
    enqueue(std::move(p), text);
  }
  for (auto& pr : prepared) {
    Pending p;
    p.rec = std::move(pr.rec);
    p.rec.id = static_cast<int>(state.result.candidates.size() + pending.size());
    p.rec.round = state.result.rounds;
    p.rec.base = base.id;
    prepared_ids.push_back(p.rec.id);
    state.pass_texts[p.rec.id] = pr.text;
    enqueue(std::move(p), pr.text);
  }
  measureInCompileOrder(ctx, state, pending);
  for (auto& p : pending) {
    if (p.known) {
      ++state.result.reused;
      scoreCandidate(p.rec, state.baseline);
    } else if (p.duplicate_of >= 0) {
      if (const CandidateRecord* twin = findRecord(state, p.duplicate_of, pending)) {
        p.rec.status = twin->status;
        p.rec.objective = twin->objective;
        p.rec.regressed = twin->regressed;
        p.rec.message = fmt::format("same source as #{}", p.duplicate_of);
        p.rec.done_s = std::max(p.rec.done_s, twin->done_s);
      }
    }
    ++state.result.evaluated;
    recordCandidate(ctx, state, std::move(p.rec));
  }
  return prepared_ids;
}

}  // namespace tf

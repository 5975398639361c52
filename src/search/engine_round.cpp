#include "search/engine_round.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "diagnose/occupancy.h"
#include "search/batch_evaluation.h"
#include "search/loop_diagnosis.h"
#include "worker/target.h"

namespace tf {
namespace {

// Registers a finding under a run-wide id ("F3"), traced the first time it is seen.
void registerFinding(const RunContext& ctx, RunState& state, EngineFinding& f) {
  EngineLedger& ledger = state.engine;
  EngineLedger::FindingKey key{f.kind, f.kernel, f.source, f.summary};
  auto it = ledger.finding_ids.find(key);
  if (it != ledger.finding_ids.end()) {
    f.id = it->second;
    return;
  }
  f.id = fmt::format("F{}", ledger.finding_ids.size() + 1);
  ledger.finding_ids[key] = f.id;
  ledger.findings.push_back(f);
  ctx.trace.add("finding", f.toJson());
}

// A proposal's references to findings ("F2", "kind@kernel" or a kind), as ids.
std::vector<std::string> resolveFindings(const RunState& state, const std::vector<std::string>& refs) {
  std::vector<std::string> out;
  for (const auto& r : refs) {
    std::string id;
    for (const auto& f : state.engine.findings) {
      if (f.id == r || std::string(toString(f.kind)) + "@" + f.kernel == r) id = f.id;
    }
    if (id.empty()) {
      for (const auto& f : state.engine.findings) {
        if (toString(f.kind) == r) id = f.id;
      }
    }
    out.push_back(id.empty() ? r : id);
  }
  return out;
}

// The worst of each kind over the cases: a block that fits the short rows of one case may
// spill on the long rows of another, and that case is what must be fixed.
void mergeWorst(std::vector<EngineDiagnosis>& into, std::vector<EngineDiagnosis> from, const std::string& label,
                double roofline_fraction, std::map<std::string, double>* worst_fraction) {
  for (auto& d : from) {
    for (auto& f : d.findings) f.evidence["case"] = label;
    auto it = std::find_if(into.begin(), into.end(), [&](const EngineDiagnosis& x) { return x.kernel == d.kernel; });
    if (it == into.end()) {
      (*worst_fraction)[d.kernel] = roofline_fraction;
      into.push_back(std::move(d));
      continue;
    }
    // The bottleneck of the case furthest from its roofline.
    if (roofline_fraction < (*worst_fraction)[d.kernel] && d.bottleneck != Bottleneck::kUnknown) {
      it->bottleneck = d.bottleneck;
      (*worst_fraction)[d.kernel] = roofline_fraction;
    }
    for (auto& f : d.findings) {
      auto same = std::find_if(it->findings.begin(), it->findings.end(),
                               [&](const EngineFinding& x) { return x.kind == f.kind; });
      if (same == it->findings.end()) it->findings.push_back(std::move(f));
      else if (f.severity > same->severity) *same = std::move(f);
    }
  }
}

// The launcher's whole timeline, profiled by the diagnosis: traced, and kept per case for the
// kernel as written (result.json's baseline, the report).
void noteTimeline(const RunContext& ctx, RunState& state, const CandidateRecord& rec, size_t i,
                  const CaseMeasurement& ins) {
  if (!ins.timeline.is_object() && ins.timeline_error.empty()) return;
  nlohmann::json ev = {{"candidate", rec.id}, {"case", ctx.task.caseLabel(i)}};
  if (ins.timeline.is_object()) ev["timeline"] = ins.timeline;
  else ev["error"] = ins.timeline_error;
  ctx.trace.add("launcher-timeline", ev);
  if (rec.id != 0 || !ins.timeline.is_object()) return;
  nlohmann::json& per_case = state.result.launcher_timeline;
  while (per_case.size() <= i) per_case.push_back(nullptr);
  per_case[i] = ins.timeline;
}

std::vector<EngineDiagnosis> builtinDiagnosis(const RunContext& ctx, RunState& state, const std::string& text,
                                              const CandidateRecord& rec) {
  std::vector<EngineDiagnosis> out;
  std::map<std::string, double> worst_fraction;
  Variant v = ctx.evaluator.materialize(text);
  nlohmann::json per_case = nlohmann::json::array();
  for (size_t i = 0; i < rec.cases.size(); ++i) {
    // Every case's specialization has its own registers, spills and grid; the first is
    // always diagnosed, the others while the search has time for them.
    BudgetAnswer may;
    if (i > 0) may = state.budget.mayStart(BudgetStage::kDiagnosisCase, expectedMeasureSeconds(state, 1));
    if (!may) {
      per_case.push_back({{"case", ctx.task.caseLabel(i)}, {"skipped", may.reason}});
      continue;
    }
    // The kernel as written's launcher is profiled whole (what the report shows): once per case.
    CaseMeasurement ins = ctx.evaluator.inspect(v, i, /*timeline=*/rec.id == 0);
    if (ins.status != CandidateStatus::kOk) {
      ctx.trace.add("diagnosis-failed", {{"candidate", rec.id}, {"case", ctx.task.caseLabel(i)}, {"reason", ins.message}});
      continue;
    }
    noteTimeline(ctx, state, rec, i, ins);
    std::vector<EngineDiagnosis> d = diagnoseForEngine(ins, rec.cases[i], state.ceilings, state.result.environment["gpu"]);
    double fraction = 1.0;
    if (i < state.result.roofline_ms.size() && state.result.roofline_ms[i] && rec.cases[i].timing) {
      fraction = *state.result.roofline_ms[i] / rec.cases[i].timing->median_ms;
    }
    per_case.push_back({{"case", ctx.task.caseLabel(i)}, {"roofline_fraction", fraction}});
    mergeWorst(out, std::move(d), ctx.task.caseLabel(i), fraction, &worst_fraction);
  }
  ctx.trace.add("diagnosis-cases", {{"candidate", rec.id}, {"cases", per_case}});
  return out;
}

// Says, once per base, why a pass that a finding suggests was not proposed (the pass trials
// trace what became of those that were).
void traceUnproposedSuggestions(const RunContext& ctx, RunState& state, const EngineInput& in, const EngineOutput& out) {
  std::vector<EngineFinding> all = out.findings;
  for (const auto& d : state.engine.diagnosis) all.insert(all.end(), d.findings.begin(), d.findings.end());
  for (const auto& f : all) {
    for (PassName pass : f.suggestions) {
      bool proposed = std::any_of(out.proposals.begin(), out.proposals.end(), [&](const Proposal& p) {
        return p.kind == Proposal::Kind::kPass && p.pass == pass && (p.kernel.empty() || p.kernel == f.kernel);
      });
      if (proposed) continue;
      if (!state.engine.unproposed_traced.insert({state.current_base, pass, f.kernel}).second) continue;
      std::string why;
      if (isParameterMove(pass)) {
        why = "a parameter move: the search's regions make it";
      } else if (std::find(in.passes.begin(), in.passes.end(), pass) == in.passes.end()) {
        why = ctx.options.passes ? "switched off (--no-pass)" : "no transformation passes (--no-passes)";
      } else {
        why = fmt::format("the engine '{}' did not propose it", ctx.engine.name());
      }
      ctx.trace.add("pass-skipped", {{"pass", toString(pass)}, {"kernel", f.kernel},
                                     {"finding", f.id.empty() ? toString(f.kind) : f.id}, {"reason", why}});
    }
  }
}

// `--effort full`: every pass switched on, on every tuned kernel of the base, whether or not
// a finding suggests it (a pass whose preconditions fail refuses, and the trace says why).
void addEveryPass(const Base& base, const EngineInput& in, EngineOutput* out) {
  std::vector<std::string> kernels;
  for (const Tunable* t : base.tunables->active()) {
    if (std::find(kernels.begin(), kernels.end(), t->kernel) == kernels.end()) kernels.push_back(t->kernel);
  }
  for (const PassId& pass : in.passes) {
    if (pass.isParameterMove()) continue;  // the search makes them
    for (const auto& k : kernels) {
      bool proposed = std::any_of(out->proposals.begin(), out->proposals.end(), [&](const Proposal& p) {
        return p.kind == Proposal::Kind::kPass && p.pass == pass && (p.kernel.empty() || p.kernel == k);
      });
      if (proposed) continue;
      Proposal p;
      p.kind = Proposal::Kind::kPass;
      p.pass = pass;
      p.kernel = k;
      p.rationale = "effort full: every applicable pass is tried";
      out->proposals.push_back(std::move(p));
    }
  }
}

}  // namespace

nlohmann::json addLaunchOptions(const Base& base, const EngineInput& in, const nlohmann::json& gpu,
                                EngineOutput* out) {
  nlohmann::json moves = nlohmann::json::array();
  if (std::find(in.passes.begin(), in.passes.end(), PassName::kLaunch) == in.passes.end()) return moves;
  GpuLimits limits = GpuLimits::fromHello(gpu);
  auto propose = [&](const std::string& kernel, nlohmann::json params, const std::string& why) {
    Proposal p;
    p.kind = Proposal::Kind::kPass;
    p.pass = PassName::kLaunch;
    p.kernel = kernel;
    p.params = std::move(params);
    p.rationale = why;
    out->proposals.push_back(std::move(p));
  };
  for (const auto& [kernel, facts] : base.tunables->facts) {
    const Kernel* k = base.ir->kernel(kernel);
    auto left = [&](const char* move, const std::string& why) {
      moves.push_back({{"kernel", kernel}, {"move", move}, {"proposed", false}, {"reason", why}});
    };
    // An autotuned kernel takes them in each config of a literal list (the launch pass writes
    // them there); a list computed at run time or shared by name is left.
    if (k && k->autotune && !k->autotune->configsWrittenHere()) {
      left("maxnreg", "autotuned, its configs not a literal list of triton.Config: nowhere to write the option");
      left("num_ctas", "autotuned, its configs not a literal list of triton.Config: nowhere to write the option");
      continue;
    }
    const nlohmann::json* compiled = nullptr;
    for (const auto& c : in.best_kernels) {
      if (c.is_object() && c.value("name", "") == kernel) compiled = &c;
    }
    auto integer = [&](const char* key) -> std::optional<int64_t> {
      if (!compiled || !compiled->contains(key) || !(*compiled)[key].is_number_integer()) return std::nullopt;
      return (*compiled)[key].get<int64_t>();
    };
    auto regs = integer("registers");
    auto warps = integer("num_warps");
    auto shared = integer("shared_bytes");
    if (!regs || !warps || *warps <= 0) {
      left("maxnreg", "no registers or warps measured for the best configuration");
    } else {
      OccupancyEstimate occ = estimateOccupancy(limits, static_cast<int>(*warps), static_cast<int>(*regs), shared.value_or(0));
      if (occ.limiter != Limiter::kRegisters) {
        left("maxnreg", fmt::format("{} registers a thread do not limit its blocks per SM ({}: {} blocks)", *regs,
                                    toString(occ.limiter), occ.blocks_per_sm));
      } else {
        int ceiling = std::min({occ.limit_shared, occ.limit_warps, occ.limit_blocks});
        int proposed = 0;
        for (int more = 1; more <= 2; ++more) {
          int blocks = occ.blocks_per_sm + more;
          if (blocks > ceiling) break;
          int64_t per_thread = limits.registers_per_sm / (blocks * *warps * 32);
          per_thread -= per_thread % 8;
          if (per_thread < 32 || per_thread >= *regs) break;
          propose(kernel, {{"maxnreg", per_thread}},
                  fmt::format("the space is exhausted: {} registers a thread allow {} block(s) of {} warps per SM; "
                              "maxnreg={} lets {} fit (spills, if any, are measured)",
                              *regs, occ.blocks_per_sm, *warps, per_thread, blocks));
          ++proposed;
        }
        if (proposed == 0) {
          left("maxnreg", fmt::format("another block would need fewer than 32 registers a thread, or shared memory or "
                                      "warps stop it first ({} blocks per SM)",
                                      occ.blocks_per_sm));
        }
      }
    }
    if (limits.cc < 90) {
      left("num_ctas", fmt::format("clusters need sm_90 or later (this GPU: {})", limits.name));
    } else if (facts.dots.empty()) {
      left("num_ctas", "no tl.dot: a cluster shares nothing between its programs' tiles");
    } else {
      propose(kernel, {{"num_ctas", 2}},
              "the space is exhausted: clusters of two programs (num_ctas=2) split a dot's tile between two SMs");
    }
  }
  for (const auto& p : out->proposals) {
    if (p.pass == PassName::kLaunch && !p.params.empty()) {
      moves.push_back({{"kernel", p.kernel}, {"move", p.params.begin().key()}, {"proposed", true},
                       {"params", p.params}, {"reason", p.rationale}});
    }
  }
  return moves;
}

void diagnoseCandidate(const RunContext& ctx, RunState& state, const CandidateRecord& rec) {
  if (!ctx.options.diagnose && !ctx.options.builtin_diagnosis) return;
  if (!state.result.gpu) return;
  std::string text = state.recordText(rec);
  state.engine.diagnosis = ctx.options.diagnose ? ctx.options.diagnose(text, rec) : builtinDiagnosis(ctx, state, text, rec);
  nlohmann::json ds = nlohmann::json::array();
  for (auto& d : state.engine.diagnosis) {
    if (auto kind = findingOf(d.bottleneck)) {
      // The bottleneck is a finding of its own: rules answer it, proposals cite it.
      EngineFinding b;
      b.kind = *kind;
      b.kernel = d.kernel;
      b.source = "diagnosis";
      b.summary = fmt::format("{} is {}", d.kernel, toString(*kind));
      registerFinding(ctx, state, b);
    }
    for (auto& f : d.findings) {
      if (f.kernel.empty()) f.kernel = d.kernel;
      if (f.source.empty()) f.source = "diagnosis";
      registerFinding(ctx, state, f);
    }
    ds.push_back(d.toJson());
  }
  ctx.trace.add("diagnosis", {{"candidate", rec.id}, {"kernels", ds}});
}

EngineRound engineRound(const RunContext& ctx, RunState& state) {
  const Base& base = state.base();
  const Tuner& tuner = *state.search.tuner;
  EngineInput in;
  in.round = state.result.rounds + 1;
  in.source = base.text;
  in.tunables = base.tunables;
  in.space = state.search.space.get();
  in.diagnosis = state.engine.diagnosis;
  in.history = tuner.history();
  in.budget_left_s = state.budget.searchLeft();
  if (auto b = tuner.best()) {
    in.best = b->config;
    in.best_objective = b->objective;
    for (auto it = state.result.candidates.rbegin(); it != state.result.candidates.rend(); ++it) {
      if (it->base == base.id && it->status == CandidateStatus::kOk && it->objective == b->objective) {
        in.best_kernels = !it->cases.empty() ? it->cases[0].kernels : it->compile.kernels;
        for (const auto& c : it->cases) in.case_kernels.push_back(c.kernels);
        break;
      }
    }
  }
  if (ctx.options.passes) {
    for (auto& name : ctx.options.passes->enabled()) in.passes.emplace_back(std::move(name));
  }
  // Per case: the roofline time, and the time as written (objectives are relative to it), so
  // that an engine can tell how far from the roofline the best is.
  nlohmann::json roofline = nlohmann::json::array(), as_written = nlohmann::json::array();
  for (const auto& r : state.result.roofline_ms) roofline.push_back(r ? nlohmann::json(*r) : nlohmann::json(nullptr));
  if (!state.result.candidates.empty()) {
    for (const auto& c : state.result.candidates[0].cases) {
      as_written.push_back(c.timing ? nlohmann::json(c.timing->median_ms) : nlohmann::json(nullptr));
    }
  }
  in.task = {{"launcher", ctx.task.launcher}, {"cases", ctx.task.cases}, {"roofline_ms", roofline},
             {"as_written_ms", as_written}};
  in.attempts = state.engine.attempts;
  EngineOutput out = ctx.engine.propose(in);
  EngineRound round;
  if (!out.error.empty()) {
    if (!state.engine.error_traced) ctx.trace.add("engine-error", {{"engine", ctx.engine.name()}, {"message", out.error}});
    state.engine.error_traced = true;
    return round;
  }
  for (auto& f : out.findings) {
    if (f.source.empty()) f.source = ctx.engine.name();
    registerFinding(ctx, state, f);
  }
  traceUnproposedSuggestions(ctx, state, in, out);
  if (ctx.options.every_pass || state.search.every_pass) {
    addEveryPass(base, in, &out);
    // The launch options outside the space, once the space is exhausted (not from the start
    // with --effort full: they are the last moves, not the first).
    if (state.search.every_pass) {
      nlohmann::json gpu = state.result.environment.contains("gpu") ? state.result.environment["gpu"] : nlohmann::json();
      nlohmann::json moves = addLaunchOptions(base, in, gpu, &out);
      if (!moves.empty() && !state.search.launch_moves_traced) {
        ctx.trace.add("launch-moves", {{"base", base.id}, {"round", in.round}, {"moves", moves}});
        state.search.launch_moves_traced = true;
      }
    }
  }
  for (auto& p : out.proposals) {
    p.findings = resolveFindings(state, p.findings);
    nlohmann::json body = p.toJson();
    body.erase("id");
    body["base"] = base.id;
    std::string key = body.dump();
    auto it = state.engine.proposal_ids.find(key);
    if (it == state.engine.proposal_ids.end()) {
      it = state.engine.proposal_ids.emplace(key, fmt::format("P{}", state.engine.proposal_ids.size() + 1)).first;
      p.id = it->second;
      nlohmann::json ev = p.toJson();
      ev["round"] = in.round;
      ev["base"] = base.id;
      ctx.trace.add("proposal", ev);
    }
    p.id = it->second;
    if (p.kind == Proposal::Kind::kRegion) {
      std::string label;
      for (const auto& fid : p.findings) {
        for (const auto& f : state.engine.findings) {
          if (f.id == fid) label += (label.empty() ? "" : ", ") + f.id + " " + toString(f.kind);
        }
      }
      round.regions.push_back({p.id, p.region, p.share, label});
    } else {
      round.passes.push_back(p);  // a pass or a rewrite: the pass trials make its variants
    }
  }
  return round;
}

}  // namespace tf

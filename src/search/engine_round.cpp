#include "search/engine_round.h"

#include <fmt/format.h>

#include "search/loop_diagnosis.h"

namespace tf {
namespace {

// Registers a finding under a run-wide id ("F3"), traced the first time it is seen.
void registerFinding(const RunContext& ctx, RunState& state, EngineFinding& f) {
  EngineLedger& ledger = state.engine;
  std::string key = std::string(toString(f.kind)) + "|" + f.kernel + "|" + f.source + "|" + f.summary;
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

std::vector<EngineDiagnosis> builtinDiagnosis(const RunContext& ctx, RunState& state, const std::string& text,
                                              const CandidateRecord& rec) {
  if (rec.cases.empty()) return {};
  CaseMeasurement ins = ctx.evaluator.inspect(ctx.evaluator.materialize(text), 0);
  if (ins.status != CandidateStatus::kOk) {
    ctx.trace.add("diagnosis-failed", {{"candidate", rec.id}, {"reason", ins.message}});
    return {};
  }
  return diagnoseForEngine(ins, rec.cases[0], state.ceilings, state.result.environment["gpu"]);
}

}  // namespace

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
  in.budget_left_s = state.budget.searchEnd() - ctx.clock.elapsed();
  if (auto b = tuner.best()) {
    in.best = b->config;
    in.best_objective = b->objective;
    for (auto it = state.result.candidates.rbegin(); it != state.result.candidates.rend(); ++it) {
      if (it->base == base.id && it->status == CandidateStatus::kOk && it->objective == b->objective) {
        in.best_kernels = !it->cases.empty() ? it->cases[0].kernels : it->compile.kernels;
        break;
      }
    }
  }
  if (ctx.options.passes) in.passes = ctx.options.passes->enabled();
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
      round.passes.push_back(p);
    }
  }
  return round;
}

}  // namespace tf

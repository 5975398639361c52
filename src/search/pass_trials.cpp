// Map: tryPass (apply on the best configuration, measure, decide) -> switchBase (parse the
// pass's output, its tunables, its space) -> startBase (space, strategy, tuner, preload from
// the database). noteHints feeds each base's space what the measurements showed.
#include "search/pass_trials.h"

#include <fmt/format.h>

#include <set>

#include "search/batch_evaluation.h"
#include "search/engine_round.h"
#include "search/scoring.h"
#include "search/stored_measurements.h"
#include "task/source_parser.h"
#include "transform/apply_config.h"
#include "util/error.h"
#include "util/hash.h"

namespace tf {
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

nlohmann::json regionJson(const Region& r) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, vs] : r) {
    nlohmann::json a = nlohmann::json::array();
    for (int64_t v : vs) a.push_back(v == kKeep ? nlohmann::json("as-written") : nlohmann::json(v));
    j[k] = a;
  }
  return j;
}

// Loads into the tuner's history what earlier runs measured of this base: only
// configurations the base still produces identically, and that the search may propose now.
void preloadFromDatabase(const RunContext& ctx, RunState& state, const Base& base, const Space& space) {
  if (!ctx.stored) return;
  int loaded = 0;
  std::set<int64_t> runs;
  for (const auto& [vh, vrows] : ctx.stored->variantsOfBase(base.hash)) {
    if (state.seen_sources.count(vh)) continue;
    auto config = configFromKey(vrows.front().key.params);
    if (!config) continue;
    bool known_dims = true;
    for (const auto& [id, v] : *config) {
      if (!base.tunables->find(id)) known_dims = false;
    }
    if (!known_dims || !space.valid(*config)) continue;
    std::string text;
    try {
      text = applyConfig(*base.ir, *base.tunables, *config);
    } catch (const std::logic_error&) {
      continue;
    }
    if (hashHex(text) != vh) continue;
    auto known = ctx.stored->lookup(vh, &vrows);
    if (!known || !known->complete) continue;
    CandidateRecord rec = known->rec;
    rec.id = state.nextId();
    rec.round = 0;
    rec.base = base.id;
    rec.kind = CandidateKind::kStored;
    rec.config = *config;
    rec.config_text = describeConfig(*base.tunables, *config);
    rec.source_hash = vh;
    scoreCandidate(rec, state.baseline);
    std::optional<double> obj;
    if (rec.status == CandidateStatus::kOk && rec.objective) obj = searchObjective(rec);
    state.search.tuner->preload(*config, obj, rec.origin);
    state.seen_sources[vh] = rec.id;
    runs.insert(vrows.back().run_id);
    recordCandidate(ctx, state, std::move(rec));
    ++loaded;
  }
  state.result.preloaded += loaded;
  if (loaded) {
    ctx.trace.add("preload", {{"base", base.id}, {"configurations", loaded}, {"runs", runs}});
    const CandidateRecord* b = state.best();
    ctx.progress.status(fmt::format("reusing {} configurations measured before (best so far {:.2f}x)", loaded,
                                    b && b->objective ? 1.0 / *b->objective : 1.0));
  }
}

}  // namespace

void noteHints(const CandidateRecord& measured, const TunableSet& tunables, SpaceHints* hints) {
  for (const auto& c : measured.cases) {
    for (const auto& k : c.kernels) {
      if (!k.is_object()) continue;
      std::string name = k.contains("name") && k["name"].is_string() ? k["name"].get<std::string>() : "";
      if (k.contains("signature") && k["signature"].is_object()) {
        int smallest = 0;
        for (const auto& [param, type] : k["signature"].items()) {
          if (!type.is_string()) continue;
          std::string t = type.get<std::string>();
          if (t.empty() || t[0] != '*') continue;
          int b = elemBytes(t);
          if (b && (!smallest || b < smallest)) smallest = b;
        }
        if (smallest) hints->elem_bytes[name] = smallest;
      }
      if (k.contains("constexprs") && k["constexprs"].is_object()) {
        for (const auto& t : tunables.items) {
          if (t.kernel != name) continue;
          auto it = k["constexprs"].find(t.param);
          if (it != k["constexprs"].end() && it->is_number_integer()) hints->observed[t.id].push_back(it->get<int64_t>());
        }
      }
      if (k.contains("grid") && k["grid"].is_array() && !k["grid"].empty()) {
        double programs = 1;
        for (const auto& g : k["grid"]) programs *= g.is_number() ? g.get<double>() : 1.0;
        hints->baseline_programs[name] = std::max(hints->baseline_programs[name], programs);
      }
      if (k.contains("num_warps") && k["num_warps"].is_number_integer()) {
        for (const auto& t : tunables.items) {
          if (t.kernel == name && t.role == TunableRole::kNumWarps) hints->observed[t.id].push_back(k["num_warps"]);
        }
      }
    }
  }
}

void startBase(const RunContext& ctx, RunState& state, int b, const SpaceHints& hints) {
  const Base& base = *state.bases[static_cast<size_t>(b)];
  BaseSearch& search = state.search;
  search = BaseSearch{};
  search.full = std::make_unique<Space>(*base.tunables, hints);
  search.space = std::make_unique<Space>(ctx.options.only.empty() ? *search.full : search.full->restricted(ctx.options.only));
  const Space& space = *search.space;
  StrategyChoice choice = chooseStrategy(ctx.options.strategy, space);
  search.strategy = makeStrategy(choice.name, ctx.options.seed + static_cast<uint64_t>(b));
  search.tuner = std::make_unique<Tuner>(space, *search.strategy, 0.005, &ctx.trace);
  if (b == 0) {
    state.result.space_size = space.size();
    state.result.strategy = choice.name;
    state.result.strategy_reason = choice.why;
  }
  nlohmann::json dims = nlohmann::json::object();
  for (const auto& d : space.dims()) {
    nlohmann::json vals = nlohmann::json::array();
    for (int64_t v : d.values) vals.push_back(v == kKeep ? nlohmann::json("as-written") : nlohmann::json(v));
    dims[d.tunable->id] = vals;
  }
  nlohmann::json ev = {{"base", b}, {"size", space.size()}, {"dimensions", dims}, {"strategy", choice.name},
                       {"strategy_reason", choice.why}, {"seed", ctx.options.seed + static_cast<uint64_t>(b)}};
  if (space.size() <= 200000) ev["valid"] = space.enumerateValid(200000).size();
  if (!ctx.options.only.empty()) ev["only"] = regionJson(ctx.options.only);
  ctx.trace.add("space", ev);
  // The base as written is measured; so may be more of it, by earlier runs.
  const CandidateRecord& first = state.result.candidates[static_cast<size_t>(base.record)];
  std::optional<double> first_obj;
  if (first.objective) first_obj = searchObjective(first);
  search.tuner->preload(b == 0 ? space.baseline() : Config{}, first_obj, "base");
  preloadFromDatabase(ctx, state, base, space);
}

bool switchBase(const RunContext& ctx, RunState& state, const CandidateRecord& rec, const std::string& text,
                const std::string& origin) {
  auto b = std::make_unique<Base>();
  b->id = static_cast<int>(state.bases.size());
  b->origin = origin;
  b->text = text;
  b->hash = rec.source_hash;
  b->record = rec.id;
  try {
    b->parsed = std::make_unique<ParsedSource>(parseSource(ctx.evaluator.client(), ctx.task.source, text));
  } catch (const std::exception& e) {
    ctx.trace.add("base-refused", {{"candidate", rec.id}, {"reason", e.what()}});
    return false;
  }
  b->owned_ir = std::make_unique<ModuleIR>(buildModuleIR(*b->parsed));
  b->owned_tunables =
      std::make_unique<TunableSet>(discoverTunables(*b->owned_ir, ctx.task.launcher, ctx.task.kernels));
  b->ir = b->owned_ir.get();
  b->tunables = b->owned_tunables.get();
  SpaceHints hints = state.hints;
  hints.observed.clear();
  noteHints(rec, *b->tunables, &hints);
  state.current_base = b->id;
  ctx.trace.add("base", {{"base", b->id}, {"origin", origin}, {"candidate", rec.id}, {"source_hash", b->hash},
                         {"tunables", b->tunables->active().size()}});
  state.result.bases.push_back(origin);
  state.bases.push_back(std::move(b));
  startBase(ctx, state, state.current_base, hints);
  diagnoseCandidate(ctx, state, rec);
  return true;
}

bool tryPass(const RunContext& ctx, RunState& state, const Proposal& p) {
  const Base& base = state.base();
  std::string key = fmt::format("{}|{}", base.id, p.id);
  if (state.engine.passes_tried.count(key)) return false;
  // A pass is tried on the best configuration found on this base, so it waits for the
  // base's first round of search (a pass that pays off only with large tiles would lose
  // against the kernel as written, and be dropped).
  if (state.search.rounds == 0) return false;
  state.engine.passes_tried.insert(key);
  auto skip = [&](const std::string& why) {
    ctx.trace.add("pass-skipped", {{"proposal", p.id}, {"pass", p.pass}, {"kernel", p.kernel}, {"reason", why}});
    return false;
  };
  if (!ctx.options.passes) return skip("no transformation passes are available to the loop");
  if (ctx.clock.elapsed() + expectedMeasureSeconds(state, ctx.task.cases.size()) + 1.0 > state.budget.searchEnd()) {
    return skip("not enough budget left");
  }
  std::string on_text = base.text;
  std::string on_config;
  if (auto b = state.search.tuner->best(); b && !b->config.empty()) {
    on_text = RunState::textOf(base, b->config);
    on_config = describeConfig(*base.tunables, b->config);
  }
  PassApplication out = ctx.options.passes->apply({on_text, p.kernel, p.pass, p.params});
  if (out.status == PassApplication::Status::kUnknownPass || out.status == PassApplication::Status::kSwitchedOff) {
    return skip(out.message);
  }
  if (!out.applied()) {
    ctx.trace.add("pass-refused", {{"proposal", p.id}, {"pass", p.pass}, {"kernel", p.kernel},
                                   {"status", toString(out.status)}, {"reason", out.message}});
    return false;
  }
  CandidateRecord rec;
  rec.id = state.nextId();
  rec.round = state.result.rounds + 1;
  rec.base = base.id;
  rec.kind = CandidateKind::kPass;
  rec.origin = fmt::format("pass {}", p.pass);
  rec.proposal = p.id;
  rec.config_text = fmt::format("pass {}{}{}", p.pass, p.params.empty() ? "" : " " + p.params.dump(),
                                on_config.empty() ? "" : " on " + on_config);
  rec.source_hash = hashHex(out.source);
  if (auto dup = state.seen_sources.find(rec.source_hash); dup != state.seen_sources.end()) {
    ctx.trace.add("pass-refused", {{"proposal", p.id}, {"pass", p.pass},
                                   {"reason", fmt::format("the same source as #{}", dup->second)}});
    return false;
  }
  state.seen_sources[rec.source_hash] = rec.id;
  state.pass_texts[rec.id] = out.source;
  std::optional<StoredMeasurements::Known> known;
  if (ctx.stored) known = ctx.stored->lookup(rec.source_hash);
  if (known && known->complete) {
    rec.status = known->rec.status;
    rec.cases = known->rec.cases;
    rec.compile = known->rec.compile;
    rec.message = known->rec.message;
    rec.reused = true;
    ++state.result.reused;
    scoreCandidate(rec, state.baseline);
  } else {
    if (known) rec.cases = known->rec.cases;
    Variant v = ctx.evaluator.materialize(out.source);
    measureCandidate(ctx, state, rec, v, ctx.evaluator.compileAsync(v).get());
  }
  ++state.result.evaluated;
  double before = state.bestObjective();
  const CandidateRecord& added = recordCandidate(ctx, state, std::move(rec));
  bool wins = added.eligible() && *added.objective < before * (1.0 - std::max(0.005, state.baselineNoise()));
  ctx.trace.add("pass-result", {{"proposal", p.id}, {"pass", p.pass}, {"candidate", added.id},
                                {"status", toString(added.status)},
                                {"objective", added.objective ? nlohmann::json(*added.objective) : nullptr},
                                {"best_before", before}, {"won", wins}, {"pass_seconds", out.seconds}});
  if (!wins) return false;
  CandidateRecord winner = added;  // switchBase adds candidates (preloads): copy first
  return switchBase(ctx, state, winner, out.source, fmt::format("pass {} ({}) on base {}", p.pass, p.id, base.id));
}

}  // namespace tf

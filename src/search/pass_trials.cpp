// Map: preparePassTrials (apply each proposal's parameter variants to the base as written or
// its best configuration) -> (the round's batch) -> concludePassTrials (the best variant;
// a winner ->) switchBase (parse the pass's output, its tunables, its space) -> startBase
// (space, strategy, tuner, preload from the database). noteHints feeds each base's space
// what the measurements showed.
#include "search/pass_trials.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "search/batch_evaluation.h"
#include "search/failure_patterns.h"
#include "search/engine_round.h"
#include "search/scoring.h"
#include "search/stored_measurements.h"
#include "task/source_parser.h"
#include "transform/apply_config.h"
#include "util/error.h"
#include "util/hash.h"
#include "worker/worker_client.h"

namespace tf {
namespace {

// How much faster overall (the geometric mean over the cases) a variant slower on some case
// must be to be taken on trial as a base, and how many such bases a run takes. While at least
// 40% of the search's time is left, any clear gain overall will do: the variant's own
// parameters (rows per program, warps) are what decides, and there is time to tune them
// (measured on the H200: rows-per-program's tile form on a top-k router, 8 rows, 1.12x on one
// case and 0.94x on the other as the launch's warps left it).
constexpr double kProvisionalGain = 0.8;
constexpr double kProvisionalGainEarly = 0.97;
constexpr double kEarlyBefore = 0.6;    // of the search's time: "while at least 40% is left"
constexpr int kMaxProvisionalBases = 2;
// How much slower on the configuration it was applied to a variant of a retune proposal
// (Proposal::retune) may be and still be tuned on trial. Measured on the H200 (fp32 GEMM
// 4096^3, B relaid K-major): 0.433 against 0.352 on the best N-contiguous configuration
// (64x128x32, 2 warps), while the K-major layout's own best (128x256x32, 8 warps) took 0.515 ms
// against that configuration's 0.79 (scripts/gpu/structure_probe.py --only tf32).
// A loss under kRetuneMinLoss says the layout hardly matters to the kernel (the copy's cost):
// its best parameters will not move far (fp16 GEMMs on the H200, whose wgmma takes either
// layout: a K-major B tied as written, and tuning it as a base lost the search's time,
// 0.381 -> 0.415 ms). Only a pass applied to a tuned configuration counts: as written, the
// tiles are too small for the layout to show.
constexpr double kRetuneLoss = 1.3;
constexpr double kRetuneMinLoss = 1.1;
// Until when in the search a retune trial is started: a layout's first round of tuning found
// its best tiles in about 6 s on the H200 (the tf32 GEMM, 45 s budget), and the pass reaches a
// tuned configuration only in the second round (about 22 s in).
constexpr double kRetuneBefore = 0.75;

std::string joinRegressed(const std::vector<std::string>& cases) {
  std::string out;
  for (const auto& c : cases) out += (out.empty() ? "" : ", ") + c;
  return out;
}

// A proposal may name several values for a parameter (`{"block": [4096, 8192]}`): each is
// a variant of its own (in the order given, every combination when several are lists).
std::vector<nlohmann::json> expandParamLists(const nlohmann::json& params) {
  std::vector<nlohmann::json> out{nlohmann::json::object()};
  if (!params.is_object()) return out;
  for (const auto& [key, value] : params.items()) {
    std::vector<nlohmann::json> next;
    const nlohmann::json values = value.is_array() && !value.empty() ? value : nlohmann::json::array({value});
    for (const auto& partial : out) {
      for (const auto& v : values) {
        nlohmann::json x = partial;
        x[key] = v;
        next.push_back(std::move(x));
      }
    }
    out = std::move(next);
  }
  return out;
}

constexpr int kPassTries = 3;
// Rewrites measured per run: each costs a compile of every case and a measurement; a model
// that keeps rewriting is stopped here (its other proposals still count).
constexpr int kMaxRewrites = 8;
// Failed attempts kept for the engine's next input.
constexpr size_t kMaxAttempts = 12;

void noteAttempt(RunState& state, nlohmann::json attempt) {
  auto& a = state.engine.attempts;
  a.push_back(std::move(attempt));
  if (a.size() > kMaxAttempts) a.erase(a.begin());
}

// A rewrite of the module (an engine's kRewrite proposal): the guard first, then a variant of
// its own, compiled, verified and timed in the round's batch like a pass's. A refusal is
// traced with its reasons and goes back to the engine.
void prepareRewrite(const RunContext& ctx, RunState& state, const Proposal& p, std::vector<Prepared>* prepared,
                    std::vector<PassTrial>* trials) {
  const Base& base = state.base();
  if (!state.engine.rewrites_tried.insert({base.id, p.id}).second) return;
  const int round = state.result.rounds + 1;
  auto refuse = [&](const std::string& status, const std::vector<std::string>& reasons) {
    ctx.trace.add("rewrite-refused", {{"proposal", p.id}, {"status", status}, {"reasons", reasons}, {"round", round}});
    noteAttempt(state, {{"proposal", p.id}, {"kind", "rewrite"}, {"status", status}, {"errors", reasons}});
  };
  if (state.engine.rewrites >= kMaxRewrites) {
    refuse("skipped", {fmt::format("the run's {} rewrites have been measured", kMaxRewrites)});
    return;
  }
  const double measure_s = expectedMeasureSeconds(state, ctx.task.cases.size());
  if (BudgetAnswer may = state.budget.mayStart(BudgetStage::kPassVariant, measure_s); !may) {
    refuse("skipped", {may.reason});
    return;
  }
  GuardReply g = ctx.evaluator.client().guard(p.source, ctx.sources.source.source.text(), ctx.task.launcher);
  if (!g.answered) {
    refuse("guard-failed", {"the guard did not run: " + g.message});
    return;
  }
  if (!g.accepted()) {
    refuse("refused", g.reasons);
    return;
  }
  ++state.engine.rewrites;
  Prepared v;
  v.rec.kind = CandidateKind::kPass;
  v.rec.origin = "rewrite";
  v.rec.proposal = p.id;
  v.rec.config_text = fmt::format("rewrite {}", p.id);
  v.text = p.source;
  prepared->push_back(std::move(v));
  PassTrial trial;
  trial.proposal = p;
  trial.proposal.pass = PassId::rewrite();
  trial.anchor = "the module rewritten";
  trial.params.push_back(nlohmann::json::object());
  ctx.trace.add("rewrite-trial", {{"proposal", p.id}, {"rationale", p.rationale}, {"source_hash", hashHex(p.source)},
                                  {"round", round}});
  trials->push_back(std::move(trial));
}

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

namespace {

// Each dimension of a space: tunable id -> its values ("as-written" for kKeep).
nlohmann::json dimensionsJson(const Space& space) {
  nlohmann::json dims = nlohmann::json::object();
  for (const auto& d : space.dims()) {
    nlohmann::json vals = nlohmann::json::array();
    for (int64_t v : d.values) vals.push_back(v == kKeep ? nlohmann::json("as-written") : nlohmann::json(v));
    dims[d.tunable->id] = vals;
  }
  return dims;
}

// Tunables of kernels that no case launched when the base was measured: a route (a Gluon
// lowering) sent every call elsewhere, so their values change nothing the measurements see.
// Searching them would pick a configuration by noise and hand it back for the calls the
// route does not fit, unmeasured: each stays at the base's value. Empty unless every case
// was measured and launched a Gluon kernel (the only routes there are: a kernel named
// otherwise than its tunables, e.g. a test's fake, never freezes them by itself).
Region mootTunables(const RunState& state, const Base& base, const Space& space) {
  if (base.record < 0 || static_cast<size_t>(base.record) >= state.result.candidates.size()) return {};
  const CandidateRecord& rec = state.result.candidates[static_cast<size_t>(base.record)];
  if (rec.cases.empty()) return {};
  std::set<std::string> launched;
  for (const auto& m : rec.cases) {
    if (m.status != CandidateStatus::kOk || !m.kernels.is_array()) return {};
    bool routed = false;
    for (const auto& k : m.kernels) {
      if (!k.is_object()) continue;
      if (k.contains("name") && k["name"].is_string()) launched.insert(k["name"].get<std::string>());
      routed = routed || k.value("dialect", "") == "gluon";
    }
    if (!routed) return {};
  }
  Region moot;
  for (const auto& d : space.dims()) {
    if (!launched.count(d.tunable->kernel)) moot[d.tunable->id] = {d.baseline};
  }
  return moot;
}

}  // namespace

void startBase(const RunContext& ctx, RunState& state, int b, const SpaceHints& hints) {
  const Base& base = *state.bases[static_cast<size_t>(b)];
  BaseSearch& search = state.search;
  search = BaseSearch{};
  search.hints = hints;
  search.full = std::make_unique<Space>(*base.tunables, hints);
  search.frozen = mootTunables(state, base, *search.full);
  if (!search.frozen.empty()) {
    nlohmann::json ids = nlohmann::json::array();
    for (const auto& [id, vals] : search.frozen) ids.push_back(id);
    ctx.trace.add("tunables-moot", {{"base", b}, {"tunables", ids},
                                    {"reason", "no case launched their kernel (a route ran instead): kept as the base has them"}});
  }
  Space narrowed = ctx.options.only.empty() ? *search.full : search.full->restricted(ctx.options.only);
  search.space = std::make_unique<Space>(search.frozen.empty() ? narrowed : narrowed.restricted(search.frozen));
  const Space& space = *search.space;
  StrategyChoice choice = chooseStrategy(ctx.options.strategy, space);
  search.strategy = makeStrategy(choice.name, ctx.options.seed + static_cast<uint64_t>(b));
  search.tuner = std::make_unique<Tuner>(space, *search.strategy, 0.005, &ctx.trace);
  if (b == 0) {
    state.result.space_size = space.size();
    state.result.strategy = choice.name;
    state.result.strategy_reason = choice.why;
  }
  nlohmann::json ev = {{"base", b}, {"size", space.size()}, {"dimensions", dimensionsJson(space)}, {"strategy", choice.name},
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

bool widenSpace(const RunContext& ctx, RunState& state) {
  BaseSearch& search = state.search;
  if (!search.tuner) return false;
  nlohmann::json ev = {{"base", state.current_base}, {"from", search.space->size()}, {"elapsed_s", state.budget.elapsed()}};
  auto left = [&](const std::string& why) {
    ev["widened"] = false;
    ev["reason"] = why;
    ctx.trace.add("widen", ev);
    return false;
  };
  if (!ctx.options.widen_exhausted) return left("--no-widen");
  if (search.hints.wide) return left("the space has its widest domains already");
  if (!state.budget.searchBefore(kWidenBefore)) {
    return left(fmt::format("{:.0f}% of the search's time is used: too little left for a wider space", 100 * kWidenBefore));
  }
  SpaceHints hints = search.hints;
  hints.wide = true;
  const Base& base = *state.bases[static_cast<size_t>(state.current_base)];
  auto full = std::make_unique<Space>(*base.tunables, hints);
  Space restricted = ctx.options.only.empty() ? *full : full->restricted(ctx.options.only);
  auto space = std::make_unique<Space>(search.frozen.empty() ? restricted : restricted.restricted(search.frozen));
  ev["to"] = space->size();
  if (space->size() <= search.space->size()) return left("no domain of this space widens");
  if (space->size() <= 200000) {
    size_t valid_before = search.space->enumerateValid(200000).size();
    size_t valid_after = space->enumerateValid(200000).size();
    ev["valid_from"] = valid_before;
    ev["valid_to"] = valid_after;
    if (valid_after <= valid_before) return left("the wider domains add no valid configuration");
  }
  StrategyChoice choice = chooseStrategy(ctx.options.strategy, *space);
  auto strategy = makeStrategy(choice.name, ctx.options.seed + static_cast<uint64_t>(state.current_base) + 7919);
  search.tuner->widen(*space, *strategy);
  search.full = std::move(full);
  search.space = std::move(space);
  search.strategy = std::move(strategy);
  search.hints = hints;
  ev["widened"] = true;
  ev["strategy"] = choice.name;
  ev["dimensions"] = dimensionsJson(*search.space);
  ev["reason"] = "every configuration of the space was measured with time left: its domains widen (as --effort full's)";
  ctx.trace.add("widen", ev);
  return true;
}

bool proposeEveryPass(const RunContext& ctx, RunState& state) {
  nlohmann::json ev = {{"base", state.current_base}, {"elapsed_s", state.budget.elapsed()}, {"passes", "every pass"}};
  auto left = [&](const std::string& why) {
    ev["widened"] = false;
    ev["reason"] = why;
    ctx.trace.add("widen", ev);
    return false;
  };
  if (ctx.options.every_pass || state.search.every_pass) return left("every pass is proposed already");
  if (!ctx.options.passes || ctx.options.passes->enabled().empty()) return left("no pass is switched on");
  if (!ctx.options.widen_exhausted) return left("--no-widen");
  if (!state.budget.searchBefore(kWidenBefore)) {
    return left(fmt::format("{:.0f}% of the search's time is used", 100 * kWidenBefore));
  }
  state.search.every_pass = true;
  ev["widened"] = true;
  ev["reason"] = "the space is exhausted: every pass the engine did not propose is tried on this base";
  ctx.trace.add("widen", ev);
  return true;
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
  b->owned_ir = std::make_unique<ModuleIR>(buildModuleIR(*b->parsed, ctx.sources.importedKernels()));
  b->owned_tunables =
      std::make_unique<TunableSet>(
          discoverTunables(*b->owned_ir, ctx.task.launcher, ctx.task.kernels, ctx.task.direction == "backward"));
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

// The share of the budget the kernel as written's first call may take (at least kSlowAnchorS)
// before the first round's passes are applied to a configuration of the round instead: each
// variant of the kernel as written would cost as much again.
constexpr double kSlowAnchorShare = 0.2;
constexpr double kSlowAnchorS = 2.0;

std::string lateAnchorReason(const RunState& state) {
  // The first round of the first base only: a later base's "as written" is a variant measured already.
  if (state.search.rounds > 0 || state.current_base != 0 || state.result.candidates.empty()) return "";
  const auto& cases = state.result.candidates[0].cases;
  if (cases.empty()) return "";
  double rest = 0;  // what a call costs without the compile: the other cases' walls
  for (size_t i = 1; i < cases.size(); ++i) rest = std::max(rest, cases[i].wall_seconds);
  const double first = cases[0].wall_seconds - rest;
  if (first < std::max(kSlowAnchorS, kSlowAnchorShare * state.budget.total())) return "";
  return fmt::format("the kernel as written took {:.0f} s to compile and run its first case: the first round's "
                     "passes are applied to the round's first configuration (measured first), not to it",
                     first);
}

std::vector<PassTrial> preparePassTrials(const RunContext& ctx, RunState& state, const std::vector<Proposal>& passes,
                                         std::vector<Prepared>* prepared, const Config* late_anchor) {
  std::vector<PassTrial> trials;
  for (const auto& p : passes) {
    if (p.kind == Proposal::Kind::kRewrite) prepareRewrite(ctx, state, p, prepared, &trials);
  }
  const Base& base = state.base();
  // The first round applies passes to the base as written; later rounds to its best
  // configuration (a pass that pays off only with large tiles would lose as written).
  Config on;
  std::string anchor = "as written";
  if (state.search.rounds > 0) {
    auto b = state.search.tuner->best();
    if (!b || b->config.empty()) return trials;
    on = b->config;
    anchor = describeConfig(*base.tunables, on);
  } else if (late_anchor) {
    on = *late_anchor;
    anchor = describeConfig(*base.tunables, on);
  }
  const std::string on_text = RunState::textOf(base, on);
  for (const auto& p : passes) {
    if (p.kind == Proposal::Kind::kRewrite) continue;  // above
    auto skip = [&](const std::string& why) {
      ctx.trace.add("pass-skipped", {{"proposal", p.id}, {"pass", p.pass}, {"kernel", p.kernel}, {"reason", why},
                                     {"round", state.result.rounds + 1}});
    };
    int& tries = state.engine.pass_tries[{base.id, p.id}];
    std::tuple<int, std::string, std::string> anchor_key{base.id, p.id, configKey(on)};
    if (state.engine.passes_tried.count(anchor_key)) continue;  // tried on this configuration: traced then
    // Up to three configurations of a base, each the best at the time: a structural pass can
    // lose on small tiles and win on the large ones the search finds later (causal-split on
    // the H200: lost on 32x32 and on 128x16, never tried on the 128x64 that ended best).
    if (tries >= kPassTries) continue;
    state.engine.passes_tried.insert(anchor_key);
    ++tries;
    if (!ctx.options.passes) {
      skip("no transformation passes are available to the loop");
      continue;
    }
    if (state.failures.passDropped(p.pass)) {
      skip("dropped: its variants failed twice with the same error");
      continue;
    }
    const double measure_s = expectedMeasureSeconds(state, ctx.task.cases.size());
    if (BudgetAnswer may = state.budget.mayStart(BudgetStage::kPassVariant, measure_s); !may) {
      skip(may.reason);
      continue;
    }
    PassTrial trial;
    trial.proposal = p;
    trial.anchor = anchor;
    // Also on top of a pass that tied, when there is one on this base (another pass).
    const auto& tie = state.engine.tie;
    bool on_tie = tie.base == base.id && tie.pass != p.pass && state.pass_texts.count(tie.candidate);
    std::vector<std::pair<nlohmann::json, bool>> variants;
    for (const auto& given : expandParamLists(p.params)) {
      for (const auto& params : ctx.options.passes->paramVariants(p.pass.name(), given, kPassVariants)) {
        if (variants.size() >= (on_tie ? 2 : 1) * kPassVariants) break;
        if (std::any_of(variants.begin(), variants.end(), [&](const auto& v) { return v.first == params; })) continue;
        variants.push_back({params, false});
        if (on_tie) variants.push_back({params, true});
      }
    }
    for (const auto& [params, over_tie] : variants) {
      const std::string& src = over_tie ? state.pass_texts.at(tie.candidate) : on_text;
      // The applier's contract (variant/) names passes by text: the pass leaves the loop here.
      PassApplication out = ctx.options.passes->apply({src, p.kernel, p.pass.name(), params});
      if (out.status == PassApplication::Status::kUnknownPass || out.status == PassApplication::Status::kSwitchedOff) {
        tries = kPassTries;  // not on this base, whatever the configuration
        skip(out.message);
        break;
      }
      if (!out.applied()) {
        ctx.trace.add("pass-refused", {{"proposal", p.id}, {"pass", p.pass}, {"kernel", p.kernel}, {"params", params},
                                       {"status", toString(out.status)}, {"reason", out.message}});
        // A failed precondition is the kernel's structure: it does not depend on the
        // parameters, nor on the configuration (not tried again on this base).
        if (out.status == PassApplication::Status::kRefused && !over_tie) {
          tries = kPassTries;
          break;
        }
        continue;
      }
      Prepared v;
      v.rec.kind = CandidateKind::kPass;
      v.rec.origin = fmt::format("pass {}", p.pass.name());
      v.rec.proposal = p.id;
      v.rec.config = over_tie ? state.result.candidates[static_cast<size_t>(tie.candidate)].config : on;
      v.rec.config_text = fmt::format("pass {}{}{}", p.pass.name(), params.empty() ? "" : " " + params.dump(),
                                      over_tie ? " on " + tie.label : on.empty() ? "" : " on " + anchor);
      v.text = std::move(out.source);
      prepared->push_back(std::move(v));
      nlohmann::json recorded = params;
      if (over_tie) recorded["on"] = tie.label;
      trial.params.push_back(recorded);
    }
    if (!trial.params.empty()) {
      ctx.trace.add("pass-trial", {{"proposal", p.id}, {"pass", p.pass}, {"kernel", p.kernel}, {"on", anchor},
                                   {"variants", trial.params}, {"round", state.result.rounds + 1}});
      trials.push_back(std::move(trial));
    }
  }
  return trials;
}

// What a trial's variants must beat: the best before the round, or the configuration they were
// applied to when it was measured in the same batch (a late anchor), whichever is faster.
static double judgedAgainst(const RunState& state, const PassTrial& t, double best_before) {
  if (t.anchor_candidate < 0 || static_cast<size_t>(t.anchor_candidate) >= state.result.candidates.size()) {
    return best_before;
  }
  const CandidateRecord& a = state.result.candidates[static_cast<size_t>(t.anchor_candidate)];
  return a.eligible() ? std::min(best_before, *a.objective) : best_before;
}

bool concludePassTrials(const RunContext& ctx, RunState& state, std::vector<PassTrial>& trials, double best_before) {
  const CandidateRecord* winner = nullptr;
  const PassTrial* winning = nullptr;
  for (auto& t : trials) {
    const double threshold = judgedAgainst(state, t, best_before) * (1.0 - std::max(0.005, state.baselineNoise()));
    const CandidateRecord* best = nullptr;
    nlohmann::json variants = nlohmann::json::array();
    for (size_t i = 0; i < t.candidates.size(); ++i) {
      const CandidateRecord& c = state.result.candidates[static_cast<size_t>(t.candidates[i])];
      variants.push_back({{"candidate", c.id}, {"params", t.params[i]}, {"status", toString(c.status)},
                          {"objective", c.objective ? nlohmann::json(*c.objective) : nullptr},
                          {"regressed_cases", c.regressed}});
      if (c.eligible() && (!best || *c.objective < *best->objective)) best = &c;
      if (c.status != CandidateStatus::kOk) {
        // What the engine sees next round: a rewrite that did not compile or verify, with its error.
        noteAttempt(state, {{"proposal", t.proposal.id},
                            {"kind", t.proposal.kind == Proposal::Kind::kRewrite ? "rewrite" : "pass"},
                            {"pass", t.proposal.pass},
                            {"params", t.params[i]},
                            {"status", toString(c.status)},
                            {"errors", nlohmann::json::array({c.message.substr(0, 4000)})}});
      } else if (t.proposal.kind == Proposal::Kind::kRewrite) {
        noteAttempt(state, {{"proposal", t.proposal.id}, {"kind", "rewrite"}, {"status", "measured"},
                            {"objective", c.objective ? nlohmann::json(*c.objective) : nullptr},
                            {"best_before", best_before}, {"regressed_cases", c.regressed}});
      }
      if (c.status != CandidateStatus::kOk && state.failures.observePass(t.proposal.pass, c)) {
        ctx.trace.add("pass-dropped", {{"pass", t.proposal.pass},
                                       {"reason", "two variants failed with the same error"},
                                       {"signature", FailurePatterns::signature(c)}});
      }
    }
    bool won = best && *best->objective < threshold;
    ctx.trace.add("pass-result", {{"proposal", t.proposal.id}, {"pass", t.proposal.pass}, {"on", t.anchor},
                                  {"variants", variants}, {"best_before", best_before},
                                  {"anchor_candidate", t.anchor_candidate >= 0 ? nlohmann::json(t.anchor_candidate) : nullptr},
                                  {"candidate", best ? nlohmann::json(best->id) : nullptr},
                                  {"objective", best ? nlohmann::json(*best->objective) : nullptr}, {"won", won}});
    if (won && (!winner || *best->objective < *winner->objective)) {
      winner = best;
      winning = &t;
    }
  }
  if (!winner) {
    // A variant far faster overall (by kProvisionalGain) that is slower on some case becomes a
    // base on trial: the pass changed what the parameters should be (a row walked in chunks
    // wants other warps and chunk sizes), so its configurations are tuned; the search's
    // objective counts a case that is slower than as written as no gain, and only a
    // candidate slower on no case can be the result.
    const CandidateRecord* trial = nullptr;
    const PassTrial* trial_of = nullptr;
    const double gain = state.budget.searchBefore(kEarlyBefore) ? kProvisionalGainEarly : kProvisionalGain;
    for (auto& t : trials) {
      for (int id : t.candidates) {
        const CandidateRecord& c = state.result.candidates[static_cast<size_t>(id)];
        if (c.status != CandidateStatus::kOk || !c.objective || c.regressed.empty()) continue;
        if (*c.objective < judgedAgainst(state, t, best_before) * gain && (!trial || *c.objective < *trial->objective)) {
          trial = &c;
          trial_of = &t;
        }
      }
    }
    // A pass that moves the best parameters, slower by less than kRetuneLoss where the
    // current best's parameters were tried: its own parameters are tuned while the run is young.
    if (!trial && state.budget.searchBefore(kRetuneBefore)) {
      for (auto& t : trials) {
        if (!t.proposal.retune || t.anchor == "as written") continue;
        for (int id : t.candidates) {
          const CandidateRecord& c = state.result.candidates[static_cast<size_t>(id)];
          if (c.status != CandidateStatus::kOk || !c.objective || *c.objective >= best_before * kRetuneLoss ||
              *c.objective < best_before * kRetuneMinLoss) {
            continue;
          }
          if (!trial || *c.objective < *trial->objective) {
            trial = &c;
            trial_of = &t;
          }
        }
      }
    }
    if (trial && state.engine.provisional_bases < kMaxProvisionalBases) {
      ++state.engine.provisional_bases;
      CandidateRecord rec = *trial;
      std::string origin = fmt::format("pass {} ({}) on base {}, on trial: {}", trial_of->proposal.pass.name(),
                                       trial_of->proposal.id, state.base().id,
                                       rec.regressed.empty() ? "its own parameters to tune"
                                                             : "slower on " + joinRegressed(rec.regressed));
      ctx.trace.add("base-on-trial", {{"pass", trial_of->proposal.pass}, {"candidate", rec.id},
                                      {"objective", *rec.objective}, {"best_before", best_before},
                                      {"regressed_cases", rec.regressed}});
      if (switchBase(ctx, state, rec, state.pass_texts.at(rec.id), origin)) return true;
    }
    // The closest to a win that is no loss (no case slower, within the noise of the best):
    // other passes go on top of it from the next round.
    const CandidateRecord* tied = nullptr;
    const PassTrial* tied_trial = nullptr;
    for (auto& t : trials) {
      const double tie_limit = judgedAgainst(state, t, best_before) * (1.0 + std::max(0.005, state.baselineNoise()));
      for (size_t i = 0; i < t.candidates.size(); ++i) {
        const CandidateRecord& c = state.result.candidates[static_cast<size_t>(t.candidates[i])];
        if (t.params[i].contains("on")) continue;  // already a stack
        if (c.eligible() && *c.objective <= tie_limit && (!tied || *c.objective < *tied->objective)) {
          tied = &c;
          tied_trial = &t;
        }
      }
    }
    const Base& base = state.base();
    if (tied && !(state.engine.tie.base == base.id && state.engine.tie.pass == tied_trial->proposal.pass)) {
      const PassId& pass = tied_trial->proposal.pass;
      state.engine.tie = {base.id, tied->id, pass, pass.name() + " (tied, candidate " + std::to_string(tied->id) + ")"};
      ctx.trace.add("pass-tie", {{"pass", tied_trial->proposal.pass}, {"candidate", tied->id},
                                 {"objective", *tied->objective}, {"best_before", best_before}});
    }
    return false;
  }
  CandidateRecord rec = *winner;  // switchBase adds candidates (preloads): copy first
  const Base& base = state.base();
  std::string origin =
      fmt::format("pass {} ({}) on base {}", winning->proposal.pass.name(), winning->proposal.id, base.id);
  for (size_t i = 0; i < winning->candidates.size(); ++i) {
    if (winning->candidates[i] == rec.id && winning->params[i].contains("on")) {
      // Stacked on a tie: the base holds both passes.
      origin = fmt::format("pass {} ({}) on pass {} on base {}", winning->proposal.pass.name(), winning->proposal.id,
                           state.engine.tie.pass.name(), base.id);
    }
  }
  return switchBase(ctx, state, rec, state.pass_texts.at(rec.id), origin);
}

}  // namespace tf

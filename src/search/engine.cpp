// Engine input and output as JSON (docs/engine.md), the engine factory, and the external
// engine: a program run once per round with EngineInput on stdin, EngineOutput on stdout.
#include "search/engine.h"

#include <fmt/format.h>

#include <algorithm>

#include "util/error.h"
#include "util/subprocess.h"
#include "variant/config.h"

namespace tf {

namespace {

std::string str(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

nlohmann::json EngineFinding::toJson() const {
  nlohmann::json sugg = nlohmann::json::array();
  for (PassName p : suggestions) sugg.push_back(toString(p));
  nlohmann::json j = {{"kind", toString(kind)}, {"kernel", kernel},   {"severity", severity},
                      {"source", source},       {"summary", summary}, {"evidence", evidence},
                      {"suggestions", sugg}};
  if (limiter) j["limiter"] = toString(*limiter);
  if (!id.empty()) j["id"] = id;
  return j;
}

EngineFinding EngineFinding::fromJson(const nlohmann::json& j, const std::string& what) {
  if (!j.is_object()) throw UserError(fmt::format("{}: a finding must be a JSON object", what));
  EngineFinding f;
  std::string kind = str(j, "kind");
  auto k = findingKindFromString(kind);
  if (!k) {
    std::string known;
    for (FindingKind x : allFindingKinds()) known += (known.empty() ? "" : ", ") + std::string(toString(x));
    throw UserError(fmt::format("{}: '{}' is not a finding kind (kinds: {})", what, kind, known));
  }
  f.kind = *k;
  f.id = str(j, "id");
  f.kernel = str(j, "kernel");
  auto sev = j.find("severity");
  f.severity = sev != j.end() && sev->is_number() ? std::clamp(sev->get<double>(), 0.0, 1.0) : 0.5;
  f.source = str(j, "source");
  f.summary = str(j, "summary");
  if (j.contains("evidence") && j["evidence"].is_object()) f.evidence = j["evidence"];
  if (j.contains("limiter")) {
    std::string l = str(j, "limiter");
    f.limiter = limiterFromString(l);
    if (!f.limiter) throw UserError(fmt::format("{}: '{}' is not an occupancy limiter", what, l));
  }
  if (j.contains("suggestions") && j["suggestions"].is_array()) {
    for (const auto& s : j["suggestions"]) {
      std::string name = s.is_string() ? s.get<std::string>() : s.is_object() ? str(s, "pass") : "";
      auto p = passNameFromString(name);
      if (!p) throw UserError(fmt::format("{}: suggestion '{}' is not a pass", what, name));
      f.suggestions.push_back(*p);
    }
  }
  return f;
}

nlohmann::json EngineDiagnosis::toJson() const {
  nlohmann::json fs = nlohmann::json::array();
  for (const auto& f : findings) fs.push_back(f.toJson());
  return {{"kernel", kernel}, {"bottleneck", toString(bottleneck)}, {"findings", fs}};
}

EngineDiagnosis EngineDiagnosis::fromJson(const nlohmann::json& j, const std::string& what) {
  if (!j.is_object()) throw UserError(fmt::format("{}: a diagnosis must be a JSON object", what));
  EngineDiagnosis d;
  d.kernel = str(j, "kernel");
  if (d.kernel.empty()) d.kernel = str(j, "name");
  std::string b = str(j, "bottleneck");
  if (!b.empty()) {
    auto parsed = bottleneckFromString(b);
    if (!parsed) throw UserError(fmt::format("{}: '{}' is not a bottleneck", what, b));
    d.bottleneck = *parsed;
  }
  if (j.contains("findings") && j["findings"].is_array()) {
    for (const auto& f : j["findings"]) {
      EngineFinding x = EngineFinding::fromJson(f, what);
      if (x.kernel.empty()) x.kernel = d.kernel;
      if (x.source.empty()) x.source = "diagnosis";
      d.findings.push_back(std::move(x));
    }
  }
  return d;
}

nlohmann::json EngineInput::toJson() const {
  nlohmann::json j;
  j["protocol"] = kEngineProtocol;
  j["round"] = round;
  j["source"] = source;
  nlohmann::json tun = nlohmann::json::array();
  nlohmann::json kernels = nlohmann::json::object();
  if (tunables) {
    for (const auto& t : tunables->items) {
      nlohmann::json x = {{"id", t.id},           {"kernel", t.kernel}, {"param", t.param},
                          {"role", toString(t.role)}, {"origin", toString(t.origin)}, {"tunable", t.tunable}};
      if (t.value) x["value"] = *t.value;
      if (space) {
        for (const auto& d : space->dims()) {
          if (d.tunable->id != t.id) continue;
          nlohmann::json dom = nlohmann::json::array();
          for (int64_t v : d.values) dom.push_back(v == kKeep ? nlohmann::json("as-written") : nlohmann::json(v));
          x["domain"] = dom;
        }
      }
      tun.push_back(x);
    }
    for (const auto& [name, f] : tunables->facts) {
      nlohmann::json params = nlohmann::json::object();
      for (const auto& [p, u] : f.params) {
        params[p] = {{"tile_extent", u.tile_extent}, {"pid_scaled", u.pid_scaled}, {"loop_stepped", u.loop_stepped},
                     {"dot_role", u.dot_role}};
      }
      kernels[name] = {{"dots", f.dots.size()},
                       {"loops", f.loops},
                       {"loads", f.loads},
                       {"stores", f.stores},
                       {"atomics", f.atomics},
                       {"reductions", f.reductions},
                       {"calls_exp", f.calls_exp},
                       {"calls_exp2", f.calls_exp2},
                       {"helper_dots_in_loops", f.helper_dots_in_loops},
                       {"helper_calls_exp", f.helper_calls_exp},
                       {"launcher_sums", f.launcher_sums},
                       {"launcher_converts", f.launcher_converts},
                       {"params", params}};
    }
  }
  j["tunables"] = tun;
  j["kernels"] = kernels;
  nlohmann::json diag = nlohmann::json::array();
  for (const auto& d : diagnosis) diag.push_back(d.toJson());
  j["diagnosis"] = diag;
  if (best) {
    j["best"] = {{"config", configJson(*best)}, {"kernels", best_kernels}, {"case_kernels", case_kernels}};
    if (best_objective) j["best"]["objective"] = *best_objective;
  } else {
    j["best"] = nullptr;
  }
  nlohmann::json hist = nlohmann::json::array();
  for (const auto& o : history) {
    hist.push_back({{"config", configJson(o.config)}, {"objective", o.objective ? nlohmann::json(*o.objective) : nullptr}});
  }
  j["history"] = hist;
  j["passes"] = passes;
  j["budget_left_s"] = budget_left_s;
  j["task"] = task;
  j["attempts"] = attempts;
  return j;
}

nlohmann::json Proposal::toJson() const {
  const char* k = kind == Kind::kRegion ? "region" : kind == Kind::kPass ? "pass" : "rewrite";
  nlohmann::json j = {{"kind", k}, {"findings", findings}, {"rationale", rationale}};
  if (!id.empty()) j["id"] = id;
  if (kind == Kind::kRegion) {
    nlohmann::json r = nlohmann::json::object();
    for (const auto& [k, vs] : region) {
      nlohmann::json a = nlohmann::json::array();
      for (int64_t v : vs) a.push_back(v == kKeep ? nlohmann::json("as-written") : nlohmann::json(v));
      r[k] = a;
    }
    j["region"] = r;
    j["share"] = share;
  } else if (kind == Kind::kRewrite) {
    j["source"] = source;
  } else {
    j["pass"] = pass;
    j["kernel"] = kernel;
    j["params"] = params;
    if (retune) j["retune"] = true;
  }
  return j;
}

Proposal Proposal::fromJson(const nlohmann::json& j, const std::string& what) {
  if (!j.is_object()) throw UserError(fmt::format("{}: a proposal must be a JSON object", what));
  Proposal p;
  std::string kind = j.value("kind", "");
  if (kind == "region") p.kind = Proposal::Kind::kRegion;
  else if (kind == "pass") p.kind = Proposal::Kind::kPass;
  else if (kind == "rewrite") p.kind = Proposal::Kind::kRewrite;
  else throw UserError(fmt::format("{}: proposal kind '{}' is not 'region', 'pass' or 'rewrite'", what, kind));
  p.rationale = j.value("rationale", "");
  if (j.contains("findings") && j["findings"].is_array()) {
    for (const auto& f : j["findings"]) if (f.is_string()) p.findings.push_back(f.get<std::string>());
  }
  if (p.kind == Proposal::Kind::kRegion) {
    if (!j.contains("region") || !j["region"].is_object()) {
      throw UserError(fmt::format("{}: a region proposal needs a 'region' object (tunable id -> values)", what));
    }
    for (const auto& [id, vals] : j["region"].items()) {
      if (!vals.is_array()) throw UserError(fmt::format("{}: region values of '{}' must be a list", what, id));
      std::vector<int64_t> vs;
      for (const auto& v : vals) {
        if (v.is_number_integer()) vs.push_back(v.get<int64_t>());
        else if (v == "as-written") vs.push_back(kKeep);
        else throw UserError(fmt::format("{}: region value {} of '{}' is not an integer", what, v.dump(), id));
      }
      p.region[id] = vs;
    }
    p.share = std::clamp(j.value("share", 0.25), 0.0, 1.0);
  } else if (p.kind == Proposal::Kind::kRewrite) {
    auto src = j.find("source");
    if (src == j.end() || !src->is_string() || src->get<std::string>().empty()) {
      throw UserError(fmt::format("{}: a rewrite proposal needs the whole module in 'source'", what));
    }
    p.source = src->get<std::string>();
  } else {
    p.pass = PassId(j.value("pass", ""));
    if (p.pass.empty()) throw UserError(fmt::format("{}: a pass proposal needs a 'pass' name", what));
    p.kernel = j.value("kernel", "");
    if (j.contains("params")) p.params = j["params"];
    p.retune = j.value("retune", false);
  }
  return p;
}

nlohmann::json EngineOutput::toJson() const {
  nlohmann::json fs = nlohmann::json::array(), ps = nlohmann::json::array();
  for (const auto& f : findings) fs.push_back(f.toJson());
  for (const auto& p : proposals) ps.push_back(p.toJson());
  nlohmann::json j = {{"findings", fs}, {"proposals", ps}};
  if (!error.empty()) j["error"] = error;
  return j;
}

EngineOutput EngineOutput::fromJson(const nlohmann::json& j, const std::string& what) {
  if (!j.is_object()) throw UserError(fmt::format("{}: the answer must be a JSON object", what));
  EngineOutput out;
  if (j.contains("findings")) {
    if (!j["findings"].is_array()) throw UserError(fmt::format("{}: 'findings' must be a list", what));
    for (const auto& f : j["findings"]) out.findings.push_back(EngineFinding::fromJson(f, what));
  }
  if (j.contains("proposals")) {
    if (!j["proposals"].is_array()) throw UserError(fmt::format("{}: 'proposals' must be a list", what));
    for (size_t i = 0; i < j["proposals"].size(); ++i) {
      out.proposals.push_back(Proposal::fromJson(j["proposals"][i], fmt::format("{}: proposal {}", what, i + 1)));
    }
  }
  return out;
}

std::vector<int64_t> valuesWhere(const Space& space, const std::string& tunable_id,
                                 const std::function<bool(int64_t)>& keep) {
  std::vector<int64_t> out;
  for (const auto& d : space.dims()) {
    if (d.tunable->id != tunable_id) continue;
    for (int64_t v : d.values) {
      if (v != kKeep && keep(v)) out.push_back(v);
    }
  }
  return out;
}

namespace {

class NoEngine final : public ReasoningEngine {
 public:
  std::string name() const override { return "none"; }
  EngineOutput propose(const EngineInput&) override { return {}; }
};

// Runs `command` through /bin/sh once per round.
class ExternalEngine final : public ReasoningEngine {
 public:
  explicit ExternalEngine(std::string command) : command_(std::move(command)) {}
  std::string name() const override { return "cmd:" + command_; }

  EngineOutput propose(const EngineInput& input) override {
    EngineOutput out;
    SpawnOptions o;
    o.argv = {"/bin/sh", "-c", command_};
    CommandResult r;
    // At most a minute, and never past what is left of the search's budget.
    double limit_s = std::clamp(input.budget_left_s, 1.0, 60.0);
    if (input.budget_left_s == 0) limit_s = 60.0;  // no budget given (a direct call)
    try {
      r = runCommand(o, std::chrono::milliseconds(static_cast<int64_t>(limit_s * 1000)), input.toJson().dump() + "\n");
    } catch (const std::exception& e) {
      out.error = fmt::format("the engine '{}' did not start: {}", command_, e.what());
      return out;
    }
    if (r.timed_out) {
      out.error = fmt::format("the engine '{}' gave no answer within {:.0f} s", command_, limit_s);
      return out;
    }
    if (!r.ok()) {
      std::string err = r.err.substr(0, 300);
      out.error = fmt::format("the engine '{}' failed ({}){}", command_, describeWaitStatus(r.status),
                              err.empty() ? "" : ": " + err);
      return out;
    }
    nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
    if (j.is_discarded()) {
      out.error = fmt::format("the engine '{}' answered something that is not JSON: {}", command_,
                              r.out.substr(0, 200));
      return out;
    }
    try {
      out = EngineOutput::fromJson(j, "engine '" + command_ + "'");
    } catch (const UserError& e) {
      out = EngineOutput{};
      out.error = e.what();
    }
    for (auto& f : out.findings) if (f.source.empty()) f.source = "engine";
    return out;
  }

 private:
  std::string command_;
};

}  // namespace

std::optional<std::string> llmModelOf(const std::string& spec) {
  if (spec.rfind("llm:", 0) != 0) return std::nullopt;
  std::string model = spec.substr(4);
  if (model.empty() || model.find_first_not_of(" \t") == std::string::npos) {
    throw UserError("--engine llm: needs a model name (llm:MODEL, as the endpoint knows it)");
  }
  return model;
}

void checkLlmSettings(const EngineSettings& settings) {
  const std::string& url = settings.llm_endpoint;
  if (url.empty()) {
    throw UserError("--engine llm:MODEL needs an endpoint: --llm-endpoint URL or $TRITONFORGE_LLM_ENDPOINT");
  }
  bool http = url.rfind("http://", 0) == 0 && url.size() > 7;
  bool https = url.rfind("https://", 0) == 0 && url.size() > 8;
  if ((!http && !https) || url.find_first_of(" \t\n") != std::string::npos) {
    throw UserError(fmt::format("--llm-endpoint '{}' is not an http:// or https:// URL", url));
  }
  if (settings.llm_max_requests < 1) {
    throw UserError(fmt::format("--llm-max-requests must be 1 or more, not {}", settings.llm_max_requests));
  }
}

std::unique_ptr<ReasoningEngine> makeEngine(const std::string& spec, const EngineSettings& settings) {
  if (spec == "rules") return makeRuleEngine();
  if (spec == "none") return std::make_unique<NoEngine>();
  if (spec.rfind("cmd:", 0) == 0 && spec.size() > 4) return std::make_unique<ExternalEngine>(spec.substr(4));
  if (auto model = llmModelOf(spec)) {
    checkLlmSettings(settings);
    return makeLlmEngine(*model, settings);
  }
  throw UserError(fmt::format("unknown engine '{}' (known: rules, none, cmd:PROGRAM [ARGS], llm:MODEL)", spec));
}

}  // namespace tf

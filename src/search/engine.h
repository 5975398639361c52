// The reasoning engine: between rounds of the optimization loop it reads what is known
// (the source, its IR facts, the diagnosis when there is one, the measured facts of the
// best variant, the history) and proposes what to try next: parameter regions now, named
// transformation passes with parameters as src/transform/ provides them. The loop turns
// regions into a share of the next round's configurations and passes into new variants;
// it traces which finding led to which proposal and what each proposal won or lost.
//
// Engines: "rules" (built in, search/rule_engine.cpp), "none", "cmd:PROGRAM ARGS", an
// external program that gets EngineInput as JSON on stdin and answers EngineOutput as JSON
// on stdout (docs/engine.md), and "llm:MODEL" (search/llm_engine.cpp), a language model
// behind an OpenAI-compatible endpoint, asked through the worker's `llm` op. Any engine may
// also propose a rewrite of the whole module; the loop guards, compiles, verifies and times
// it like every other variant.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "diagnose/diagnosis.h"
#include "diagnose/vocabulary.h"
#include "search/space.h"
#include "search/strategy.h"
#include "worker/worker_process.h"

namespace tf {

inline constexpr const char* kEngineProtocol = "tritonforge.engine/1";

// One thing that holds a kernel back, with its evidence. Kinds, limiters and suggested
// passes are diagnose/vocabulary.h's.
struct EngineFinding {
  std::string id;                          // "F3": set by the loop, unique within a run
  FindingKind kind = FindingKind::kLatencyBound;
  std::string kernel;
  double severity = 0.5;                   // [0, 1]
  std::string source;                      // "diagnosis", "measurement", "static", or an engine's name
  std::string summary;                     // one line
  std::optional<Limiter> limiter;          // low-occupancy: what limits it
  nlohmann::json evidence = nlohmann::json::object();
  std::vector<PassName> suggestions;       // passes the diagnosis suggests
  nlohmann::json toJson() const;
  // Throws UserError naming `what` for a kind, limiter or pass outside the vocabulary.
  static EngineFinding fromJson(const nlohmann::json& j, const std::string& what = "finding");
};

// What the diagnosis stage (src/diagnose/) hands the loop for one kernel.
struct EngineDiagnosis {
  std::string kernel;
  Bottleneck bottleneck = Bottleneck::kUnknown;
  std::vector<EngineFinding> findings;
  nlohmann::json toJson() const;
  static EngineDiagnosis fromJson(const nlohmann::json& j, const std::string& what = "diagnosis");
};

struct EngineInput {
  int round = 0;
  std::string source;                      // the source the parameters apply to (the current base)
  const TunableSet* tunables = nullptr;    // IR facts: tunables and per-kernel facts
  const Space* space = nullptr;
  std::vector<EngineDiagnosis> diagnosis;        // empty: no diagnosis ran
  std::optional<Config> best;              // the best measured configuration of this base
  std::optional<double> best_objective;    // geomean over cases of time / time as written
  nlohmann::json best_kernels = nlohmann::json::array();   // compiled facts of the best: regs, smem, spills
  // The same per case (the launch's constexprs, warps, registers, spills of each case): a
  // block computed from the shape differs between cases, and so may the spills.
  nlohmann::json case_kernels = nlohmann::json::array();
  std::vector<Observation> history;        // this base's measurements
  std::vector<PassId> passes;              // passes the loop can apply now (PassApplier::enabled)
  double budget_left_s = 0;
  // The task: launcher name, cases, the roofline time of each case where known.
  nlohmann::json task = nlohmann::json::object();
  // What became of the engine's earlier pass and rewrite proposals that failed: the
  // proposal, its kind, the status (refused, compile-error, wrong-result, ...) and the
  // error, so that an engine can repair its rewrite.
  nlohmann::json attempts = nlohmann::json::array();
  nlohmann::json toJson() const;
};

// What an engine asks the loop to try.
struct Proposal {
  enum class Kind { kRegion, kPass, kRewrite };
  Kind kind = Kind::kRegion;
  std::string id;                          // "P2": set by the loop
  std::vector<std::string> findings;       // ids (or, from an engine, kinds) of the findings behind it
  std::string rationale;                   // one line: why
  // kRegion: the strategy spends `share` of the next round inside `region`.
  Region region;
  double share = 0.25;
  // kPass: apply `pass` with `params` to `kernel` of the current base.
  PassId pass;
  std::string kernel;
  nlohmann::json params = nlohmann::json::object();
  // kPass: the pass moves the best parameters (an operand's layout sets the tiles and warps
  // that suit it), so a variant slower on the current best configuration by a bounded margin
  // is tuned as a base on trial while the run is young, instead of being dropped.
  bool retune = false;
  // kRewrite: the whole module (kernels and launcher) rewritten; guarded (the worker's
  // `guard` op), then compiled, verified and timed as a variant.
  std::string source;
  nlohmann::json toJson() const;
  // Throws UserError naming `what` for a malformed proposal.
  static Proposal fromJson(const nlohmann::json& j, const std::string& what);
};

struct EngineOutput {
  std::vector<EngineFinding> findings;           // what the engine concluded (traced once each)
  std::vector<Proposal> proposals;
  std::string error;                       // set when an external engine failed (the round goes on without it)
  nlohmann::json toJson() const;
  static EngineOutput fromJson(const nlohmann::json& j, const std::string& what);
};

class ReasoningEngine {
 public:
  virtual ~ReasoningEngine() = default;
  virtual std::string name() const = 0;
  // Called before each round. Returning nothing leaves the round to the strategy.
  // Failures of an external engine are reported in the output's findings, not thrown.
  virtual EngineOutput propose(const EngineInput& input) = 0;
  // What the engine spent (requests, tokens), for result.json; null for engines that spend nothing.
  virtual nlohmann::json usage() const { return nullptr; }
};

// What the engines that need more than their name are built with.
struct EngineSettings {
  WorkerOptions worker;                    // llm: the worker that runs the `llm` op
  std::string llm_endpoint;                // llm: base URL of an OpenAI-compatible API (http or https)
  int llm_max_requests = 8;                // llm: requests per run, retries and repairs included
  double llm_timeout_s = 60;               // llm: one request
};

// The model of "llm:MODEL" (nullopt for another engine). Throws UserError for "llm:" alone.
std::optional<std::string> llmModelOf(const std::string& spec);
// Throws UserError for an endpoint that is not an http(s) URL or a request cap below 1.
void checkLlmSettings(const EngineSettings& settings);

// "rules" (default), "none", "cmd:PROGRAM [ARGS...]" or "llm:MODEL". Throws UserError otherwise.
std::unique_ptr<ReasoningEngine> makeEngine(const std::string& spec, const EngineSettings& settings = {});
std::unique_ptr<ReasoningEngine> makeRuleEngine();
std::unique_ptr<ReasoningEngine> makeLlmEngine(const std::string& model, const EngineSettings& settings);

// Helpers for engines: the values of a dimension of `space` that satisfy `keep`.
std::vector<int64_t> valuesWhere(const Space& space, const std::string& tunable_id,
                                 const std::function<bool(int64_t)>& keep);

}  // namespace tf

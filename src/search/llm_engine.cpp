// The language-model engine, "llm:MODEL" (docs/engine.md): each round it hands the worker's
// `llm` op (python/tritonforge_worker/llm_client.py) the EngineInput, with what became of
// its earlier proposals, and reads the model's answer as an EngineOutput: findings, regions,
// passes, or a rewrite of the whole module (which the loop guards, compiles, verifies and
// times like any variant). The HTTP is Python's (the binary links no HTTP or TLS library);
// the API key stays in the environment the worker inherits ($TRITONFORGE_LLM_API_KEY, else
// $OPENAI_API_KEY): this file never reads it, so nothing here can print, trace or store it.
//
// Spending is bounded: --llm-max-requests per run (retries and repairs count), each call of
// the op within its own deadline (a hung endpoint costs one deadline, then the round goes on
// without the engine), and the tokens the endpoint reports are summed into usage().
#include <fmt/format.h>

#include <algorithm>

#include "search/engine.h"
#include "util/error.h"
#include "worker/worker_client.h"

namespace tf {
namespace {

// Requests one round may spend: an answer, and two repairs or retries.
constexpr int kRequestsPerRound = 3;
// Errors kept for usage(): the first ones say what went wrong.
constexpr size_t kErrorsKept = 8;

class LlmEngine final : public ReasoningEngine {
 public:
  LlmEngine(std::string model, EngineSettings settings) : model_(std::move(model)), settings_(std::move(settings)) {
    requests_left_ = settings_.llm_max_requests;
  }

  std::string name() const override { return "llm:" + model_; }

  EngineOutput propose(const EngineInput& input) override {
    EngineOutput out;
    if (requests_left_ <= 0) return out;  // the cap is spent: the strategy alone decides
    if (!worker_) {
      WorkerOptions w = settings_.worker;
      w.name = "llm engine worker";
      w.hello_args = {{"probe_torch", false}};
      worker_ = std::make_unique<WorkerProcess>(w);
    }
    LlmRequest req;
    req.endpoint = settings_.llm_endpoint;
    req.model = model_;
    req.engine_input = input.toJson();
    req.feedback = feedback_;
    req.max_requests = std::min(requests_left_, kRequestsPerRound);
    req.timeout_s = settings_.llm_timeout_s;
    // Every request may time out, and backoff waits come between them; never more than half
    // of what is left of the search (a direct call, budget 0, has no such bound).
    req.deadline_s = req.timeout_s * req.max_requests + 5;
    if (input.budget_left_s > 0) req.deadline_s = std::clamp(input.budget_left_s / 2, 2.0, req.deadline_s);
    LlmReply reply = WorkerClient(*worker_).llm(req);
    ++rounds_;
    requests_left_ -= std::max(reply.requests, 1);
    requests_ += reply.requests;
    prompt_tokens_ += reply.prompt_tokens;
    completion_tokens_ += reply.completion_tokens;
    if (reply.answer.is_null()) {
      out.error = fmt::format("the model '{}' gave no usable answer: {}", model_, reply.error);
      note(out.error);
      return out;
    }
    try {
      out = EngineOutput::fromJson(reply.answer, "model '" + model_ + "'");
    } catch (const UserError& e) {
      out = EngineOutput{};
      out.error = e.what();
      note(out.error);
      // The next request says what was wrong with this answer.
      feedback_.push_back({{"round", input.round}, {"status", "malformed"}, {"errors", nlohmann::json::array({e.what()})}});
      return out;
    }
    ++answers_;
    for (auto& f : out.findings) {
      if (f.source.empty()) f.source = name();
    }
    return out;
  }

  nlohmann::json usage() const override {
    return {{"engine", name()},
            {"model", model_},
            {"rounds", rounds_},
            {"answers", answers_},
            {"requests", requests_},
            {"max_requests", settings_.llm_max_requests},
            {"prompt_tokens", prompt_tokens_},
            {"completion_tokens", completion_tokens_},
            {"errors", errors_}};
  }

 private:
  void note(const std::string& error) {
    if (errors_.size() < kErrorsKept) errors_.push_back(error);
  }

  std::string model_;
  EngineSettings settings_;
  std::unique_ptr<WorkerProcess> worker_;
  int requests_left_ = 0;
  int rounds_ = 0, answers_ = 0, requests_ = 0;
  int64_t prompt_tokens_ = 0, completion_tokens_ = 0;
  std::vector<std::string> errors_;
  nlohmann::json feedback_ = nlohmann::json::array();
};

}  // namespace

std::unique_ptr<ReasoningEngine> makeLlmEngine(const std::string& model, const EngineSettings& settings) {
  return std::make_unique<LlmEngine>(model, settings);
}

}  // namespace tf

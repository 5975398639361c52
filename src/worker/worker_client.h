// The worker's ops as typed functions: the one place that assembles a request and reads a
// reply (docs/worker-protocol.md documents the JSON underneath). Nothing outside this file
// builds a request's JSON.
//
//   WorkerClient client(process);
//   ParseReply p = client.parse({text, "kernel.py"});
//   CompileReply c = client.compile(request);          // ahead of time, no GPU needed
//   CompileOutcome w = client.warm({launch, cases});   // the launcher's own compile path
//   CaseMeasurement m = client.run(request);           // verify + time one case
//
// Every call takes the op's default timeout from OpTimeouts, or a shorter one the caller
// gives (the optimization loop passes what is left of its budget). Failures of the worker
// (a timeout, a crash) are values in the reply, never exceptions.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "worker/measurement.h"
#include "worker/target.h"
#include "worker/worker_process.h"

namespace tf {

// How long each op may take unless the caller says otherwise.
struct OpTimeouts {
  std::chrono::milliseconds parse{60000};
  std::chrono::milliseconds compile{300000};   // one kernel ahead of time: 22 s seen for a 256x256x128 tile
  std::chrono::milliseconds warm{180000};      // every kernel a launcher launches, every case
  std::chrono::milliseconds run{120000};       // one case: inputs, reference, verification, timing
  std::chrono::milliseconds ceilings{180000};  // a copy and a few library matmuls on the GPU
};

// A variant of a source, written to a file and imported under its own module name.
struct VariantRef {
  std::filesystem::path path;
  std::string module_name;
  std::string package;                              // the original's package ("" : none): loaded inside it
};

// What running a task's launcher needs: the variant, the launcher in it, the harness.
struct LaunchSpec {
  VariantRef variant;
  std::string launcher;
  std::filesystem::path harness;
  std::vector<std::filesystem::path> search_path;   // folders the variant and harness import from
  std::string direction = "forward";                // or "backward": the gradients are run and checked
};

// How outputs are checked against the harness's reference.
struct CheckArgs {
  std::optional<double> rtol, atol;                 // unset: the worker's default per dtype
  std::string reference_precision = "float64";
  std::vector<int> in_place;                        // inputs the launcher may modify
  std::vector<double> output_atol;                  // per output, in place of atol (task.h)
};

// How a case is timed.
struct TimingOptions {
  double budget_ms = 250;
  int min_reps = 10;
  int max_reps = 2000;
  bool flush_l2 = true;
  std::string method = "auto";                      // auto | events | graph
  // An @triton.autotune kernel is timed at the fastest of its pick and the next configurations
  // by its own benchmark (python/tritonforge_worker/autotune_pin.py). Part of the timing
  // settings, so part of a stored measurement's key: rows timed without it are not reused.
  bool pin_autotune = true;
  nlohmann::json toJson() const;
};

struct RunRequest {
  LaunchSpec launch;
  nlohmann::json case_values = nlohmann::json::object();   // the case's scalars
  std::vector<int> seeds{0};
  CheckArgs check;
  std::optional<TimingOptions> timing;              // nullopt: run once, untimed
  std::vector<std::string> asm_texts;               // compiled texts to return: "ttgir", "ptx"
  // Also profile one call of the launcher's whole GPU timeline (CaseMeasurement::timeline).
  bool timeline = false;
};

struct WarmRequest {
  LaunchSpec launch;
  std::vector<nlohmann::json> cases;
  // How long the worker may wait, retrying, for GPU memory that other processes hold (a CUDA
  // out-of-memory while it makes the inputs or runs the launcher); then the reply is not-run.
  double memory_wait_s = 0;
  // {i, n}: compile only the i-th of n interleaved shares of each @triton.autotune list (other
  // workers compile the others at the same time). nullopt: every configuration.
  std::optional<std::pair<int, int>> autotune_part;
};

// An ahead-of-time compile of one kernel (Triton's ASTSource + GPUTarget).
struct CompileRequest {
  std::filesystem::path path;
  std::string kernel;
  std::string module_name;                          // "" : the worker picks one
  std::vector<std::filesystem::path> search_path;
  std::string package;                              // the dotted package the module is loaded in ("": none)
  std::map<std::string, std::string> signature;     // parameter -> Triton type ("*fp16", "i32")
  nlohmann::json constexprs = nlohmann::json::object();   // parameter -> int | bool | null
  std::map<std::string, int> divisibility;          // parameter -> 16: the JIT's alignment hint
  std::map<std::string, int64_t> options;           // num_warps, num_stages, num_ctas, maxnreg
  Target target = kSm90Target;
  std::vector<std::string> want;                    // "ptx", "sass", "spills"
  // A Gluon companion's config (transform/pass.h, Companion): {"function", "args", "sets"}, or null.
  nlohmann::json config;
};

struct CompileReply {
  WorkerReply::Status worker = WorkerReply::Status::kOk;   // kOk or kFailed: the op answered
  std::string status;                               // "ok", "compile-error", "out-of-resources"
  std::string message;                              // for failures: "ErrorType: message"
  std::string error_type;
  std::optional<int64_t> shared_bytes;
  std::optional<int> registers;
  nlohmann::json result = nlohmann::json::object(); // the op's whole result (texts, cubin facts)
  bool answered() const { return worker == WorkerReply::Status::kOk || worker == WorkerReply::Status::kFailed; }
  bool ok() const { return worker == WorkerReply::Status::kOk && status == "ok"; }
};

struct ParseReply {
  WorkerReply::Status worker = WorkerReply::Status::kOk;
  nlohmann::json ast;                               // the Module node, when it parsed
  int line = 0, col = 0;                            // of a syntax error
  std::string message, detail;
  bool ok() const { return worker == WorkerReply::Status::kOk; }
  bool syntaxError() const { return worker == WorkerReply::Status::kFailed; }
};

struct CeilingsReply {
  bool ok = false;
  std::string message;
  double dram_bytes_per_s = 0;
  std::map<std::string, double> flops_per_s;        // "fp16", "bf16", "tf32", "fp32"
};

// The `guard` op: a rewrite of the module checked against the original (the launcher kept,
// a jit kernel launched, no torch compute, state, harness, files, network or processes).
struct GuardReply {
  bool answered = false;                            // the op ran (else `message` says why not)
  std::vector<std::string> reasons;                 // empty: accepted
  std::string message;
  bool accepted() const { return answered && reasons.empty(); }
};

// The `llm` op: one round of the language-model engine (python/tritonforge_worker/llm_client.py).
struct LlmRequest {
  std::string endpoint, model;
  nlohmann::json engine_input = nlohmann::json::object();
  nlohmann::json feedback = nlohmann::json::array();
  int max_requests = 1;                             // retries and repairs included
  double timeout_s = 60;                            // one request
  double deadline_s = 120;                          // the whole op
};

struct LlmReply {
  nlohmann::json answer;                            // the model's JSON object; null: none
  int requests = 0;
  int64_t prompt_tokens = 0, completion_tokens = 0;
  std::string error;                                // why there is no answer
  std::vector<std::string> events;
};

class WorkerClient {
 public:
  explicit WorkerClient(WorkerProcess& process, OpTimeouts timeouts = {}) : process_(process), timeouts_(timeouts) {}

  ParseReply parse(const std::string& text, const std::string& filename,
                   std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  CompileReply compile(const CompileRequest& request, std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  CompileOutcome warm(const WarmRequest& request, std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  // Imports the harness and the variant and makes each case's inputs, compiling nothing: a
  // compile worker pays its first compile's imports while the baseline is measured.
  WorkerReply preload(const WarmRequest& request, std::chrono::milliseconds timeout);
  CaseMeasurement run(const RunRequest& request, std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  CeilingsReply ceilings(std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  GuardReply guard(const std::string& source, const std::string& original, const std::string& launcher);
  // The op's own deadline plus a margin bounds the call: a hung op kills the worker.
  LlmReply llm(const LlmRequest& request);

  WorkerProcess& process() { return process_; }
  const OpTimeouts& timeouts() const { return timeouts_; }

 private:
  WorkerProcess& process_;
  OpTimeouts timeouts_;
};

// The request of the `profile_launch` op for one case, as the file `python -m
// tritonforge_worker --oneshot FILE` reads (Nsight Compute runs the worker that way).
nlohmann::json profileLaunchRequest(const RunRequest& request, int warmup);

// The JSON of each request (for the fuzz tests and the docs' examples).
nlohmann::json toJson(const RunRequest& request);
nlohmann::json toJson(const CompileRequest& request);
nlohmann::json toJson(const WarmRequest& request);

// What each op makes of the worker's reply: pure, so that the tests can give them any reply
// without a worker. `limit`: the timeout the request had (for the message of a timeout).
ParseReply parseReplyFrom(WorkerReply r);
CompileReply compileReplyFrom(WorkerReply r);
CompileOutcome warmOutcomeFrom(WorkerReply r, std::chrono::milliseconds limit);
CeilingsReply ceilingsReplyFrom(WorkerReply r);

}  // namespace tf

// The language-model engine ("llm:MODEL", src/search/llm_engine.cpp) against the scripted
// OpenAI-compatible server of tests/support/: its answers become proposals, its spending is
// counted and capped, a malformed answer or a hanging server is an engine error (the run
// goes on), rewrites are guarded (a cheat is refused and traced), compiled, verified and
// timed, and a failed one goes back to the model; the API key appears in no output. Also:
// the flags' bad values (one line, exit 2), and `optimize --dry-run`.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <iterator>

#include "search/engine.h"
#include "support/test_support.h"
#include "util/error.h"

namespace tf {
namespace {

namespace fs = std::filesystem;

// The endpoint of the environment would change what these tests mean.
void expectOneLineError(const std::string& args, const std::string& needle) {
  test::expectOneLineError("env -u TRITONFORGE_LLM_ENDPOINT " + test::tritonforgeBinary().string() + " " + args, needle);
}

std::string softmaxTask() { return (test::sourceDir() / "examples/softmax/task.toml").string(); }

TEST(LlmFlags, ModelEndpointAndRequestCapAreChecked) {
  expectOneLineError("optimize " + softmaxTask() + " --engine llm:", "--engine llm: needs a model name");
  expectOneLineError("optimize " + softmaxTask() + " --engine llm:gpt-x",
                     "needs an endpoint: --llm-endpoint URL or $TRITONFORGE_LLM_ENDPOINT");
  expectOneLineError("optimize " + softmaxTask() + " --engine llm:gpt-x --llm-endpoint ftp://host/v1",
                     "--llm-endpoint 'ftp://host/v1' is not an http:// or https:// URL");
  expectOneLineError("optimize " + softmaxTask() + " --engine llm:gpt-x --llm-endpoint localhost:8000",
                     "is not an http:// or https:// URL");
  expectOneLineError("optimize " + softmaxTask() + " --engine llm:gpt-x --llm-endpoint http://h --llm-max-requests 0",
                     "--llm-max-requests must be 1 or more, not 0");
  expectOneLineError("optimize " + softmaxTask() + " --llm-max-requests -3", "--llm-max-requests must be 1 or more, not -3");
  expectOneLineError("optimize " + softmaxTask() + " --engine llm:m --llm-endpoint http://h --llm-timeout 0",
                     "--llm-timeout");
  expectOneLineError("optimize " + softmaxTask() + " --engine gpt", "unknown engine 'gpt' (known: rules, none, "
                                                                      "cmd:PROGRAM [ARGS], llm:MODEL)");
}

TEST(LlmFlags, TheEndpointComesFromTheEnvironment) {
  auto [rc, out] = test::runShell("TRITONFORGE_LLM_ENDPOINT=gopher://x " + test::tritonforgeBinary().string() +
                                  " optimize " + softmaxTask() + " --engine llm:m");
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("--llm-endpoint 'gopher://x' is not an http:// or https:// URL"), std::string::npos) << out;
}

TEST(EngineJsonRewrite, ARewriteRoundTripsAndNeedsItsSource) {
  nlohmann::json j = {{"proposals", {{{"kind", "rewrite"}, {"source", "def f():\n    pass\n"}, {"rationale", "r"}}}}};
  EngineOutput out = EngineOutput::fromJson(j, "test");
  ASSERT_EQ(out.proposals.size(), 1u);
  EXPECT_EQ(out.proposals[0].kind, Proposal::Kind::kRewrite);
  EXPECT_EQ(out.proposals[0].source, "def f():\n    pass\n");
  EXPECT_EQ(out.proposals[0].toJson()["kind"], "rewrite");
  EXPECT_EQ(out.proposals[0].toJson()["source"], "def f():\n    pass\n");
  nlohmann::json empty = {{"proposals", {{{"kind", "rewrite"}, {"source", ""}}}}};
  EXPECT_THROW(EngineOutput::fromJson(empty, "test"), UserError);
  nlohmann::json magic = {{"proposals", {{{"kind", "magic"}}}}};
  EXPECT_THROW(EngineOutput::fromJson(magic, "test"), UserError);
}

EngineSettings settingsFor(const std::string& endpoint, int max_requests, double timeout_s = 20) {
  EngineSettings s;
  s.worker = test::workerOptions(false);
  s.llm_endpoint = endpoint;
  s.llm_max_requests = max_requests;
  s.llm_timeout_s = timeout_s;
  return s;
}

EngineInput someInput() {
  EngineInput in;
  in.round = 1;
  in.source = test::kAddKernelSource;
  in.task = {{"launcher", "add"}, {"cases", {{{"N", 4096}}}}};
  return in;
}

const char* kRegionAnswer =
    R"({"findings": [{"kind": "small-grid", "kernel": "add_kernel", "severity": 0.6, "summary": "few programs"}],
        "proposals": [{"kind": "region", "region": {"add_kernel.BLOCK": [256, 512]}, "share": 0.3,
                       "findings": ["small-grid"], "rationale": "larger blocks"}]})";

TEST(LlmEngine, AnAnswerBecomesProposalsAndItsTokensAreCounted) {
  test::ScriptedLlmServer server(nlohmann::json::array({{{"content", kRegionAnswer}, {"usage", {{"prompt_tokens", 700}, {"completion_tokens", 80}}}}}));
  auto engine = makeEngine("llm:scripted-model", settingsFor(server.endpoint(), 8));
  EXPECT_EQ(engine->name(), "llm:scripted-model");
  EngineOutput out = engine->propose(someInput());
  ASSERT_TRUE(out.error.empty()) << out.error;
  ASSERT_EQ(out.proposals.size(), 1u);
  EXPECT_EQ(out.proposals[0].region.at("add_kernel.BLOCK"), (std::vector<int64_t>{256, 512}));
  ASSERT_EQ(out.findings.size(), 1u);
  EXPECT_EQ(out.findings[0].source, "llm:scripted-model");
  nlohmann::json usage = engine->usage();
  EXPECT_EQ(usage["requests"], 1);
  EXPECT_EQ(usage["prompt_tokens"], 700);
  EXPECT_EQ(usage["completion_tokens"], 80);
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0]["model"], "scripted-model");
  EXPECT_EQ(reqs[0]["path"], "/v1/chat/completions");
  // The model sees the source and the task's cases.
  std::string user = reqs[0]["messages"][1]["content"];
  EXPECT_NE(user.find("add_kernel[(triton.cdiv(n, 128),)]"), std::string::npos);
  EXPECT_NE(user.find("\"launcher\": \"add\""), std::string::npos);
}

TEST(LlmEngine, AnAnswerOutsideTheVocabularyIsAnErrorThatGoesBackToTheModel) {
  test::ScriptedLlmServer server(nlohmann::json::array({{{"content", R"({"findings": [{"kind": "too-slow"}]})"}}, {{"content", kRegionAnswer}}}));
  auto engine = makeEngine("llm:m", settingsFor(server.endpoint(), 8));
  EngineOutput first = engine->propose(someInput());
  EXPECT_NE(first.error.find("'too-slow' is not a finding kind"), std::string::npos) << first.error;
  EXPECT_TRUE(first.proposals.empty());
  EngineOutput second = engine->propose(someInput());
  EXPECT_TRUE(second.error.empty()) << second.error;
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 2u);
  std::string user = reqs[1]["messages"][1]["content"];
  EXPECT_NE(user.find("too-slow"), std::string::npos) << "the second request names what was wrong";
}

TEST(LlmEngine, AHangingServerIsAnErrorWithinTheTimeout) {
  test::ScriptedLlmServer server(nlohmann::json::array({{{"delay_s", 60}, {"content", kRegionAnswer}}}));
  auto engine = makeEngine("llm:m", settingsFor(server.endpoint(), 2, 1.0));
  auto t0 = std::chrono::steady_clock::now();
  EngineOutput out = engine->propose(someInput());
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(out.error.find("no reply within"), std::string::npos) << out.error;
  EXPECT_LT(s, 20.0);
  EXPECT_EQ(engine->usage()["requests"], 2);
}

TEST(LlmEngine, A429StormSpendsTheCapAndThenTheEngineIsSilent) {
  test::ScriptedLlmServer server(nlohmann::json::array({{{"status", 429}, {"headers", {{"Retry-After", "0"}}}}}));
  auto engine = makeEngine("llm:m", settingsFor(server.endpoint(), 4));
  EngineOutput first = engine->propose(someInput());   // 3 requests: a round's share
  EXPECT_NE(first.error.find("HTTP 429"), std::string::npos) << first.error;
  EngineOutput second = engine->propose(someInput());  // the 4th, the last allowed
  EXPECT_NE(second.error.find("HTTP 429"), std::string::npos) << second.error;
  EngineOutput third = engine->propose(someInput());   // nothing left: no request, no error
  EXPECT_TRUE(third.error.empty());
  EXPECT_TRUE(third.proposals.empty());
  EXPECT_EQ(server.requests().size(), 4u);
  EXPECT_EQ(engine->usage()["requests"], 4);
}

// --- the loop end to end: the fake GPU worker measures, the scripted server answers

std::string replace(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? s : s.replace(at, from.size(), to);
}

nlohmann::json rewriteReply(const std::string& source, const std::string& why) {
  nlohmann::json answer = {{"proposals", {{{"kind", "rewrite"}, {"source", source}, {"rationale", why}}}}};
  return {{"content", answer.dump()}, {"usage", {{"prompt_tokens", 1000}, {"completion_tokens", 200}}}};
}

std::vector<nlohmann::json> eventsOf(const nlohmann::json& trace, const std::string& kind) {
  std::vector<nlohmann::json> out;
  for (const auto& e : trace) {
    if (e["kind"] == kind) out.push_back(e["data"]);
  }
  return out;
}

TEST(LlmLoop, CheatsAreRefusedBrokenRewritesGoBackAndAGoodOneWinsWithoutLeakingTheKey) {
  const std::string key = "sk-tf-test-SECRET-4242";
  const std::string cheat = replace(test::kAddKernelSource, "    return out\n", "    return torch.add(x, y)\n");
  const std::string broken = replace(test::kAddKernelSource, "    return out\n", "    return out  # broken-rewrite\n");
  const std::string good = replace(test::kAddKernelSource, "    return out\n", "    return out  # fast\n");
  test::ScriptedLlmServer server(nlohmann::json::array({rewriteReply(cheat, "let torch add"), rewriteReply(broken, "a typo"),
                                  rewriteReply(good, "the fast one"),
                                  {{"content", R"({"proposals": []})"}, {"usage", {{"prompt_tokens", 1000}, {"completion_tokens", 200}}}}}));
  fs::path dir = test::writeAddTask("llm-loop", "[ { N = 1048576 }, { N = 4096 } ]");
  std::string fake = (test::sourceDir() / "tests/worker_fakes/fake_gpu_python").string();
  // TF_FAKE_FLAT: every variant takes 1 ms, so that only the "# fast" rewrite can win.
  std::string cmd = "env -u OPENAI_API_KEY TRITONFORGE_LLM_API_KEY=" + key + " TF_FAKE_REAL_PYTHON=" + choosePython("") +
                    " TF_FAKE_FLAT=1 TF_FAKE_COMPILE_ERROR=broken-rewrite " + test::tritonforgeBinary().string() + " --python " + fake +
                    " optimize " + (dir / "task.toml").string() + " --db " + (dir / "results.sqlite").string() +
                    " --out " + (dir / "out").string() + " --jobs 2 --batch 4 --budget 300 --strategy exhaustive" +
                    " --stall-rounds 0 --max-candidates 40 --engine llm:scripted --llm-endpoint " + server.endpoint() +
                    " --llm-max-requests 6 --json";
  auto [rc, out] = test::runShell(cmd);
  ASSERT_EQ(rc, 0) << out;
  nlohmann::json result = nlohmann::json::parse(test::readFile(dir / "out/add/result.json"));
  const nlohmann::json& trace = result["trace"];

  // The cheat: refused by the guard, traced with its reason, never measured.
  auto refused = eventsOf(trace, "rewrite-refused");
  ASSERT_EQ(refused.size(), 1u) << trace.dump();
  EXPECT_EQ(refused[0]["status"], "refused");
  EXPECT_NE(refused[0]["reasons"].dump().find("computes with torch (torch.add)"), std::string::npos) << refused[0];
  // The broken rewrite: measured as a compile error, and its error is in the next request.
  auto requests = server.requests();
  ASSERT_GE(requests.size(), 3u);
  std::string second = requests[1]["messages"][1]["content"];
  std::string third = requests[2]["messages"][1]["content"];
  EXPECT_NE(second.find("computes with torch (torch.add)"), std::string::npos) << "the refusal goes back";
  EXPECT_NE(third.find("undefined_thing"), std::string::npos) << "the compile error goes back";
  EXPECT_NE(third.find("compile-error"), std::string::npos);
  // The good rewrite wins and becomes a base.
  auto trials = eventsOf(trace, "rewrite-trial");
  ASSERT_EQ(trials.size(), 2u);
  bool rewrite_base = false;
  for (const auto& b : result["search"]["bases"]) rewrite_base = rewrite_base || b.get<std::string>().find("pass rewrite") == 0;
  EXPECT_TRUE(rewrite_base) << result["search"]["bases"];
  EXPECT_EQ(result["status"], "improved");
  // Spending: every request counted, within the cap.
  const nlohmann::json& usage = result["search"]["engine_usage"];
  EXPECT_EQ(usage["requests"], static_cast<int>(requests.size()));
  EXPECT_LE(requests.size(), 6u);
  EXPECT_EQ(usage["prompt_tokens"], 1000 * static_cast<int>(requests.size()));
  EXPECT_EQ(usage["completion_tokens"], 200 * static_cast<int>(requests.size()));
  for (const auto& r : requests) EXPECT_TRUE(r["auth"].get<bool>());

  // The key: in no output, no file written, not in the results database.
  EXPECT_EQ(out.find(key), std::string::npos);
  for (const auto& entry : fs::recursive_directory_iterator(dir / "out")) {
    if (!entry.is_regular_file()) continue;
    EXPECT_EQ(test::readFile(entry.path()).find(key), std::string::npos) << entry.path();
  }
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().filename().string().rfind("results.sqlite", 0) == 0) {
      EXPECT_EQ(test::readFile(entry.path()).find(key), std::string::npos) << entry.path();
    }
  }
}

TEST(LlmLoop, AHangingEndpointCostsItsTimeoutsAndTheSearchGoesOnWithoutIt) {
  test::ScriptedLlmServer server(nlohmann::json::array({{{"delay_s", 60}, {"content", kRegionAnswer}}}));
  fs::path dir = test::writeAddTask("llm-hang", "[ { N = 1048576 } ]");
  std::string fake = (test::sourceDir() / "tests/worker_fakes/fake_gpu_python").string();
  auto [rc, out] = test::runShell(
      "TF_FAKE_REAL_PYTHON=" + choosePython("") + " " + test::tritonforgeBinary().string() + " --python " + fake +
      " optimize " + (dir / "task.toml").string() + " --no-db --out " + (dir / "out").string() +
      " --jobs 2 --batch 4 --budget 120 --strategy exhaustive --stall-rounds 0 --max-candidates 12" +
      " --engine llm:m --llm-endpoint " + server.endpoint() + " --llm-timeout 1 --llm-max-requests 2 --json");
  ASSERT_EQ(rc, 0) << out;
  nlohmann::json result = nlohmann::json::parse(test::readFile(dir / "out/add/result.json"));
  auto errors = eventsOf(result["trace"], "engine-error");
  ASSERT_EQ(errors.size(), 1u) << "traced once";
  EXPECT_NE(errors[0]["message"].get<std::string>().find("no reply within 1 s"), std::string::npos) << errors[0];
  EXPECT_EQ(result["search"]["engine_usage"]["requests"], 2);
  EXPECT_EQ(result["search"]["engine_usage"]["answers"], 0);
  EXPECT_GE(result["search"]["evaluated"].get<int>(), 8) << "the strategy searched on without the engine";
  EXPECT_EQ(server.requests().size(), 2u);
}

// --- the dry run: no GPU, nothing measured

TEST(DryRun, TheRuleEngineProposesFromStaticFactsAndNothingIsMeasured) {
  fs::path out_dir = test::tempDir("dry-rules");
  auto [rc, out] = test::runShell(test::tritonforgeBinary().string() + " optimize " + softmaxTask() +
                                  " --dry-run --json --out " + out_dir.string() + " 2>/dev/null");
  ASSERT_EQ(rc, 0) << out;
  nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["schema"], "tritonforge.dry-run/1");
  EXPECT_EQ(j["engine"], "rules");
  EXPECT_EQ(j["measured"], false);
  ASSERT_EQ(j["compile_checks"].size(), 1u);
  EXPECT_EQ(j["compile_checks"][0]["kernel"], "softmax_rows");
  EXPECT_EQ(j["compile_checks"][0]["status"], "ok") << j["compile_checks"];
  EXPECT_FALSE(j["compile_checks"][0]["result"].contains("ptx")) << "texts are not printed";
  ASSERT_EQ(j["diagnosis"].size(), 1u);
  EXPECT_EQ(j["diagnosis"][0]["kernel"], "softmax_rows");
  // The compiled facts (79 registers at 4 warps) say occupancy is register-limited; the rules
  // answer with a region of more warps.
  ASSERT_FALSE(j["diagnosis"][0]["findings"].empty()) << j["diagnosis"];
  EXPECT_EQ(j["diagnosis"][0]["findings"][0]["kind"], "low-occupancy");
  ASSERT_FALSE(j["proposals"].empty()) << j.dump(1);
  EXPECT_EQ(j["proposals"][0]["kind"], "region");
  EXPECT_TRUE(j["proposals"][0]["region"].contains("softmax_rows.num_warps")) << j["proposals"][0];
  EXPECT_FALSE(fs::exists(out_dir / "softmax")) << "a dry run writes no results";
}

TEST(DryRun, RewritesAreGuardedAndCompiled) {
  fs::path task_dir = test::tempDir("dry-llm");
  fs::copy(test::sourceDir() / "examples/softmax", task_dir, fs::copy_options::recursive);
  std::string src = test::readFile(task_dir / "softmax.py");
  std::string good = src + "\n# a comment the compiler ignores\n";
  std::string cheat = src + "\n\nimport os\n";
  nlohmann::json answer = {{"proposals", {{{"kind", "rewrite"}, {"source", good}, {"rationale", "same"}},
                                          {{"kind", "rewrite"}, {"source", cheat}, {"rationale", "sneaky"}}}}};
  test::ScriptedLlmServer server(nlohmann::json::array({{{"content", answer.dump()}}}));
  auto [rc, out] = test::runShell(test::tritonforgeBinary().string() + " optimize " + (task_dir / "task.toml").string() +
                                  " --dry-run --json --engine llm:m --llm-endpoint " + server.endpoint() + " 2>/dev/null");
  ASSERT_EQ(rc, 0) << out;
  nlohmann::json j = nlohmann::json::parse(out);
  ASSERT_EQ(j["proposals"].size(), 2u) << j.dump(1);
  EXPECT_EQ(j["proposals"][0]["guard"]["accepted"], true) << j["proposals"][0]["guard"];
  EXPECT_EQ(j["proposals"][0]["status"], "compiles") << j["proposals"][0].dump(1);
  EXPECT_EQ(j["proposals"][1]["guard"]["accepted"], false);
  EXPECT_EQ(j["proposals"][1]["status"], "refused");
  EXPECT_NE(j["proposals"][1]["guard"]["reasons"].dump().find("imports 'os'"), std::string::npos);
  EXPECT_EQ(j["engine_usage"]["requests"], 1);
}

}  // namespace
}  // namespace tf

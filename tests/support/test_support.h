// Helpers shared by the C++ tests.
#pragma once

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernel/ast.h"
#include "worker/worker_process.h"

namespace tf::test {

std::filesystem::path sourceDir();           // the repository ($TRITONFORGE_SOURCE_DIR overrides)
std::filesystem::path binaryDir();           // the build folder ($TRITONFORGE_BINARY_DIR overrides)
std::filesystem::path tritonforgeBinary();   // build/tritonforge
// A fresh empty folder under the system temp folder, removed at exit.
std::filesystem::path tempDir(const std::string& name);
// Worker options for the repository's worker and $TRITONFORGE_PYTHON (else python3).
WorkerOptions workerOptions(bool probe_torch = false);
// True when the worker's python sees a CUDA GPU (asked once).
bool gpuAvailable();
// Runs a shell command; returns {exit code, stdout+stderr}.
std::pair<int, std::string> runShell(const std::string& command);
std::string readFile(const std::filesystem::path& p);
// Parses Python source text with a shared worker (no triton needed).
ParsedSource parseText(const std::string& text, const std::string& name = "test.py");
void writeFile(const std::filesystem::path& p, const std::string& text);

// A one-kernel task source (an elementwise add, BLOCK=128 and 4 warps at its launch) for the
// command-line tests that run the fake GPU worker.
extern const char* const kAddKernelSource;
// A task folder (a fresh temp folder `name`) around kAddKernelSource: add.py, a harness whose
// reference adds, task.toml with `cases` (a TOML array of tables).
std::filesystem::path writeAddTask(const std::string& name, const std::string& cases);
// Runs the shell `command` and expects bad input: exit 2, one line that holds `needle`, no traceback.
void expectOneLineError(const std::string& command, const std::string& needle);

// The scripted OpenAI-compatible server of tests/support/scripted_llm_server.py on
// 127.0.0.1, serving `script` (a list of replies, docs in the script); stopped when destroyed.
class ScriptedLlmServer {
 public:
  explicit ScriptedLlmServer(const nlohmann::json& script);
  ~ScriptedLlmServer();
  std::string endpoint() const;                 // "http://127.0.0.1:PORT"
  std::vector<nlohmann::json> requests() const; // what came in, one object per request
 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tf::test

// Skips a test visibly where there is no GPU.
#define TF_REQUIRE_GPU()                                                                       \
  do {                                                                                         \
    if (!::tf::test::gpuAvailable())                                                           \
      GTEST_SKIP() << "needs a CUDA GPU (run `scripts/gpu-run.sh tests` on a GPU machine)";    \
  } while (0)

#include "support/test_support.h"
#include "task/source_parser.h"

#include <sys/wait.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "util/subprocess.h"

namespace tf::test {
namespace fs = std::filesystem;

// $TRITONFORGE_SOURCE_DIR / $TRITONFORGE_BINARY_DIR override the paths compiled in, so that
// a build folder carried to another machine (the GPU one) finds the repository there.
fs::path sourceDir() {
  const char* env = std::getenv("TRITONFORGE_SOURCE_DIR");
  return env && *env ? fs::path(env) : fs::path(TF_SOURCE_DIR);
}
fs::path binaryDir() {
  const char* env = std::getenv("TRITONFORGE_BINARY_DIR");
  return env && *env ? fs::path(env) : fs::path(TF_BINARY_DIR);
}
fs::path tritonforgeBinary() { return binaryDir() / "tritonforge"; }

fs::path tempDir(const std::string& name) {
  static int counter = 0;
  fs::path p = fs::temp_directory_path() / ("tf-test-" + std::to_string(getpid()) + "-" + name + "-" +
                                            std::to_string(counter++));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

WorkerOptions workerOptions(bool probe_torch) {
  WorkerOptions w;
  w.python = choosePython("");
  w.package_dir = sourceDir() / "python";
  w.hello_args = {{"probe_torch", probe_torch}};
  return w;
}

bool gpuAvailable() {
  static int cached = -1;
  if (cached < 0) {
    WorkerProcess w(workerOptions(true));
    WorkerReply r = w.ensureStarted();
    cached = r.ok() && w.helloInfo().contains("gpu") && w.helloInfo()["gpu"].is_object() ? 1 : 0;
  }
  return cached == 1;
}

std::pair<int, std::string> runShell(const std::string& command) {
  std::string full = command + " 2>&1";
  FILE* p = popen(full.c_str(), "r");
  if (!p) return {-1, ""};
  std::string out;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

ParsedSource parseText(const std::string& text, const std::string& name) {
  static WorkerProcess worker(workerOptions(false));
  return parseSource(worker, name, text);
}

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void writeFile(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << text;
}

const char* const kAddKernelSource = R"(import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(n, 128),)](x, y, out, n, BLOCK=128, num_warps=4)
    return out
)";

fs::path writeAddTask(const std::string& name, const std::string& cases) {
  fs::path dir = tempDir(name);
  writeFile(dir / "add.py", kAddKernelSource);
  writeFile(dir / "add_harness.py",
            "def make_inputs(case, seed):\n    raise NotImplementedError\n\n\ndef reference(x, y):\n    return x + y\n");
  writeFile(dir / "task.toml",
            "name = \"add\"\nsource = \"add.py\"\nlauncher = \"add\"\nharness = \"add_harness.py\"\n"
            "cases = " + cases + "\n");
  return dir;
}

void expectOneLineError(const std::string& command, const std::string& needle) {
  auto [rc, out] = runShell(command);
  EXPECT_EQ(rc, 2) << command << "\n" << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  EXPECT_NE(out.find(needle), std::string::npos) << "expected '" << needle << "' in: " << out;
  EXPECT_EQ(out.find("Traceback"), std::string::npos) << out;
}

struct ScriptedLlmServer::Impl {
  fs::path dir;
  std::unique_ptr<Subprocess> proc;
  int port = 0;
};

ScriptedLlmServer::ScriptedLlmServer(const nlohmann::json& script) : impl_(std::make_unique<Impl>()) {
  impl_->dir = tempDir("llm-server");
  writeFile(impl_->dir / "script.json", script.dump());
  SpawnOptions o;
  o.argv = {choosePython(""), (sourceDir() / "tests/support/scripted_llm_server.py").string(),
            (impl_->dir / "script.json").string(), (impl_->dir / "log.jsonl").string(),
            (impl_->dir / "port").string()};
  impl_->proc = std::make_unique<Subprocess>(Subprocess::spawn(o));
  for (int i = 0; i < 200 && !fs::exists(impl_->dir / "port"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (fs::exists(impl_->dir / "port")) impl_->port = std::stoi(readFile(impl_->dir / "port"));
}

ScriptedLlmServer::~ScriptedLlmServer() {
  if (impl_->proc) impl_->proc->waitOrKill(std::chrono::milliseconds(0));
}

std::string ScriptedLlmServer::endpoint() const { return "http://127.0.0.1:" + std::to_string(impl_->port); }

std::vector<nlohmann::json> ScriptedLlmServer::requests() const {
  std::vector<nlohmann::json> out;
  std::ifstream in(impl_->dir / "log.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  }
  return out;
}

}  // namespace tf::test

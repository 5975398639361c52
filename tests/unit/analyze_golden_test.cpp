// Golden tests of `analyze` over the corpus (tests/corpus/*.py): each NAME.facts file lists
// facts with their expected values, one per line, checked against the analysis JSON
// (schema tritonforge.analyze/2, docs/analyze.md).
//
// NAME.facts format (tests/corpus/README.md says the same):
//   # comment
//   @source other.py                 the source (default NAME.py)
//   @task ../../examples/x/task.toml analyse with this task (cases, harness, signature)
//   @compile                         also compile (needs Triton in the worker's Python)
//   @kernel NAME                     later paths are relative to this kernel's object
//   @config LABEL k=v ...            a configuration of the current kernel: k=INT (value),
//                                    k=TYPE (type, "*fp16", "i32"), k=TYPE:INT (both),
//                                    num_warps=, num_stages=, grid=AxBxC
//   PATH = JSON                      PATH: '/'-separated; an integer indexes an array,
//                                    key=value picks the array element whose key is value,
//                                    a leading '/' starts at the document root.
//
// TF_GOLDEN_DUMP=NAME prints NAME's analysis JSON (to read it when writing facts).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compile/source_analysis.h"
#include "kernel/module_ir.h"
#include "support/test_support.h"
#include "task/task.h"
#include "task/source_parser.h"
#include "worker/worker_client.h"
#include "worker/worker_process.h"

namespace tf {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path corpusDir() { return test::sourceDir() / "tests" / "corpus"; }

struct Fact {
  int line = 0;
  std::string kernel;
  std::string path;
  json expected;
};

struct FactsFile {
  fs::path path;
  std::string source;
  std::string task;
  bool compile = false;
  std::vector<ExplicitConfig> configs;
  std::vector<Fact> facts;
  std::vector<std::string> errors;
};

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

bool isInteger(const std::string& s) {
  if (s.empty()) return false;
  size_t i = s[0] == '-' ? 1 : 0;
  return i < s.size() && s.find_first_not_of("0123456789", i) == std::string::npos;
}

FactsFile readFacts(const fs::path& p) {
  FactsFile f;
  f.path = p;
  f.source = p.stem().string() + ".py";
  std::istringstream in(test::readFile(p));
  std::string line, kernel;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    if (t[0] == '@') {
      std::istringstream ws(t);
      std::string dir;
      ws >> dir;
      if (dir == "@source") ws >> f.source;
      else if (dir == "@task") ws >> f.task;
      else if (dir == "@compile") f.compile = true;
      else if (dir == "@kernel") ws >> kernel;
      else if (dir == "@config") {
        ExplicitConfig ec;
        ec.kernel = kernel;
        ws >> ec.config.label;
        std::string kv;
        while (ws >> kv) {
          auto eq = kv.find('=');
          if (eq == std::string::npos) {
            f.errors.push_back(p.string() + ":" + std::to_string(n) + ": bad config item " + kv);
            continue;
          }
          std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
          if (k == "num_warps") ec.config.num_warps = std::stoll(v);
          else if (k == "num_stages") ec.config.num_stages = std::stoll(v);
          else if (k == "grid") {
            std::array<int64_t, 3> g = {1, 1, 1};
            std::istringstream gs(v);
            std::string part;
            for (int i = 0; i < 3 && std::getline(gs, part, 'x'); ++i) g[i] = std::stoll(part);
            ec.config.grid = g;
          } else if (isInteger(v)) {
            ec.config.values[k] = std::stoll(v);
          } else {
            auto colon = v.rfind(':');
            if (colon != std::string::npos && isInteger(v.substr(colon + 1))) {
              ec.config.types[k] = v.substr(0, colon);
              ec.config.values[k] = std::stoll(v.substr(colon + 1));
            } else {
              ec.config.types[k] = v;
            }
          }
        }
        f.configs.push_back(ec);
      } else {
        f.errors.push_back(p.string() + ":" + std::to_string(n) + ": unknown directive " + dir);
      }
      continue;
    }
    auto eq = t.find(" = ");
    if (eq == std::string::npos) {
      f.errors.push_back(p.string() + ":" + std::to_string(n) + ": expected `path = json`");
      continue;
    }
    Fact fact;
    fact.line = n;
    fact.kernel = kernel;
    fact.path = trim(t.substr(0, eq));
    try {
      fact.expected = json::parse(trim(t.substr(eq + 3)));
    } catch (const std::exception& e) {
      f.errors.push_back(p.string() + ":" + std::to_string(n) + ": bad JSON: " + e.what());
      continue;
    }
    f.facts.push_back(fact);
  }
  return f;
}

std::string scalarText(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// Resolves `path` in `root`; returns nullptr and sets `err` when a segment is missing.
const json* resolve(const json& root, const std::string& path, std::string* err) {
  const json* cur = &root;
  std::istringstream ps(path);
  std::string seg;
  std::string walked;
  while (std::getline(ps, seg, '/')) {
    if (seg.empty()) continue;
    walked += "/" + seg;
    auto eq = seg.find('=');
    if (cur->is_array() && isInteger(seg)) {
      size_t i = std::stoul(seg);
      if (i >= cur->size()) {
        *err = walked + ": index out of range (size " + std::to_string(cur->size()) + ")";
        return nullptr;
      }
      cur = &(*cur)[i];
    } else if (cur->is_array() && eq != std::string::npos) {
      std::string k = seg.substr(0, eq), v = seg.substr(eq + 1);
      const json* found = nullptr;
      for (const auto& e : *cur) {
        if (e.is_object() && e.contains(k) && scalarText(e[k]) == v) {
          found = &e;
          break;
        }
      }
      if (!found) {
        *err = walked + ": no element with " + k + " = " + v;
        return nullptr;
      }
      cur = found;
    } else if (cur->is_object() && cur->contains(seg)) {
      cur = &(*cur)[seg];
    } else {
      *err = walked + ": no such key";
      return nullptr;
    }
  }
  return cur;
}

bool sameValue(const json& a, const json& b) {
  if (a.is_number() && b.is_number()) return std::abs(a.get<double>() - b.get<double>()) <= 1e-9 * std::max(1.0, std::abs(a.get<double>()));
  return a == b;
}

json analyzeFacts(const FactsFile& f, WorkerProcess* compiler) {
  static WorkerProcess parser(test::workerOptions(false));
  fs::path src_path = corpusDir() / f.source;
  ParsedSource src = parseSource(parser, src_path, test::readFile(src_path));
  ModuleIR ir = buildModuleIR(src);
  AnalyzeOptions o;
  o.configs = f.configs;
  std::optional<WorkerClient> client;
  if (compiler) client.emplace(*compiler);
  o.compile_worker = client ? &*client : nullptr;
  std::optional<Task> task;
  std::optional<ParsedSource> hsrc;
  std::optional<ModuleIR> harness;
  if (!f.task.empty()) {
    task = loadTask(corpusDir() / f.task);
    hsrc = parseSource(parser, task->harness, test::readFile(task->harness));
    harness = buildModuleIR(*hsrc);
    o.task = &*task;
    o.harness = &*harness;
  }
  json j = analyzeSource(src, ir, o);
  const char* dump = std::getenv("TF_GOLDEN_DUMP");
  if (dump && f.path.stem().string() == dump) std::cout << j.dump(1) << std::endl;
  return j;
}

void checkFacts(const FactsFile& f, const json& j) {
  for (const auto& e : f.errors) ADD_FAILURE() << e;
  for (const auto& fact : f.facts) {
    const json* base = &j;
    std::string path = fact.path;
    if (!fact.kernel.empty() && path[0] != '/') {
      path = "/kernels/name=" + fact.kernel + "/" + path;
    }
    std::string err;
    const json* v = resolve(*base, path, &err);
    if (!v) {
      ADD_FAILURE() << f.path.filename().string() << ":" << fact.line << ": " << path << ": " << err;
      continue;
    }
    EXPECT_TRUE(sameValue(*v, fact.expected)) << f.path.filename().string() << ":" << fact.line << ": " << path
                                              << "\n  expected " << fact.expected.dump() << "\n  actual   " << v->dump();
  }
}

bool needsCompile(const Fact& f) {
  std::istringstream ps(f.path);
  std::string seg;
  while (std::getline(ps, seg, '/')) if (seg == "compiled") return true;
  return false;
}

std::vector<fs::path> factFiles() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(corpusDir())) {
    if (e.path().extension() == ".facts") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class CorpusGolden : public ::testing::TestWithParam<fs::path> {};

TEST_P(CorpusGolden, KernelStaticFacts) {
  FactsFile f = readFacts(GetParam());
  json j = analyzeFacts(f, nullptr);
  EXPECT_FALSE(f.facts.empty()) << GetParam() << " checks nothing";
  // Facts under compiled/ need the compiler: checked by CompiledFacts below.
  FactsFile static_only = f;
  static_only.facts.clear();
  for (const auto& fact : f.facts) {
    if (!needsCompile(fact)) static_only.facts.push_back(fact);
    else if (!f.compile) ADD_FAILURE() << GetParam() << ":" << fact.line << ": a compiled fact without @compile";
  }
  checkFacts(static_only, j);
}

TEST_P(CorpusGolden, CompiledFacts) {
  FactsFile f = readFacts(GetParam());
  if (!f.compile) GTEST_SKIP() << "no @compile";
  static WorkerProcess compiler(test::workerOptions(false));
  WorkerReply hello = compiler.ensureStarted();
  if (!hello.ok() || !compiler.helloInfo().contains("triton") || compiler.helloInfo()["triton"].is_null()) {
    GTEST_SKIP() << "the worker's Python has no Triton";
  }
  json j = analyzeFacts(f, &compiler);
  FactsFile compiled_only = f;
  compiled_only.facts.clear();
  for (const auto& fact : f.facts) {
    if (needsCompile(fact)) compiled_only.facts.push_back(fact);
  }
  checkFacts(compiled_only, j);
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusGolden, ::testing::ValuesIn(factFiles()),
                         [](const ::testing::TestParamInfo<fs::path>& info) { return info.param.stem().string(); });

TEST(CorpusGolden, EveryKernelHasFacts) {
  int kernels = 0;
  for (const auto& e : fs::directory_iterator(corpusDir())) {
    if (e.path().extension() != ".py" || e.path().stem().string().find("_harness") != std::string::npos) continue;
    ++kernels;
    EXPECT_TRUE(fs::exists(fs::path(e.path()).replace_extension(".facts"))) << e.path() << " has no .facts file";
  }
  EXPECT_GE(kernels, 25);
}

}  // namespace
}  // namespace tf

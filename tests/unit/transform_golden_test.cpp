// Golden tests of the transformation passes: tests/golden/transform/<pass>/<case>/ holds
//   input.py       the source
//   args           the flags of `tritonforge transform` (--kernel, --pass, --signature, ...)
//   expected.py    the exact expected output (the case must also compile for sm_90), or
//   refused.txt    the exact reason of the expected refusal (one line)
// Each applied case is compiled ahead of time for sm_90 on the CPU (the worker's `compile`
// op with /tmp/venv's triton): its args must give the parameter types.
//
// TF_UPDATE_GOLDEN=1 rewrites expected.py / refused.txt from the current output (review the diff!).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "support/test_support.h"
#include "transform/transform_flags.h"
#include "util/error.h"

namespace tf {
namespace {
namespace fs = std::filesystem;

fs::path goldenRoot() { return test::sourceDir() / "tests" / "golden" / "transform"; }

std::vector<std::string> goldenCases() {
  std::vector<std::string> out;
  if (!fs::exists(goldenRoot())) return out;
  for (const auto& pass_dir : fs::directory_iterator(goldenRoot())) {
    if (!pass_dir.is_directory()) continue;
    for (const auto& case_dir : fs::directory_iterator(pass_dir.path())) {
      if (case_dir.is_directory()) out.push_back(pass_dir.path().filename().string() + "/" + case_dir.path().filename().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The args file without comment lines, as one command line.
std::string readArgs(const fs::path& p) {
  std::istringstream in(test::readFile(p));
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    out += line + " ";
  }
  return out;
}

WorkerProcess& sharedWorker() {
  static WorkerProcess worker(test::workerOptions(false));
  return worker;
}

class TransformGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(TransformGolden, Case) {
  fs::path dir = goldenRoot() / GetParam();
  TransformRequest req;
  CLI::App app;
  addTransformFlags(app, req);
  ASSERT_NO_THROW(app.parse(readArgs(dir / "args"), false)) << "bad args file in " << dir;
  req.source = dir / "input.py";
  std::string input = test::readFile(req.source);
  TransformResult r = runTransform(sharedWorker(), req, input);
  bool update = std::getenv("TF_UPDATE_GOLDEN") != nullptr;
  if (!r.outcome.applied) {
    if (update && !fs::exists(dir / "expected.py")) test::writeFile(dir / "refused.txt", r.outcome.reason + "\n");
    ASSERT_TRUE(fs::exists(dir / "refused.txt")) << "refused unexpectedly: " << r.outcome.reason;
    std::string want = test::readFile(dir / "refused.txt");
    while (!want.empty() && want.back() == '\n') want.pop_back();
    EXPECT_EQ(r.outcome.reason, want);
    return;
  }
  if (update && !fs::exists(dir / "refused.txt")) test::writeFile(dir / "expected.py", r.outcome.source);
  ASSERT_FALSE(fs::exists(dir / "refused.txt")) << "expected a refusal, got a rewrite";
  EXPECT_EQ(r.outcome.source, test::readFile(dir / "expected.py"));
  EXPECT_EQ(r.status, TransformResult::Status::kApplied) << r.message;
  EXPECT_EQ(r.compile.value("status", ""), "ok") << r.compile.dump(2);
}

INSTANTIATE_TEST_SUITE_P(Passes, TransformGolden, ::testing::ValuesIn(goldenCases()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           for (char& c : n) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return n;
                         });

// Every pass has golden cases, applied and refused.
TEST(TransformGoldenCoverage, EveryPassHasAppliedAndRefusedCases) {
  for (const auto& pass : allPasses()) {
    fs::path dir = goldenRoot() / pass->info().name;
    int applied = 0, refused = 0;
    if (fs::exists(dir)) {
      for (const auto& c : fs::directory_iterator(dir)) {
        applied += fs::exists(c.path() / "expected.py");
        refused += fs::exists(c.path() / "refused.txt");
      }
    }
    EXPECT_GT(applied, 0) << pass->info().name << " has no applied golden case";
    EXPECT_GT(refused, 0) << pass->info().name << " has no refusal golden case";
  }
}

}  // namespace
}  // namespace tf

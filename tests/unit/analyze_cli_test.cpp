// `tritonforge analyze` as a user runs it: the readable summary, the JSON schema, and one
// clear line with exit code 2 for each kind of bad input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/test_support.h"

namespace tf {
namespace {

namespace fs = std::filesystem;

std::pair<int, std::string> analyze(const std::string& args) {
  return test::runShell(test::tritonforgeBinary().string() + " analyze " + args);
}

std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

TEST(AnalyzeCli, SyntaxErrorGivesFileLineCol) {
  fs::path d = test::tempDir("analyze-syntax");
  test::writeFile(d / "bad.py", "import triton\n\n@triton.jit\ndef k(x):\n    return (x +\n");
  auto [rc, out] = analyze(q(d / "bad.py"));
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find((d / "bad.py").string() + ":5:"), std::string::npos) << out;
  EXPECT_NE(out.find("syntax error"), std::string::npos) << out;
}

TEST(AnalyzeCli, BadInputsExitTwoWithOneLine) {
  fs::path d = test::tempDir("analyze-bad");
  test::writeFile(d / "nokernel.py", "def f(x):\n    return x\n");
  test::writeFile(d / "empty.py", "  \n\n");
  test::writeFile(d / "latin1.py", std::string("# caf\xe9\nimport triton\n"));
  fs::create_directories(d / "adir");
  struct Case {
    std::string args, needle;
  } cases[] = {
      {q(d / "nokernel.py"), "no @triton.jit kernel found"},
      {q(d / "empty.py"), "is empty"},
      {q(d / "latin1.py"), "not valid UTF-8"},
      {q(d / "adir"), "is a directory"},
      {q(d / "missing.py"), "not found"},
      {q(test::sourceDir() / "examples/matmul/matmul.py") + " --kernel nope", "no @triton.jit kernel named 'nope'"},
      {q(test::sourceDir() / "examples/matmul/matmul.py") + " --cases " + q(d / "none.toml"), "not found"},
  };
  for (const auto& c : cases) {
    auto [rc, out] = analyze(c.args);
    EXPECT_EQ(rc, 2) << c.args << "\n" << out;
    EXPECT_NE(out.find(c.needle), std::string::npos) << c.args << "\n" << out;
    // One line of error, no stack trace.
    EXPECT_LE(std::count(out.begin(), out.end(), '\n'), 1) << out;
  }
}

TEST(AnalyzeCli, JsonSchemaAndSummary) {
  auto [rc, out] = analyze(q(test::sourceDir() / "tests/corpus/matmul_grouped.py") + " --json");
  ASSERT_EQ(rc, 0) << out;
  nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["schema"], "tritonforge.analyze/2");
  const auto& k = j["kernels"][0];
  EXPECT_EQ(k["name"], "matmul_grouped_kernel");
  for (const char* key : {"params", "ir", "facts", "cases", "compiled", "launched", "called_by"}) {
    EXPECT_TRUE(k.contains(key)) << key;
  }
  for (const char* key : {"params", "program_axes", "loops", "accesses", "block_ptrs", "descriptors", "dots", "reductions",
                          "casts", "elementwise", "calls", "opaque", "locals", "derived"}) {
    EXPECT_TRUE(k["ir"].contains(key)) << key;
  }
  // Without types the pointer bases are found from usage, and the dot is still there.
  EXPECT_EQ(k["ir"]["accesses"][0]["pointer"]["base"], "a_ptr");
  EXPECT_EQ(k["ir"]["dots"][0]["m"], "BLOCK_M");
  EXPECT_TRUE(k["compiled"].empty());
  EXPECT_EQ(k["compiled_note"], "needs parameter types and values: give --cases TASK.toml");

  auto [rc2, text] = analyze(q(test::sourceDir() / "examples/softmax/softmax.py") + " --cases " +
                             q(test::sourceDir() / "examples/softmax/task.toml") + " --no-compile");
  ASSERT_EQ(rc2, 0) << text;
  EXPECT_NE(text.find("kernel softmax_rows"), std::string::npos) << text;
  EXPECT_NE(text.find("constraint: BLOCK >= n_cols"), std::string::npos) << text;
  EXPECT_NE(text.find("case M=4096,N=32000 (grid 4096x1x1, 4 warps, 3 stages)"), std::string::npos) << text;
  EXPECT_NE(text.find("#0 coalesced, 16 B per thread, 16 sectors/request"), std::string::npos) << text;
}

}  // namespace
}  // namespace tf

// `tritonforge diagnose` end to end: the JSON the issue specifies, and bad files giving one
// line on stderr and exit code 2.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace tf {
namespace {

std::string bin() { return test::tritonforgeBinary().string(); }
std::string data(const char* rel) { return (test::sourceDir() / "tests/data" / rel).string(); }

TEST(CliDiagnose, JsonHasKernelsBottleneckAndFindings) {
  auto [rc, out] = test::runShell(bin() + " diagnose --json --ncu-csv " + data("ncu/handmade/two_kernels.csv") +
                                  " --kernel matmul_kernel --asm " + data("asm/dot_f32_ieee.ttgir"));
  ASSERT_EQ(rc, 0) << out;
  nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["schema"], "tritonforge.diagnose/1");
  ASSERT_EQ(j["kernels"].size(), 1u);
  const auto& k = j["kernels"][0];
  EXPECT_EQ(k["name"], "matmul_kernel");
  EXPECT_EQ(k["bottleneck"], "compute-bound");
  ASSERT_EQ(k["findings"].size(), 1u);
  EXPECT_EQ(k["findings"][0]["kind"], "no-tensor-cores");
  EXPECT_EQ(k["findings"][0]["severity"], 0.9);
  EXPECT_EQ(k["findings"][0]["suggestions"], nlohmann::json({"tensor-cores"}));
  EXPECT_EQ(k["findings"][0]["evidence"]["static.dots_on_fma"], 1);
}

TEST(CliDiagnose, HumanOutput) {
  auto [rc, out] = test::runShell(bin() + " diagnose --ncu-csv " + data("ncu/handmade/two_kernels.csv"));
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("kernel softmax_rows (ID 0, line 5)"), std::string::npos) << out;
  EXPECT_NE(out.find("bottleneck: memory-bound (ncu: SM 35%, memory 91%, DRAM 91% of peak)"), std::string::npos) << out;
}

TEST(CliDiagnose, BadFilesExitTwoWithOneLine) {
  struct Case {
    std::string args, message;
  } cases[] = {
      {"--ncu-csv " + data("ncu/handmade/truncated.csv"), "never closed (a truncated file?)"},
      {"--ncu-csv " + data("ncu/handmade/details_page.csv"), "details page"},
      {"--ncu-csv " + data("asm/kernels.py"), "not a CSV file"},
      {"--ncu-csv " + data("asm/generate.py") + " --json", "not a CSV file"},
      {"--ncu-csv " + data("ncu/handmade/no-such.csv"), "not found"},
      {"--ncu-csv " + data("ncu/handmade/two_kernels.csv") + " --kernel nope", "no kernel named 'nope'"},
      {"--ncu-csv " + data("ncu/handmade/two_kernels.csv") + " --asm " + data("asm/kernels.py"),
       "--asm takes .ttgir, .ptx or .sass files"},
  };
  for (const auto& c : cases) {
    auto [rc, out] = test::runShell(bin() + " diagnose " + c.args);
    EXPECT_EQ(rc, 2) << c.args << "\n" << out;
    EXPECT_NE(out.find(c.message), std::string::npos) << c.args << "\n" << out;
    EXPECT_EQ(out.rfind("tritonforge: ", 0), 0u) << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  }
}

}  // namespace
}  // namespace tf

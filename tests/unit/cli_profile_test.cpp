// `tritonforge profile` without a GPU: bad flags are input errors; no GPU is exit code 3 with
// the reason (on a GPU machine tests/gpu/profile_test.cpp runs it for real).
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace tf {
namespace {

std::string bin() { return test::tritonforgeBinary().string(); }
std::string task() { return (test::sourceDir() / "tests/data/faults/task.toml").string(); }

TEST(CliProfile, CaseOutOfRangeIsBadInput) {
  auto [rc, out] = test::runShell(bin() + " profile " + task() + " --case 3");
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("--case 3 is out of range (the task has 1 cases)"), std::string::npos) << out;
}

TEST(CliProfile, NoGpuIsExitThreeWithTheReason) {
  if (test::gpuAvailable()) GTEST_SKIP() << "a GPU is visible: tests/gpu/profile_test.cpp covers this machine";
  auto [rc, out] = test::runShell(bin() + " profile " + task() + " --json 2>/dev/null");
  EXPECT_EQ(rc, 3) << out;
  nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["schema"], "tritonforge.profile/1");
  EXPECT_TRUE(j["gpu"].is_null());
  EXPECT_FALSE(j["reason"].get<std::string>().empty());
}

}  // namespace
}  // namespace tf

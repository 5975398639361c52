// Every recorded Nsight Compute fixture (tests/data/ncu/<name>/raw.csv, recorded on the H200 by
// scripts/gpu/record_ncu_fixtures.py) gets the diagnosis its expected.json asks for. Fixtures
// not recorded yet are skipped visibly.
#include <gtest/gtest.h>

#include <algorithm>

#include "diagnose/diagnose.h"
#include "measure/ncu_csv.h"
#include "support/test_support.h"

namespace tf {
namespace {

namespace fs = std::filesystem;

const char* const kFixtures[] = {"strided_load",       "coalesced_copy", "register_spills", "small_grid",
                                 "tail_effect",        "low_occupancy_smem", "fp32_ieee_dot", "bank_conflicts",
                                 "pointer_chase",      "poor_l2_reuse",  "tc_matmul"};

class NcuFixture : public ::testing::TestWithParam<const char*> {};

TEST_P(NcuFixture, GetsItsExpectedDiagnosis) {
  fs::path dir = test::sourceDir() / "tests/data/ncu" / GetParam();
  nlohmann::json expected = nlohmann::json::parse(test::readFile(dir / "expected.json"));
  if (!fs::exists(dir / "raw.csv")) {
    GTEST_SKIP() << GetParam() << ": not recorded yet (scripts/gpu/record_ncu_fixtures.py on the H200)";
  }
  auto kernels = kernelMetricsFromTable(readNcuRawCsv(dir / "raw.csv"));
  const std::string name = expected["kernel"];
  auto it = std::find_if(kernels.begin(), kernels.end(), [&](const KernelMetrics& k) { return ncuBaseName(k.name) == name; });
  ASSERT_NE(it, kernels.end()) << "no row for kernel " << name;

  DiagnosisInput in;
  in.kernel = name;
  in.ncu = &*it;
  CompiledTexts texts;
  if (fs::exists(dir / "asm.ttgir")) texts.ttgir = test::readFile(dir / "asm.ttgir");
  if (fs::exists(dir / "asm.ptx")) texts.ptx = test::readFile(dir / "asm.ptx");
  if (!texts.empty()) in.static_facts = staticFactsFromTexts(texts);
  if (expected.contains("context") && expected["context"].contains("bytes")) {
    in.expected_bytes = expected["context"]["bytes"].get<double>();
  }
  Diagnosis d = diagnose(in);
  SCOPED_TRACE(d.toJson().dump(2));

  if (expected.contains("bottleneck")) {
    auto allowed = expected["bottleneck"].get<std::vector<std::string>>();
    EXPECT_NE(std::find(allowed.begin(), allowed.end(), toString(d.bottleneck)), allowed.end())
        << "bottleneck " << toString(d.bottleneck);
  }
  for (const auto& want : expected["findings"]) {
    auto kind = findingKindFromString(want["kind"].get<std::string>());
    ASSERT_TRUE(kind) << "not a finding kind: " << want["kind"];
    const Finding* f = d.find(*kind);
    ASSERT_NE(f, nullptr) << "missing finding " << want["kind"];
    EXPECT_GE(f->severity, want.value("min_severity", 0.0)) << want["kind"];
    if (want.contains("detail")) {
      std::string detail = f->limiter ? toString(*f->limiter) : f->detail;
      EXPECT_EQ(detail, want["detail"].get<std::string>()) << want["kind"];
    }
  }
  for (const auto& kind : expected["absent"]) {
    auto k = findingKindFromString(kind.get<std::string>());
    ASSERT_TRUE(k) << "not a finding kind: " << kind;
    EXPECT_EQ(d.find(*k), nullptr) << "unexpected finding " << kind;
  }
}

INSTANTIATE_TEST_SUITE_P(Recorded, NcuFixture, ::testing::ValuesIn(kFixtures),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

TEST(NcuFixtures, EveryFolderIsListed) {
  size_t folders = 0;
  for (const auto& e : fs::directory_iterator(test::sourceDir() / "tests/data/ncu")) {
    if (!e.is_directory() || e.path().filename() == "handmade") continue;
    ++folders;
    EXPECT_TRUE(fs::exists(e.path() / "expected.json")) << e.path();
    std::string n = e.path().filename().string();
    EXPECT_NE(std::find(std::begin(kFixtures), std::end(kFixtures), n), std::end(kFixtures)) << n;
  }
  EXPECT_EQ(folders, std::size(kFixtures));
}

}  // namespace
}  // namespace tf

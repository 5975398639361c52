// The summary `optimize` prints: the route each case of the best took when a Gluon lowering
// routes its launches.
#include <gtest/gtest.h>

#include "report/optimize_report.h"

namespace tf {
namespace {

CaseMeasurement timed(double ms, nlohmann::json kernels) {
  CaseMeasurement m;
  m.status = CandidateStatus::kOk;
  m.timing = TimingStats{};
  m.timing->median_ms = ms;
  m.kernels = std::move(kernels);
  return m;
}

struct Fixture {
  Task task;
  TunableSet tunables;
  OptimizeResult r;
  Fixture(nlohmann::json best_case0, nlohmann::json best_case1) {
    task.name = "mm";
    task.source = "/tmp/mm.py";
    task.cases = {{{"M", 16}}, {{"M", 4096}}};
    r.gpu = true;
    r.candidates.resize(2);
    r.candidates[1].config_text = "retile + gluon-gemm";
    r.best = 1;
    r.speedup = 1.5;
    nlohmann::json written = {{{"name", "mm_kernel"}}};
    r.confirm_baseline = {timed(1.0, written), timed(2.0, written)};
    r.confirm_best = {timed(0.9, std::move(best_case0)), timed(1.0, std::move(best_case1))};
  }
};

TEST(OptimizeSummary, SaysWhichRouteEachCaseTook) {
  Fixture f({{{"name", "mm_kernel"}}}, {{{"name", "_mm_kernel_gluon"}, {"dialect", "gluon"}}});
  std::string s = optimizeSummary(f.task, f.tunables, f.r, "/tmp/out");
  EXPECT_NE(s.find("route: M=16: the kernel as written (the Gluon route does not fit this call)"), std::string::npos) << s;
  EXPECT_NE(s.find("route: M=4096: the Gluon kernel _mm_kernel_gluon"), std::string::npos) << s;
}

TEST(OptimizeSummary, NoRouteLinesWithoutAGluonKernel) {
  Fixture f({{{"name", "mm_kernel"}}}, {{{"name", "mm_kernel"}}});
  std::string s = optimizeSummary(f.task, f.tunables, f.r, "/tmp/out");
  EXPECT_NE(s.find("Best: retile + gluon-gemm -> 1.50x"), std::string::npos) << s;
  EXPECT_EQ(s.find("route:"), std::string::npos) << s;
}

}  // namespace
}  // namespace tf

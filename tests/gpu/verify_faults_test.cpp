// Every planted fault of tests/data/faults/ (README.md there) is rejected with the right
// status, and the correct kernel passes. Each fault is a variant of the faults task measured
// through the search's Evaluator, exactly as a candidate would be.
#include <gtest/gtest.h>

#include "search/evaluator.h"
#include "support/test_support.h"
#include "task/task.h"

namespace tf {
namespace {

struct Fault {
  const char* file;
  CandidateStatus status;
  const char* reason;         // a piece of the message / verification reason
  int failed_seed = -1;
};

// The hang comes last: it costs a worker (and a few seconds).
const Fault kFaults[] = {
    {"scale_add.py", CandidateStatus::kOk, ""},
    {"wrong_element.py", CandidateStatus::kWrongResult, "1 of 1048579 elements wrong, first at [777]", 0},
    {"unwritten_tail.py", CandidateStatus::kWrongResult, "NaN (never written?)", 0},
    {"cached_across_seeds.py", CandidateStatus::kWrongResult, "elements wrong", 1},
    {"modifies_input.py", CandidateStatus::kWrongResult, "input 0 was modified in place", 0},
    {"writes_past_end.py", CandidateStatus::kWrongResult, "a write landed outside an output tensor", 0},
    {"writes_past_input.py", CandidateStatus::kWrongResult, "a write landed outside input 0", 0},
    {"no_kernel.py", CandidateStatus::kWrongResult, "launched no Triton kernel", 0},
    {"compile_error.py", CandidateStatus::kCompileError, "CompilationError"},
    {"out_of_resources.py", CandidateStatus::kOutOfResources, "OutOfResources"},
    {"illegal_address.py", CandidateStatus::kCrash, "CUDA error"},
    {"hangs.py", CandidateStatus::kTimeout, ""},
};

class VerifyFaults : public ::testing::TestWithParam<Fault> {
 protected:
  static void SetUpTestSuite() {
    if (!test::gpuAvailable()) return;
    task_ = new Task(loadTask(test::sourceDir() / "tests/data/faults/task.toml"));
    EvaluatorOptions o;
    o.worker = test::workerOptions(true);
    o.worker.env["TRITONFORGE_HANG_TIMEOUT_S"] = "8";
    o.timeouts.run = std::chrono::milliseconds(90000);
    evaluator_ = new Evaluator(*task_, o, test::tempDir("faults"));
    evaluator_->start();
  }
  static void TearDownTestSuite() {
    delete evaluator_;
    delete task_;
    evaluator_ = nullptr;
    task_ = nullptr;
  }
  static Task* task_;
  static Evaluator* evaluator_;
};
Task* VerifyFaults::task_ = nullptr;
Evaluator* VerifyFaults::evaluator_ = nullptr;

TEST_P(VerifyFaults, RejectedWithTheRightStatus) {
  TF_REQUIRE_GPU();
  const Fault& f = GetParam();
  std::string source = test::readFile(test::sourceDir() / "tests/data/faults" / f.file);
  ASSERT_FALSE(source.empty());
  Variant v = evaluator_->materialize(source);
  TimingOptions timing;
  timing.budget_ms = 20;
  CaseMeasurement m = evaluator_->measure(v, 0, timing);
  SCOPED_TRACE(m.toJson().dump(2));
  EXPECT_EQ(toString(m.status), std::string(toString(f.status)));
  std::string said = m.message + " | " + m.verify.reason + " | " + m.detail;
  EXPECT_NE(said.find(f.reason), std::string::npos) << said;
  if (f.status == CandidateStatus::kOk) {
    EXPECT_TRUE(m.verify.passed);
    ASSERT_TRUE(m.timing);
    EXPECT_GT(m.timing->median_ms, 0);
    EXPECT_EQ(m.work["bytes"], 3.0 * 1048579 * 4);
    ASSERT_EQ(m.kernels.size(), 1u);
    EXPECT_EQ(m.kernels[0]["grid"], nlohmann::json({1025, 1, 1}));
    EXPECT_EQ(m.verify.tolerances[0]["rtol"], 1e-4);  // the fp32 default: the task sets none
  }
  if (f.status == CandidateStatus::kWrongResult) {
    EXPECT_FALSE(m.verify.passed);
    ASSERT_TRUE(m.verify.failed_seed.has_value());
    EXPECT_EQ(*m.verify.failed_seed, f.failed_seed);
  }
}

INSTANTIATE_TEST_SUITE_P(Planted, VerifyFaults, ::testing::ValuesIn(kFaults),
                         [](const ::testing::TestParamInfo<Fault>& info) {
                           std::string n = info.param.file;
                           return n.substr(0, n.find('.'));
                         });

}  // namespace
}  // namespace tf

// On a GPU: the evaluator measures a good variant, turns a hanging kernel into a timeout
// with the worker replaced, and keeps going; `optimize` on the example matmul returns a
// verified faster kernel.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "search/evaluator.h"
#include "support/test_support.h"
#include "task/task.h"

namespace tf {
namespace {

const char* kAdd = R"(import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


def add(x, y):
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
    return out
)";

const char* kHang = R"(import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    i = 0
    while tl.load(x) == tl.load(x):
        i += 1
    tl.store(out + offs, i, mask=offs < n)


def add(x, y):
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
    return out
)";

const char* kHarness = R"(import torch


def make_inputs(case, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    n = case["n"]
    return (torch.randn(n, device="cuda", generator=g), torch.randn(n, device="cuda", generator=g))


def reference(x, y):
    return x + y
)";

TEST(GpuEvaluator, HangBecomesATimeoutAndTheNextCandidateRuns) {
  TF_REQUIRE_GPU();
  auto dir = test::tempDir("gpu-eval");
  test::writeFile(dir / "add.py", kAdd);
  test::writeFile(dir / "harness.py", kHarness);
  test::writeFile(dir / "task.toml",
                  "name='add'\nsource='add.py'\nlauncher='add'\nharness='harness.py'\ncases=[{n=1000003}]\n"
                  "[check]\nrtol=1e-6\natol=1e-6\n");
  Task task = loadTask(dir / "task.toml");
  EvaluatorOptions o;
  o.worker = test::workerOptions(true);
  o.timeouts.run = std::chrono::milliseconds(30000);
  Evaluator ev(task, o, dir / "work");
  ev.start();
  ASSERT_TRUE(ev.hasGpu());
  TimingOptions t;
  Variant good = ev.materialize(kAdd);
  CaseMeasurement m = ev.measure(good, 0, t);
  ASSERT_EQ(m.status, CandidateStatus::kOk) << m.message << m.detail;
  EXPECT_GT(m.timing->median_ms, 0);
  Variant hang = ev.materialize(kHang);
  CaseMeasurement h = ev.measure(hang, 0, t);
  EXPECT_EQ(h.status, CandidateStatus::kTimeout) << h.message;
  CaseMeasurement again = ev.measure(good, 0, t);
  EXPECT_EQ(again.status, CandidateStatus::kOk) << again.message << again.detail;
  EXPECT_GE(ev.mainWorker().starts(), 2);
}

TEST(GpuOptimize, ExampleMatmulGetsAtLeastThreeTimesFaster) {
  TF_REQUIRE_GPU();
  auto out = test::tempDir("gpu-opt");
  std::string cmd = test::tritonforgeBinary().string() + " optimize " +
                    (test::sourceDir() / "examples/matmul/task.toml").string() + " --json --out " + out.string();
  auto [rc, text] = test::runShell(cmd + " 2>/dev/null");
  ASSERT_EQ(rc, 0) << text;
  auto j = nlohmann::json::parse(test::readFile(out / "matmul" / "result.json"));
  EXPECT_EQ(j["status"], "improved");
  EXPECT_GE(j["speedup"].get<double>(), 3.0);
  EXPECT_TRUE(j["best"]["per_case"][0]["verify"]["passed"].get<bool>());
  EXPECT_LE(j["search"]["elapsed_s"].get<double>(), 75.0);
}

}  // namespace
}  // namespace tf

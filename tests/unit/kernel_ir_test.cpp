// The symbolic expressions under the Kernel IR, the case binding (harness + launcher), and
// robustness of the IR builder on sources it does not understand.
#include <gtest/gtest.h>

#include <filesystem>

#include "kernel/kernel_analysis.h"
#include "kernel/kernel_cost.h"
#include "kernel/kernel_ir.h"
#include "kernel/launch_binding.h"
#include "kernel/module_ir.h"
#include "kernel/sym_expr.h"
#include "support/test_support.h"

namespace tf {
namespace {

using namespace sym;

TEST(SymExpr, FoldsAndPrintsCanonically) {
  Expr bm = var("BLOCK_M"), k = var("K"), bk = var("BLOCK_K");
  EXPECT_EQ(str(add(num(2), num(3))), "5");
  EXPECT_EQ(str(mul(num(1), bm)), "BLOCK_M");
  EXPECT_EQ(str(mul(num(0), bm)), "0");
  EXPECT_EQ(str(add(bm, bm)), "2*BLOCK_M");
  EXPECT_EQ(str(sub(bm, bm)), "0");
  // factors sort; positive terms print before negative ones
  EXPECT_EQ(str(mul(bk, bm)), str(mul(bm, bk)));
  EXPECT_EQ(str(sub(k, mul(bk, var("k")))), "K - BLOCK_K*k");
  EXPECT_EQ(str(cdiv(sub(k, num(0)), bk)), "cdiv(K, BLOCK_K)");
  EXPECT_EQ(str(cdiv(num(4000), num(64))), "63");
  EXPECT_EQ(str(mul(add(var("a"), var("b")), num(3))), "3*(a + b)");
  EXPECT_EQ(str(floorDiv(var("x"), num(1))), "x");
  EXPECT_EQ(str(mod(num(0), var("S"))), "0");
  EXPECT_EQ(str(nextPow2(num(1000))), "1024");
  EXPECT_EQ(str(select(cmp(Op::kLt, var("a"), num(3)), num(1), num(2))), "(1 if a < 3 else 2)");
}

TEST(SymExpr, Evaluates) {
  std::map<std::string, int64_t> v = {{"K", 4000}, {"BLOCK_K", 64}, {"x", -7}};
  Env env = envOf(v);
  EXPECT_EQ(eval(cdiv(var("K"), var("BLOCK_K")), env), 63);
  EXPECT_EQ(eval(floorDiv(var("x"), num(2)), env), -4);  // Python floor division
  EXPECT_EQ(eval(mod(var("x"), num(3)), env), 2);
  EXPECT_EQ(eval(var("missing"), env), std::nullopt);
  EXPECT_EQ(eval(opaque("f(x)"), env), std::nullopt);
  EXPECT_EQ(eval(floorDiv(var("K"), num(0)), env), std::nullopt);
  EXPECT_EQ(eval(mul(num(int64_t{1} << 62), var("K")), env), std::nullopt);  // overflow is unknown, not wrong
}

TEST(SymExpr, Divisibility) {
  auto div = [](const std::string& n) -> int64_t { return n == "stride" ? 16 : n == "BLOCK" ? 128 : 1; };
  EXPECT_EQ(divisibility(mul(var("pid"), var("BLOCK")), div), 128);
  EXPECT_EQ(divisibility(add(mul(var("pid"), var("stride")), var("BLOCK")), div), 16);
  EXPECT_EQ(divisibility(add(var("pid"), var("BLOCK")), div), 1);
  EXPECT_EQ(divisibility(num(0), div), 0);
  // x % N keeps what divides both
  EXPECT_EQ(divisibility(mod(mul(var("BLOCK"), var("pid")), var("stride")), div), 16);
  EXPECT_EQ(divisibility(floorDiv(var("BLOCK"), num(2)), div), 1);
}

TEST(SymExpr, Substitutes) {
  Expr e = add(mul(var("pid_m"), var("BLOCK_M")), var("k"));
  Expr s = substitute(e, [](const std::string& n) -> Expr { return n == "pid_m" ? var("program_id(0)") : nullptr; });
  EXPECT_EQ(str(s), "BLOCK_M*program_id(0) + k");
  EXPECT_EQ(vars(s), (std::set<std::string>{"BLOCK_M", "k", "program_id(0)"}));
}

// `x = x * s + x` doubles the printed tree at every step: past kMaxTerms the value is a limit
// leaf, unknown, instead of a tree of 2^n nodes (issue 11).
TEST(SymExpr, GrowthStopsAtTheLimitAsUnknown) {
  uint64_t hits = limitHits();
  Expr x = var("pid"), s = var("stride");
  int steps = 0;
  while (!overLimit(x) && steps < 12) {
    x = add(mul(x, s), x);
    ++steps;
  }
  EXPECT_EQ(steps, 9);  // sizes 5, 13, 29, ..., 1021, then 2045 > 1024
  EXPECT_EQ(x->op, Op::kOpaque);
  EXPECT_TRUE(isOpaque(x));
  EXPECT_EQ(str(x).rfind("<unknown: too large #", 0), 0u) << str(x);
  EXPECT_EQ(limitHits(), hits + 1);
  EXPECT_EQ(eval(x, envOf({{"pid", 1}, {"stride", 1}})), std::nullopt);
  // What is built from it stays small and unknown; the same value still cancels itself.
  Expr y = add(mul(x, num(2)), var("pid"));
  EXPECT_TRUE(overLimit(y));
  EXPECT_LT(y->size, 8u);
  EXPECT_EQ(str(sub(x, x)), "0");
  // Nesting is capped too: each step adds a level without doubling.
  Expr z = var("pid");
  for (int i = 0; i < 100; ++i) z = add(mul(z, s), num(1));
  EXPECT_TRUE(overLimit(z));
  EXPECT_LE(z->depth, kMaxDepth);
}

// Two different values over the limit print differently: they must not combine as like terms
// (x - y would read 0) or compare equal.
TEST(SymExpr, DifferentValuesOverTheLimitStayApart) {
  Expr x = var("a"), y = var("b"), s = var("s");
  for (int i = 0; i < 12; ++i) {
    x = add(mul(x, s), x);
    y = add(mul(y, s), y);
  }
  ASSERT_TRUE(overLimit(x));
  ASSERT_TRUE(overLimit(y));
  EXPECT_FALSE(same(x, y));
  EXPECT_EQ(constant(sub(x, y)), std::nullopt);
  EXPECT_NE(str(sub(x, y)), "0");
}

// Below the limit nothing changes: a sum of 300 distinct terms prints whole and evaluates.
TEST(SymExpr, LargeExpressionsUnderTheLimitAreKept) {
  Expr e = num(0);
  std::map<std::string, int64_t> values;
  for (int i = 0; i < 300; ++i) {
    std::string n = "v" + std::to_string(i);
    e = add(e, mul(num(2), var(n)));
    values[n] = 1;
  }
  EXPECT_FALSE(overLimit(e));
  EXPECT_FALSE(isOpaque(e));
  EXPECT_EQ(eval(e, envOf(values)), 600);
  EXPECT_NE(str(e).find("2*v299"), std::string::npos);
}

struct Built {
  ParsedSource src;
  ModuleIR ir;
};

std::unique_ptr<Built> build(const std::string& text) {
  auto b = std::make_unique<Built>();
  b->src = test::parseText(text);
  b->ir = buildModuleIR(b->src);
  return b;
}

TEST(KernelIR, UnknownConstructsAreOpaqueNotFatal) {
  auto b = build(R"(
import triton
import triton.language as tl
from somewhere import helper

@triton.jit
def k(x_ptr, y_ptr, n, B: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * B + tl.arange(0, B)
    v = tl.load(x_ptr + offs)
    with something():
        v = v + 1
    try:
        v = v * 2
    except Exception:
        pass
    v = helper(v)
    w = [i for i in range(3)]
    q = v @ v
    tl.store(y_ptr + offs[::2], v)
    tl.store(y_ptr + offs, v, mask=offs < n)
)");
  ASSERT_EQ(b->ir.kernels.size(), 1u);
  KernelIR ir = buildKernelIR(b->ir, b->ir.kernels[0]);
  EXPECT_GE(ir.opaque.size(), 4u);
  bool found_helper = false;
  for (const auto& o : ir.opaque) if (o.reason.find("helper") != std::string::npos) found_helper = true;
  EXPECT_TRUE(found_helper);
  // The accesses are still there; the last store is understood.
  ASSERT_EQ(ir.accesses.size(), 3u);
  EXPECT_TRUE(ir.accesses[2].ptr.affine);
  EXPECT_EQ(ir.accesses[2].ptr.base, "y_ptr");
  KernelStaticFacts f = deriveFacts(ir);
  EXPECT_EQ(f.coalescing.size(), 3u);
}

TEST(KernelIR, RecursionIsNotInlinedForever) {
  auto b = build(R"(
import triton
import triton.language as tl

@triton.jit
def f(x, n: tl.constexpr):
    return g(x, n)

@triton.jit
def g(x, n: tl.constexpr):
    return f(x, n)

@triton.jit
def k(x_ptr, B: tl.constexpr):
    offs = tl.arange(0, B)
    tl.store(x_ptr + offs, f(tl.load(x_ptr + offs), 3))
)");
  const Kernel* k = b->ir.kernel("k");
  ASSERT_TRUE(k);
  KernelIR ir = buildKernelIR(b->ir, *k);
  bool noted = false;
  for (const auto& c : ir.calls) if (c.note.find("recursion") != std::string::npos) noted = true;
  EXPECT_TRUE(noted);
  EXPECT_EQ(ir.accesses.size(), 2u);
}

// A grouped order that reassigns the GROUP_M argument: the new value is not a local named
// GROUP_M (earlier definitions use that name for the argument). It was, and expanding the
// locals then grew without end: minutes for this kernel, and pid_m lost its grid axis.
TEST(KernelIR, ParameterReassignedInTheBodyIsNotALocal) {
  auto b = build(R"(
import triton
import triton.language as tl

@triton.jit
def k(c_ptr, M, N, stride_cm, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    GROUP_M = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (pid % GROUP_M)
    pid_n = (pid % num_pid_in_group) // GROUP_M
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32))
)");
  uint64_t hits = limitHits();
  KernelIR ir = buildKernelIR(b->ir, b->ir.kernels[0]);
  EXPECT_EQ(ir.locals.count("GROUP_M"), 0u);
  ASSERT_EQ(ir.locals.count("pid_m"), 1u);
  EXPECT_EQ(str(ir.locals.at("pid_m")), "first_pid_m + program_id(0) % min(num_pid_m - first_pid_m, GROUP_M)");
  EXPECT_EQ(str(ir.expand(var("pid_n"))),
            "program_id(0) % (GROUP_M*cdiv(N, BLOCK_N)) // min(cdiv(M, BLOCK_M) - GROUP_M*(program_id(0) // "
            "(GROUP_M*cdiv(N, BLOCK_N))), GROUP_M)");
  ASSERT_EQ(ir.program_axes.size(), 1u);
  EXPECT_TRUE(ir.program_axes[0].grouped);
  EXPECT_EQ(limitHits(), hits);
  EXPECT_TRUE(ir.notes.empty());
}

// Helpers that call helpers several times multiply the work at every level (4^7 calls here):
// inlining stops at the kernel's limit, and the module's budget, shared by all its kernels,
// keeps a file of many such kernels bounded too.
TEST(KernelIR, InliningStopsAtItsBudgets) {
  std::string text = "import triton\nimport triton.language as tl\n\n";
  for (int d = 7; d >= 0; --d) {
    text += "@triton.jit\ndef h" + std::to_string(d) + "(x, s):\n";
    if (d == 7) text += "    return x * s + 1\n\n";
    for (int j = 0; d < 7 && j < 4; ++j) text += "    x = h" + std::to_string(d + 1) + "(x, s) + 1\n";
    if (d < 7) text += "    return x\n\n";
  }
  for (int k = 0; k < 2; ++k) {
    text += "@triton.jit\ndef k" + std::to_string(k) + "(c_ptr, n, B: tl.constexpr):\n"
            "    tl.store(c_ptr + h0(tl.program_id(0), n) + tl.arange(0, B), tl.zeros((B,), dtype=tl.float32))\n\n";
  }
  auto b = build(text);
  auto noted = [](const KernelIR& ir, const std::string& needle) {
    for (const auto& n : ir.notes) if (n.find(needle) != std::string::npos) return true;
    return false;
  };
  const Kernel* k0 = b->ir.kernel("k0");
  ASSERT_TRUE(k0);
  KernelIR ir0 = buildKernelIR(b->ir, *k0);
  EXPECT_TRUE(noted(ir0, "the analysis of this kernel reached its limit of 10000 statements interpreted in inlined helpers"));
  bool not_inlined = false;
  for (const auto& c : ir0.calls) if (!c.inlined && c.note.find("not inlined") != std::string::npos) not_inlined = true;
  EXPECT_TRUE(not_inlined);
  // Each call site is listed once (inlined, and not inlined past the limit), not once per
  // inlining: 7 helpers x 4 sites + the kernel's.
  EXPECT_LE(ir0.calls.size(), 2u * (7u * 4u + 1u));
  // The store is still there.
  ASSERT_EQ(ir0.accesses.size(), 1u);
  EXPECT_EQ(ir0.accesses[0].kind, AccessKind::kStore);

  b->ir.inline_budget->statements_left = 0;
  KernelIR ir1 = buildKernelIR(b->ir, *b->ir.kernel("k1"));
  EXPECT_TRUE(noted(ir1, "the analyses of this file reached their limit of 50000 statements interpreted in inlined helpers"));
  ASSERT_EQ(ir1.calls.size(), 1u);
  EXPECT_FALSE(ir1.calls[0].inlined);
}

// Every Python file of the repository: the builder must finish on each kernel it finds.
TEST(KernelIR, RepositorySourcesDoNotCrashIt) {
  int kernels = 0;
  for (const auto& dir : {"tests/corpus", "examples", "python/tritonforge_worker"}) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(test::sourceDir() / dir)) {
      if (e.path().extension() != ".py") continue;
      auto b = build(test::readFile(e.path()));
      for (const auto& k : b->ir.kernels) {
        KernelIR ir = buildKernelIR(b->ir, k);
        KernelStaticFacts f = deriveFacts(ir);
        AnalysisConfig cfg;
        CostEstimate est = estimate(ir, f, cfg);
        EXPECT_EQ(est.accesses.size(), ir.accesses.size());
        ++kernels;
      }
    }
  }
  EXPECT_GE(kernels, 30);
}

TEST(LaunchBinding, HarnessAndLauncher) {
  auto src = build(test::readFile(test::sourceDir() / "examples/softmax/softmax.py"));
  auto har = build(test::readFile(test::sourceDir() / "examples/softmax/softmax_harness.py"));
  CaseBinding b = bindCase(src->ir, "softmax", &har->ir, {{"M", 4096}, {"N", 32000}});
  ASSERT_EQ(b.inputs.size(), 1u);
  EXPECT_EQ(b.inputs[0].describe(), "tensor fp32[4096, 32000] strides (32000, 1)");
  ASSERT_EQ(b.launches.size(), 1u);
  const auto& l = b.launches[0];
  EXPECT_EQ(l.kernel, "softmax_rows");
  EXPECT_EQ(l.args.at("BLOCK").i, 32768);
  EXPECT_EQ(l.args.at("in_stride").i, 32000);
  EXPECT_EQ(tritonType(l.args.at("out_ptr")), "*fp32");
  EXPECT_EQ(l.options.at("num_warps"), 4);
  auto grid = evalGrid(src->ir, l, {});
  ASSERT_TRUE(grid);
  EXPECT_EQ((*grid)[0], 4096);
}

TEST(LaunchBinding, GridLambdaAndTransposes) {
  auto src = build(R"(
import torch
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, y_ptr, M, N, sxm, sxn, BLOCK: tl.constexpr):
    pass

def launch(x):
    xt = x.t()
    M, N = xt.shape
    y = torch.empty((M, N), device=x.device, dtype=torch.bfloat16)
    grid = lambda META: (triton.cdiv(M, META["BLOCK"]), triton.cdiv(N, META["BLOCK"]))
    k[grid](xt, y, M, N, xt.stride(0), xt.stride(1), BLOCK=64)
)");
  auto har = build(R"(
import torch
def make_inputs(case, seed):
    return (torch.randn(case["M"], case.get("N", 256), dtype=torch.float16),)
)");
  CaseBinding b = bindCase(src->ir, "launch", &har->ir, {{"M", 1000}});
  ASSERT_EQ(b.launches.size(), 1u);
  const auto& l = b.launches[0];
  EXPECT_EQ(l.args.at("M").i, 256);
  EXPECT_EQ(l.args.at("N").i, 1000);
  EXPECT_EQ(l.args.at("sxm").i, 1);      // transposed: unit stride first
  EXPECT_EQ(l.args.at("sxn").i, 256);
  EXPECT_EQ(tritonType(l.args.at("sxm")), "constexpr");  // the JIT specializes 1
  EXPECT_EQ(tritonType(l.args.at("y_ptr")), "*bf16");
  auto grid = evalGrid(src->ir, l, {{"BLOCK", 64}});
  ASSERT_TRUE(grid);
  EXPECT_EQ((*grid)[0], 4);
  EXPECT_EQ((*grid)[1], 16);
}

}  // namespace
}  // namespace tf

namespace tf {
namespace {

// A dtype's predicates are compile-time facts: a kernel that branches on them stays
// understood (no opaque construct), and both branches' accesses are seen.
TEST(KernelIR, DtypePredicatesAreNotOpaque) {
  ParsedSource src = test::parseText(R"(import triton
import triton.language as tl


@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if x.dtype.is_floating():
        x = x * 2.0
    elif y_ptr.dtype.element_ty.is_int_signed():
        x = x + 1
    tl.store(y_ptr + offs, x, mask=offs < n)
)");
  ModuleIR ir = buildModuleIR(src);
  KernelIR k = buildKernelIR(ir, *ir.kernel("k"));
  EXPECT_TRUE(k.opaque.empty()) << k.opaque.front().reason;
}

// The launcher's epilogue facts the fused-sum and fused-cast passes are proposed on: a sum of a
// tensor passed to the launch, whole or along one dimension (positional or dim=), after the
// launch; not a sum of something else, over a tuple of dimensions, or with other options.
TEST(KernelFacts, LauncherSumsWholeOrAlongOneDimension) {
  auto facts = [](const std::string& epilogue) {
    ParsedSource src = test::parseText(R"(
import torch
import triton
import triton.language as tl


@triton.jit
def k(out_ptr, n):
    tl.store(out_ptr + tl.program_id(0), 1.0)


def launch(x):
    part = torch.empty((8, 4), dtype=torch.float32, device=x.device)
    k[(8,)](part, 4)
    return )" + epilogue + "\n");
    ModuleIR ir = buildModuleIR(src);
    return analyzeKernel(ir, *ir.kernel("k"));
  };
  for (std::string sums : {"part.sum()", "torch.sum(part)", "part.mean()", "part.sum(0)", "part.sum(dim=0)",
                           "torch.sum(part, -1)", "torch.mean(part, dim=1)"}) {
    EXPECT_TRUE(facts(sums).launcher_sums) << sums;
    EXPECT_FALSE(facts(sums).launcher_converts) << sums;
  }
  for (std::string other : {"x.sum(0)", "part.sum((0, 1))", "part.sum(0, keepdim=True)", "part"}) {
    EXPECT_FALSE(facts(other).launcher_sums) << other;
  }
  EXPECT_TRUE(facts("part.to(torch.bfloat16)").launcher_converts);
  EXPECT_TRUE(facts("part.half()").launcher_converts);
}

}  // namespace
}  // namespace tf

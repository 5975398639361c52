// How real code launches Triton (issue 12): a launcher that is an autograd Function's
// apply (forward launches), a module alias of it, helpers and methods reached through
// self, a kernel passed as a parameter's default, and kernels imported from a sibling module
// of the package. Each is followed to its launch and tuned there; what cannot be followed
// names itself.
#include <gtest/gtest.h>

#include "kernel/kernel_ir.h"
#include "kernel/module_ir.h"
#include "kernel/tunables.h"
#include "support/test_support.h"
#include "task/imported_kernels.h"
#include "task/source_parser.h"
#include "task/task.h"
#include "transform/kernel_normalize.h"
#include "transform/pass_applier.h"
#include "transform/pass_context.h"
#include "worker/worker_process.h"

namespace tf {
namespace {

namespace fs = std::filesystem;

const char* kAutograd = R"(import torch
import triton
import triton.language as tl


@triton.jit
def _norm_fwd(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + cols, mask=cols < n, other=0.0)
    tl.store(y_ptr + row * n + cols, x / tl.sum(x, axis=0), mask=cols < n)


def _launch(x, y, block):
    _norm_fwd[(x.shape[0],)](x, y, x.shape[1], BLOCK=block, num_warps=4)


class NormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.empty_like(x)
        NormFunction._run(x, y)
        return y

    @staticmethod
    def _run(x, y):
        _launch(x, y, 1024)


class Wrapper:
    def __call__(self, x):
        return self.go(x)

    def go(self, x):
        return NormFunction.apply(x)


norm = NormFunction.apply
Alias = NormFunction
odd = functools.partial(_launch, block=64)
)";

TEST(LaunchPatterns, AutogradApplyAliasesAndMethodsReachTheLaunch) {
  ParsedSource src = test::parseText(kAutograd);
  ModuleIR ir = buildModuleIR(src);
  EXPECT_EQ(ir.entryFunctions("NormFunction.apply"), std::vector<std::string>{"NormFunction.forward"});
  EXPECT_EQ(ir.entryFunctions("norm"), std::vector<std::string>{"NormFunction.forward"});
  EXPECT_EQ(ir.entryFunctions("Alias.apply"), std::vector<std::string>{"NormFunction.forward"});
  EXPECT_EQ(ir.entryFunctions("Wrapper.__call__"), std::vector<std::string>{"Wrapper.__call__"});
  for (const char* launcher : {"NormFunction.apply", "norm", "Wrapper.__call__", "_launch"}) {
    TunableSet set = discoverTunables(ir, launcher, {});
    ASSERT_EQ(set.sites.size(), 1u) << launcher;
    const Tunable* warps = set.find("_norm_fwd.num_warps");
    ASSERT_NE(warps, nullptr) << launcher;
    EXPECT_TRUE(warps->tunable) << launcher;
  }
  std::string why;
  EXPECT_TRUE(ir.entryFunctions("odd", &why).empty());
  EXPECT_NE(why.find("functools.partial(_launch, block=64)"), std::string::npos) << why;
  EXPECT_NE(why.find("line 40"), std::string::npos) << why;
  EXPECT_TRUE(ir.entryFunctions("Missing.apply", &why).empty());
  EXPECT_TRUE(ir.entryFunctions("torch", &why).empty());
  EXPECT_NE(why.find("is imported"), std::string::npos) << why;
}

TEST(LaunchPatterns, AKernelPassedAsADefaultIsLaunched) {
  ParsedSource src = test::parseText(R"(import triton
import triton.language as tl


@triton.jit
def _fwd(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def scale(x, implementation=_fwd):
    implementation[(triton.cdiv(x.numel(), 256),)](x, x.numel(), BLOCK=256)
    return x
)");
  ModuleIR ir = buildModuleIR(src);
  ASSERT_EQ(ir.launches.size(), 1u);
  EXPECT_EQ(ir.launches[0].kernel, "_fwd");
  TunableSet set = discoverTunables(ir, "scale", {});
  const Tunable* block = set.find("_fwd.BLOCK");
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(block->value, 256);
  EXPECT_TRUE(block->tunable);
  EXPECT_EQ(block->mirrors.size(), 1u);
}

// The kernel travels as an argument: the launcher's parameter defaults to it, and
// Function.apply hands it to forward, which launches it.
TEST(LaunchPatterns, AKernelPassedThroughApplyIsLaunched) {
  ParsedSource src = test::parseText(R"(import torch
import triton
import triton.language as tl


@triton.jit
def _fwd(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, implementation, block):
        implementation[(triton.cdiv(x.numel(), block),)](x, x.numel(), BLOCK=block, num_warps=4)
        return x


def scale(x, implementation=_fwd):
    return Scale.apply(x, implementation, 512)
)");
  ModuleIR ir = buildModuleIR(src);
  ASSERT_EQ(ir.launches.size(), 1u);
  EXPECT_EQ(ir.launches[0].kernel, "_fwd");
  EXPECT_EQ(ir.launches[0].function, "Scale.forward");
  TunableSet set = discoverTunables(ir, "scale", {});
  ASSERT_EQ(set.sites.size(), 1u);
  const Tunable* warps = set.find("_fwd.num_warps");
  ASSERT_NE(warps, nullptr);
  EXPECT_TRUE(warps->tunable);
}

// ops/__init__.py, ops/kernels.py (the kernel, with a default), ops/norm.py (the launcher,
// importing the kernel relatively).
const char* kLocalBindings = R"(import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit
def other_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


TABLE = {"copy": copy_kernel, "other": other_kernel}


def by_table(x, y):
    k = TABLE["copy"]
    k[(triton.cdiv(x.numel(), 512),)](x, y, x.numel(), BLOCK=512)


def by_name(x, y, fast):
    k = copy_kernel if fast else copy_kernel
    k[(triton.cdiv(x.numel(), 512),)](x, y, x.numel(), BLOCK=512)


def by_choice(x, y, fast):
    k = copy_kernel if fast else other_kernel
    k[(1,)](x, y, x.numel(), BLOCK=512)


def by_key(x, y, which):
    k = TABLE[which]
    k[(1,)](x, y, x.numel(), BLOCK=512)


class Copy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.empty_like(x)
        by_table(x, y)
        return y


def through_alias(x):
    f = Copy.apply
    return f(x)


def through_globals(x):
    g = globals()["through_alias"]
    return g(x)
)";

// A local name bound to a kernel (directly, through a constant key of a module-level dict
// literal, or by a conditional) is followed to its launch, and a local name bound to a
// callable (f = Copy.apply) is followed as a call. A dict read with a key of the data and a
// callable fetched from globals() are refused with one line naming the construct and its line.
TEST(LaunchPatterns, LocalBindingsAreFollowedOrNamedWithTheirLine) {
  ParsedSource src = test::parseText(kLocalBindings);
  ModuleIR ir = buildModuleIR(src);
  for (const char* launcher : {"by_table", "by_name", "Copy.apply", "through_alias"}) {
    TunableSet set = discoverTunables(ir, launcher, {});
    ASSERT_EQ(set.sites.size(), 1u) << launcher;
    const Tunable* block = set.find("copy_kernel.BLOCK");
    ASSERT_NE(block, nullptr) << launcher;
    EXPECT_TRUE(block->tunable) << launcher;
  }
  auto refusal = [&](const char* launcher) {
    TunableSet set = discoverTunables(ir, launcher, {});
    EXPECT_TRUE(set.sites.empty()) << launcher;
    std::string all;
    for (const auto& n : set.notes) all += n + "\n";
    return all;
  };
  // Bound to two kernels: a launch site for each; the text at the launch is one, so the
  // second kernel's block follows the first's.
  TunableSet both = discoverTunables(ir, "by_choice", {});
  ASSERT_EQ(both.sites.size(), 2u);
  ASSERT_NE(both.find("copy_kernel.BLOCK"), nullptr);
  ASSERT_NE(both.find("other_kernel.BLOCK"), nullptr);
  EXPECT_TRUE(both.find("copy_kernel.BLOCK")->tunable);
  EXPECT_FALSE(both.find("other_kernel.BLOCK")->tunable);
  EXPECT_NE(both.find("other_kernel.BLOCK")->note.find("follows that parameter"), std::string::npos);
  // num_warps is inserted into the one call once, not once per kernel.
  ASSERT_NE(both.find("copy_kernel.num_warps"), nullptr);
  ASSERT_NE(both.find("other_kernel.num_warps"), nullptr);
  EXPECT_TRUE(both.find("copy_kernel.num_warps")->tunable);
  EXPECT_FALSE(both.find("other_kernel.num_warps")->tunable);
  std::string why = refusal("by_key");
  EXPECT_NE(why.find("line 38: `k[...](...)` launches 'k', bound to `TABLE[which]` (line 37)"), std::string::npos)
      << why;
  why = refusal("through_globals");
  EXPECT_NE(why.find("line 56: `g(...)` calls 'g', bound to `globals()[\"through_alias\"]` (line 55)"),
            std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), why.size() - 1) << "one line: " << why;
}

const char* kWithBackward = R"(import torch
import triton
import triton.language as tl


@triton.jit
def _fwd(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x * x, mask=offs < n)


@triton.jit
def _bwd(x_ptr, dy_ptr, dx_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    dy = tl.load(dy_ptr + offs, mask=offs < n)
    tl.store(dx_ptr + offs, 2 * x * dy, mask=offs < n)


def _backward_launch(x, dy):
    dx = torch.empty_like(x)
    _bwd[(triton.cdiv(x.numel(), 256),)](x, dy, dx, x.numel(), BLOCK=256)
    return dx


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.empty_like(x)
        _fwd[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        ctx.save_for_backward(x)
        return y

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        return _backward_launch(x, dy)


class ForwardOnly(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.empty_like(x)
        _fwd[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y


square = Square.apply
)";

// direction = "backward": the kernels the backward methods launch (through helpers too) are
// the ones tuned, not the forward's; a launcher reaching no backward says so.
TEST(LaunchPatterns, ABackwardTaskTunesTheKernelsOfTheBackward) {
  ParsedSource src = test::parseText(kWithBackward);
  ModuleIR ir = buildModuleIR(src);
  TunableSet fwd = discoverTunables(ir, "square", {});
  ASSERT_EQ(fwd.sites.size(), 1u);
  EXPECT_NE(fwd.find("_fwd.BLOCK"), nullptr);
  EXPECT_EQ(fwd.find("_bwd.BLOCK"), nullptr);
  TunableSet back = discoverTunables(ir, "square", {}, true);
  ASSERT_EQ(back.sites.size(), 1u);
  ASSERT_NE(back.find("_bwd.BLOCK"), nullptr);
  EXPECT_TRUE(back.find("_bwd.BLOCK")->tunable);
  EXPECT_EQ(back.find("_fwd.BLOCK"), nullptr);
  TunableSet none = discoverTunables(ir, "ForwardOnly.apply", {}, true);
  EXPECT_TRUE(none.sites.empty());
  std::string all;
  for (const auto& n : none.notes) all += n + "\n";
  EXPECT_NE(all.find("reaches no torch.autograd.Function with a backward method"), std::string::npos) << all;
}

TEST(LaunchPatterns, KernelsImportedFromASiblingModuleAreTunedAtTheLaunch) {
  fs::path dir = test::tempDir("sibling");
  test::writeFile(dir / "ops" / "__init__.py", "");
  test::writeFile(dir / "ops" / "kernels.py", R"(import triton
import triton.language as tl


@triton.jit
def rms_kernel(x_ptr, y_ptr, n, eps, BLOCK: tl.constexpr, ROWS: tl.constexpr = 1):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + cols, mask=cols < n, other=0.0).to(tl.float32)
    r = tl.rsqrt(tl.sum(x * x, axis=0) / n + eps)
    tl.store(y_ptr + row * n + cols, x * r, mask=cols < n)
)");
  test::writeFile(dir / "ops" / "norm.py", R"(import torch
import triton
from .kernels import rms_kernel as _rms


def rms_norm(x, eps=1e-6):
    y = torch.empty_like(x)
    _rms[(x.shape[0],)](x, y, x.shape[1], eps, BLOCK=triton.next_power_of_2(x.shape[1]), num_warps=8)
    return y
)");
  SourcePackage pkg = packageOf(dir / "ops" / "norm.py");
  EXPECT_EQ(pkg.name, "ops");
  EXPECT_EQ(pkg.root, dir);
  WorkerProcess parser(test::workerOptions(false));
  ParsedSource src = parseFile(parser, dir / "ops" / "norm.py", "source");
  auto imported = loadImportedKernels(parser, src, dir / "ops" / "norm.py", pkg);
  ASSERT_EQ(imported->kernels.size(), 1u);
  EXPECT_EQ(imported->kernels[0].name, "rms_kernel");
  ModuleIR ir = buildModuleIR(src, &imported->kernels);
  ASSERT_NE(ir.kernel("_rms"), nullptr);
  EXPECT_NE(ir.kernel("_rms")->home, nullptr);
  TunableSet set = discoverTunables(ir, "rms_norm", {});
  ASSERT_EQ(set.sites.size(), 1u);
  const Tunable* warps = set.find("_rms.num_warps");
  ASSERT_NE(warps, nullptr);
  EXPECT_TRUE(warps->tunable);     // written at the launch, in the task's source
  EXPECT_EQ(warps->value, 8);
  const Tunable* rows = set.find("_rms.ROWS");
  ASSERT_NE(rows, nullptr);
  EXPECT_FALSE(rows->tunable);     // the kernel's default, in kernels.py
  EXPECT_NE(rows->note.find("kernels.py"), std::string::npos) << rows->note;
  // The kernel's facts come from its own module (tl resolved through its imports).
  ASSERT_TRUE(set.facts.count("_rms"));
  EXPECT_GE(set.facts.at("_rms").reductions, 1);
}

// A module of the package imported whole (`import ops.ext as tle`, `from . import ext`): the
// @triton.jit helpers it defines are inlined where the kernel calls them (tle.program_id(0)),
// so the kernel's addresses stay understood.
TEST(LaunchPatterns, HelpersOfAModuleImportedWholeAreInlined) {
  fs::path dir = test::tempDir("module_import");
  test::writeFile(dir / "ops" / "__init__.py", "");
  test::writeFile(dir / "ops" / "ext.py", R"(import triton
import triton.language as tl


@triton.jit
def program_id(axis: tl.constexpr):
    return tl.program_id(axis).to(tl.int64)


@triton.jit
def twice(x):
    return x * 2
)");
  test::writeFile(dir / "ops" / "scale.py", R"(import triton
import triton.language as tl
import ops.ext as tle
from . import ext


@triton.jit
def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
    pid = tle.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, ext.twice(x), mask=offs < n)


def scale(x):
    scale_kernel[(triton.cdiv(x.numel(), 256),)](x, x.numel(), BLOCK=256)
    return x
)");
  SourcePackage pkg = packageOf(dir / "ops" / "scale.py");
  WorkerProcess parser(test::workerOptions(false));
  ParsedSource src = parseFile(parser, dir / "ops" / "scale.py", "source");
  auto imported = loadImportedKernels(parser, src, dir / "ops" / "scale.py", pkg);
  EXPECT_EQ(imported->kernels.size(), 4u);  // two helpers, under each of the two imports
  ModuleIR ir = buildModuleIR(src, &imported->kernels);
  ASSERT_NE(ir.kernel("tle.program_id"), nullptr);
  ASSERT_NE(ir.kernel("ext.twice"), nullptr);
  KernelIR k = buildKernelIR(ir, *ir.kernel("scale_kernel"));
  EXPECT_TRUE(k.opaque.empty()) << k.opaque.front().reason;
  TunableSet set = discoverTunables(ir, "scale", {});
  const Tunable* block = set.find("scale_kernel.BLOCK");
  ASSERT_NE(block, nullptr);
  EXPECT_TRUE(block->tunable);
}

// FlagGems reads every program id through `tle.program_id(axis)` (a helper of another module
// of its package that widens it to int64): the normal form reads tl.program_id there, so the
// passes that look for the row's id find it; the pass itself still sees the kernel as written.
TEST(LaunchPatterns, AProgramIdThroughAnImportedHelperIsReadInTheNormalForm) {
  fs::path dir = test::tempDir("imported_pid_helper");
  test::writeFile(dir / "gems" / "__init__.py", "");
  test::writeFile(dir / "gems" / "utils" / "__init__.py", "");
  test::writeFile(dir / "gems" / "utils" / "lang_ext.py", R"(import triton
import triton.language as tl


@triton.jit
def program_id(axis: int) -> tl.tensor:
    """The program id as int64."""
    return tl.program_id(axis).to(tl.int64)


@triton.jit
def num_programs(axis: int) -> tl.tensor:
    return tl.num_programs(axis).to(tl.int64)
)");
  const std::string launcher = R"(import torch
import triton
import triton.language as tl

from gems.utils import lang_ext as tle


@triton.jit
def softmax_rows(out_ptr, in_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tle.program_id(0)
    in_ptr += row * stride
    out_ptr += row * stride
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + cols, mask=cols < n_cols, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)


def softmax(x):
    out = torch.empty_like(x)
    softmax_rows[(x.shape[0],)](out, x, x.shape[1], x.stride(0), BLOCK=triton.next_power_of_2(x.shape[1]))
    return out
)";
  test::writeFile(dir / "gems" / "ops" / "__init__.py", "");
  test::writeFile(dir / "gems" / "ops" / "softmax.py", launcher);
  fs::path path = dir / "gems" / "ops" / "softmax.py";
  WorkerProcess parser(test::workerOptions(false));
  ParsedSource src = parseFile(parser, path, "source");
  auto imported = loadImportedKernels(parser, src, path, packageOf(path));
  ModuleIR ir = buildModuleIR(src, &imported->kernels);
  ASSERT_NE(ir.kernel("tle.program_id"), nullptr);

  TransformSettings settings;
  settings.source_path = path;
  settings.compile = false;
  TransformPassApplier without(parser, settings, {});
  PassApplication refused = without.apply({launcher, "softmax_rows", "rows-per-program", nlohmann::json::object()});
  EXPECT_EQ(refused.status, PassApplication::Status::kRefused) << "the helper's module is not read";

  settings.imported = &imported->kernels;
  TransformPassApplier applier(parser, settings, {});
  PassApplication a = applier.apply({launcher, "softmax_rows", "rows-per-program", nlohmann::json::object()});
  ASSERT_EQ(a.status, PassApplication::Status::kApplied) << a.message;
  std::string notes;
  for (const auto& n : a.notes) notes += n + "\n";
  EXPECT_NE(notes.find("1 program id(s) read through a @triton.jit helper read tl.program_id"), std::string::npos)
      << notes;
  EXPECT_NE(a.source.find("        row = pid_0.to(tl.int64)\n"), std::string::npos) << a.source;
  // Each row starts from the pointers the program was given.
  EXPECT_NE(a.source.find("    in_ptr_in = in_ptr\n"), std::string::npos) << a.source;
  EXPECT_NE(a.source.find("        in_ptr = in_ptr_in\n"), std::string::npos) << a.source;

  // A program count through the helper reads tl.num_programs in the normal form.
  std::string counts = launcher;
  counts.replace(counts.find("    in_ptr += row * stride"), 0, "    last = tle.num_programs(0) - 1\n");
  PassContext ctx;
  ParsedSource src2 = parseSource(parser, path, counts);
  ModuleIR ir2 = buildModuleIR(src2, &imported->kernels);
  ctx = PassContext::make(ir2, *ir2.kernel("softmax_rows"));
  std::optional<NormalizedKernel> n = normalizeKernel(ctx);
  ASSERT_TRUE(n.has_value());
  EXPECT_NE(n->source.find("    last = tl.num_programs(0).to(tl.int64) - 1\n"), std::string::npos) << n->source;
  EXPECT_NE(n->source.find("    row = pid_0.to(tl.int64)\n"), std::string::npos) << n->source;
}

// relayout edits only the launch: it applies to a kernel imported from a sibling module (the
// launch in the task's source passes the copy); a pass that edits the kernel refuses there.
TEST(LaunchPatterns, AnImportedKernelsOperandsAreRelaidAtTheLaunchOnly) {
  fs::path dir = test::tempDir("sibling_relayout");
  test::writeFile(dir / "ops" / "__init__.py", "");
  std::string golden = test::readFile(test::sourceDir() / "tests" / "golden" / "transform" / "relayout" /
                                      "conv_nchw" / "input.py");
  std::string kernels = golden.substr(0, golden.find("\ndef conv2d_nchw"));
  test::writeFile(dir / "ops" / "kernels.py", kernels);
  std::string launcher = "import torch\nimport triton\nfrom .kernels import conv_nchw_kernel\n\n" +
                         golden.substr(golden.find("\ndef conv2d_nchw"));
  test::writeFile(dir / "ops" / "conv.py", launcher);
  WorkerProcess parser(test::workerOptions(false));
  ParsedSource src = parseFile(parser, dir / "ops" / "conv.py", "source");
  auto imported = loadImportedKernels(parser, src, dir / "ops" / "conv.py", packageOf(dir / "ops" / "conv.py"));
  ASSERT_EQ(imported->kernels.size(), 1u);

  TransformSettings settings;
  settings.source_path = dir / "ops" / "conv.py";
  settings.imported = &imported->kernels;
  TransformPassApplier applier(parser, settings, {});
  PassApplication a = applier.apply({launcher, "conv_nchw_kernel", "relayout", nlohmann::json::object()});
  ASSERT_EQ(a.status, PassApplication::Status::kApplied) << a.message;
  EXPECT_NE(a.source.find("    w_tf = w if w.stride(1) == 1 else w.movedim(1, -1).contiguous().movedim(-1, 1)"),
            std::string::npos)
      << a.source;
  EXPECT_NE(a.source.find("conv_nchw_kernel[grid](x_tf, w_tf, y,"), std::string::npos) << a.source;
  EXPECT_NE(a.source.find("*x_tf.stride(), *w_tf.stride(), *y.stride()"), std::string::npos) << a.source;
  EXPECT_EQ(a.check.value("status", ""), "skipped") << a.check.dump();
  EXPECT_EQ(test::readFile(dir / "ops" / "kernels.py"), kernels);  // the kernel's file is not touched

  PassApplication b = applier.apply({launcher, "conv_nchw_kernel", "flatten-loops", nlohmann::json::object()});
  EXPECT_EQ(b.status, PassApplication::Status::kRefused);
  EXPECT_NE(b.message.find("is imported"), std::string::npos) << b.message;
}

// unsloth's style: the kernel is a plain function, decorated by assignments after it
// (`k = triton.jit(k)`, then `k = triton.heuristics({...})(k)`); the heuristic's block is
// read, and an autotune decorator goes above the `def`, not at the assignment.
TEST(LaunchPatterns, AKernelDecoratedByAssignmentIsAKernel) {
  const std::string text = R"(import triton
import triton.language as tl


def _scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


_scale = triton.jit(_scale)
_scale = triton.heuristics({"BLOCK": lambda args: 512})(_scale)


def scale(x):
    _scale[(triton.cdiv(x.numel(), 512),)](x, x.numel(), num_warps=4)
    return x
)";
  ParsedSource src = test::parseText(text);
  ModuleIR ir = buildModuleIR(src);
  ASSERT_EQ(ir.kernels.size(), 1u);
  EXPECT_EQ(ir.kernels[0].name, "_scale");
  ASSERT_EQ(ir.launches.size(), 1u);
  TunableSet set = discoverTunables(ir, "scale", {});
  const Tunable* warps = set.find("_scale.num_warps");
  ASSERT_NE(warps, nullptr);
  EXPECT_TRUE(warps->tunable);
  const Tunable* block = set.find("_scale.BLOCK");
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(block->value, 512);
  EXPECT_EQ(definitionTopLine(*ir.kernels[0].def), 5);
}

// A version gate at module level (`if triton.__version__ >= ...:`) around the kernel: the
// kernel of the `if` branch is the kernel; an `else` branch's kernel of the same name is not
// a second one; a kernel only the `try`'s handler defines is still found.
TEST(LaunchPatterns, KernelsUnderAModuleLevelGateAreKernels) {
  ParsedSource src = test::parseText(R"(import triton
import triton.language as tl

if triton.__version__ >= "2.1.0":

    @triton.jit
    def _fwd(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)

else:

    @triton.jit
    def _fwd(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)

try:
    from fast_ops import _neg
except ImportError:

    @triton.jit
    def _neg(x_ptr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, -tl.load(x_ptr + offs))


def run(x):
    _fwd[(triton.cdiv(x.numel(), 256),)](x, x.numel(), BLOCK=256)
    return x


SIZE = 4096

if __name__ == "__main__":
    SIZE = 8
)");
  ModuleIR ir = buildModuleIR(src);
  ASSERT_EQ(ir.kernels.size(), 2u);
  // A script's own code under `if __name__ == "__main__":` is not read as the module's.
  ASSERT_TRUE(ir.module_assignments.count("SIZE"));
  EXPECT_EQ(intLiteral(*ir.module_assignments.at("SIZE")), 4096);
  const Kernel* fwd = ir.kernel("_fwd");
  ASSERT_NE(fwd, nullptr);
  EXPECT_EQ(nodePos(*fwd->def)->line, 7);  // the `if` branch's
  EXPECT_NE(ir.kernel("_neg"), nullptr);
  TunableSet set = discoverTunables(ir, "run", {});
  const Tunable* block = set.find("_fwd.BLOCK");
  ASSERT_NE(block, nullptr);
  EXPECT_TRUE(block->tunable);
}

// The static facts say which kernels call tl.exp (the rule engine offers them the exp2 fold).
TEST(KernelFacts, CallsExpIsSeenInAttentionNotInAMatmul) {
  WorkerProcess parser(test::workerOptions(false));
  auto facts = [&](const char* rel, const char* launcher, const char* kernel) {
    ParsedSource src = parseFile(parser, test::sourceDir() / rel, "source");
    ModuleIR ir = buildModuleIR(src, nullptr);
    TunableSet set = discoverTunables(ir, launcher, {});
    return set.facts.at(kernel);
  };
  EXPECT_TRUE(facts("bench/kernels/attention/attention.py", "attention", "attention_fwd_kernel").calls_exp);
  EXPECT_FALSE(facts("bench/kernels/matmul_fp16/matmul_fp16.py", "matmul", "matmul_kernel").calls_exp);
  EXPECT_FALSE(facts("bench/kernels/attention/attention.py", "attention", "attention_fwd_kernel").calls_exp2);
  // tl.math.exp2 (the FlashAttention-2 Triton form): base 2, not tl.exp.
  const KernelFacts base2 =
      facts("tests/golden/transform/gluon-attention/exp2_folded_scale/input.py", "attention", "attn_fwd");
  EXPECT_TRUE(base2.calls_exp2);
  EXPECT_FALSE(base2.calls_exp);
  EXPECT_EQ(base2.helper_dots_in_loops, 0);
  // The key loop in a helper called twice (before and on the diagonal): its dots in loops and
  // its exp2 count for the kernel (the rule proposes the Gluon attention from them).
  const KernelFacts staged =
      facts("tests/golden/transform/gluon-attention/stage_mode_helper_loop/input.py", "attention", "staged_attention");
  EXPECT_TRUE(staged.dots.empty());
  EXPECT_EQ(staged.helper_dots_in_loops, 4);
  EXPECT_TRUE(staged.helper_calls_exp);
  EXPECT_FALSE(staged.calls_exp2);
}

}  // namespace
}  // namespace tf

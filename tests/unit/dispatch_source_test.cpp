// The per-shape dispatch's source: module names renamed along Python's scopes, and the merged
// module with its dispatching launcher, run under Triton's CPU interpreter
// (transform/dispatch_source.h).
#include <gtest/gtest.h>

#include "support/test_support.h"
#include "transform/dispatch_source.h"

namespace tf {
namespace {
namespace fs = std::filesystem;

const char* const kScoped = R"(import torch
import triton
import triton.language as tl
from triton import cdiv

BLOCK = 128
SCALE: float = 2.0


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def helper(n):
    return cdiv(n, BLOCK)


class Holder:
    BLOCK = 7
    size = BLOCK

    def get(self):
        return BLOCK


def add(x, y):
    global SCALE
    out = torch.empty_like(x)
    n = x.numel()
    grid = lambda META: (cdiv(n, META["BLOCK"]),)
    add_kernel[grid](x, y, out, n, BLOCK=BLOCK)
    helper = [BLOCK for BLOCK in range(3)]
    return out.BLOCK, f"{SCALE}"


if __name__ == "__main__":
    add(1, 2)
)";

TEST(DispatchSource, RenamesWhereTheModuleBindingIsMeant) {
  ParsedSource src = test::parseText(kScoped);
  MergedSource r = renameModuleNames(src, "_tfv1");
  ASSERT_EQ(r.refused, "");
  const std::string& t = r.text;
  EXPECT_NE(t.find("\nBLOCK_tfv1 = 128\n"), std::string::npos) << t;
  EXPECT_NE(t.find("\nSCALE_tfv1: float = 2.0\n"), std::string::npos) << t;
  // The kernel's parameter shadows the module's BLOCK: its uses stay.
  EXPECT_NE(t.find("def add_kernel_tfv1(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
                   "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)"),
            std::string::npos) << t;
  EXPECT_NE(t.find("def helper_tfv1(n):\n    return cdiv(n, BLOCK_tfv1)"), std::string::npos) << t;
  // A class body's own binding stays; its methods see the module's.
  EXPECT_NE(t.find("class Holder_tfv1:\n    BLOCK = 7\n    size = BLOCK\n"), std::string::npos) << t;
  EXPECT_NE(t.find("def get(self):\n        return BLOCK_tfv1"), std::string::npos) << t;
  EXPECT_NE(t.find("def add_tfv1(x, y):\n    global SCALE_tfv1\n"), std::string::npos) << t;
  // Keyword names, attributes, strings and imports stay; the local `helper` and the
  // comprehension's BLOCK shadow the module's.
  EXPECT_NE(t.find("add_kernel_tfv1[grid](x, y, out, n, BLOCK=BLOCK_tfv1)"), std::string::npos) << t;
  EXPECT_NE(t.find("(cdiv(n, META[\"BLOCK\"]),)"), std::string::npos) << t;
  EXPECT_NE(t.find("helper = [BLOCK for BLOCK in range(3)]"), std::string::npos) << t;
  EXPECT_NE(t.find("return out.BLOCK, f\"{SCALE_tfv1}\""), std::string::npos) << t;
  EXPECT_NE(t.find("from triton import cdiv\n"), std::string::npos) << t;
  // Run as a script, the original's block runs, not the appended one's.
  EXPECT_NE(t.find("    add_tfv1(1, 2)"), std::string::npos) << t;
  MergedSource dropped = renameModuleNames(src, "_tfv1", true);
  EXPECT_EQ(dropped.text.find("__main__"), std::string::npos) << dropped.text;
  // What it writes parses.
  EXPECT_NO_THROW(test::parseText(dropped.text));
}

TEST(DispatchSource, RefusesWhatTheRenamingCannotFollow) {
  MergedSource r = renameModuleNames(test::parseText("import math\nmath = 3\n"), "_tfv1");
  EXPECT_NE(r.refused.find("'math' both by an import"), std::string::npos) << r.refused;
  ParsedSource add = test::parseText(test::kAddKernelSource);
  DispatchSourceSpec spec;
  spec.launcher = "add.x.y";
  EXPECT_NE(mergeDispatch(add, {&add}, spec).refused.find("not a name bound at the module's top level"),
            std::string::npos);
  spec.launcher = "missing";
  EXPECT_NE(mergeDispatch(add, {&add}, spec).refused.find("'missing'"), std::string::npos);
  spec.launcher = "add";
  ParsedSource other = test::parseText("def other(x):\n    return x\n");
  EXPECT_NE(mergeDispatch(add, {&other}, spec).refused.find("variant 1 has no launcher 'add'"), std::string::npos);
}

// The kernel as written adds; variant 1 (routed for 1..1000 elements) subtracts, a planted
// fault that shows which route ran; variant 2 (routed for 1001..4000) adds with BLOCK=256.
std::string mergedAdd() {
  std::string as_written = test::kAddKernelSource;
  std::string sub = as_written;
  sub.replace(sub.find("x + y"), 5, "x - y");
  std::string wide = as_written;
  for (size_t at = wide.find("128"); at != std::string::npos; at = wide.find("128", at)) wide.replace(at, 3, "256");
  ParsedSource a = test::parseText(as_written), v1 = test::parseText(sub), v2 = test::parseText(wide);
  DispatchSourceSpec spec;
  spec.launcher = "add";
  spec.arg_index = 0;
  spec.arg_name = "x";
  spec.dim = 0;
  spec.routes = {{1, 1000, 0, "measured on n=500"}, {1001, 4000, 1, "measured on n=2000"}};
  spec.variant_notes = {"#3 (subtracts)", "#7 (BLOCK=256)"};
  MergedSource m = mergeDispatch(a, {&v1, &v2}, spec);
  EXPECT_EQ(m.refused, "");
  return m.text;
}

TEST(DispatchSource, TheMergedModuleKeepsTheOriginalThenAddsRoutes) {
  std::string t = mergedAdd();
  EXPECT_EQ(t.rfind(test::kAddKernelSource, 0), 0u) << "the kernel as written comes first, unchanged";
  EXPECT_NE(t.find("def add_kernel_tfv1("), std::string::npos);
  EXPECT_NE(t.find("def add_kernel_tfv2("), std::string::npos);
  EXPECT_NE(t.find("    (1, 1000, add_tfv1),  # measured on n=500\n"), std::string::npos) << t;
  EXPECT_NE(t.find("    (1001, 4000, add_tfv2),  # measured on n=2000\n"), std::string::npos) << t;
  EXPECT_NE(t.find("v = args[0] if len(args) > 0 else kwargs.get(\"x\")"), std::string::npos) << t;
  EXPECT_NO_THROW(test::parseText(t));
}

// An autograd Function's apply, the launcher of many real tasks: the class as written gets the
// dispatching apply, and each route calls its variant's class.
TEST(DispatchSource, AnAttributeLauncherIsReplacedOnItsClass) {
  const char* src = R"(import torch


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2
)";
  ParsedSource a = test::parseText(src);
  DispatchSourceSpec spec;
  spec.launcher = "Scale.apply";
  spec.routes = {{1, 8, 0, ""}};
  MergedSource m = mergeDispatch(a, {&a}, spec);
  ASSERT_EQ(m.refused, "");
  EXPECT_NE(m.text.find("class Scale_tfv1(torch.autograd.Function):"), std::string::npos) << m.text;
  EXPECT_NE(m.text.find("_tf_Scale_as_written = Scale.apply\n"), std::string::npos) << m.text;
  EXPECT_NE(m.text.find("    (1, 8, Scale_tfv1.apply),"), std::string::npos) << m.text;
  EXPECT_NE(m.text.find("def _tf_Scale_dispatch(*args, **kwargs):"), std::string::npos) << m.text;
  EXPECT_NE(m.text.find("\nScale.apply = staticmethod(_tf_Scale_dispatch)\n"), std::string::npos) << m.text;
  EXPECT_NO_THROW(test::parseText(m.text));
}

TEST(DispatchSource, RoutesByShapeUnderTheInterpreter) {
  fs::path dir = test::tempDir("dispatch-interpret");
  test::writeFile(dir / "addmod.py", mergedAdd());
  test::writeFile(dir / "check.py", R"(import inspect, os, sys
os.environ["TRITON_INTERPRET"] = "1"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import torch
except ImportError:
    print("SKIP: no torch")
    sys.exit(0)
import addmod
for n, want in ((500, "sub"), (2000, "add"), (5000, "add"), (1, "sub")):
    x = torch.arange(n, dtype=torch.float32)
    y = torch.ones(n)
    out = addmod.add(x, y)
    got = "sub" if torch.equal(out, x - y) else "add" if torch.equal(out, x + y) else "wrong"
    assert got == want, (n, got, want)
    out = addmod.add(x=x, y=y)
    assert torch.equal(out, x - y if want == "sub" else x + y), ("keywords", n)
assert list(inspect.signature(addmod.add).parameters) == ["x", "y"]
assert addmod.add.__name__ == "add"
print("ok")
)");
  std::string python = test::workerOptions().python;
  auto [rc, out] = test::runShell(python + " " + (dir / "check.py").string());
  if (out.rfind("SKIP", 0) == 0) GTEST_SKIP() << out;
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("ok"), std::string::npos) << out;
}

}  // namespace
}  // namespace tf

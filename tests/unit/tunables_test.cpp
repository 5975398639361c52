// Discovery of tunables on the examples and on sources built to show each way a value
// can be written, and the rewrite of configurations back into the source.
#include <gtest/gtest.h>

#include "kernel/module_ir.h"
#include "kernel/tunables.h"
#include "search/space.h"
#include "support/test_support.h"
#include "transform/apply_config.h"

namespace tf {
namespace {

struct Discovered {
  ParsedSource src;
  ModuleIR ir;
  TunableSet set;
};

std::unique_ptr<Discovered> discover(const std::string& text, const std::string& launcher) {
  auto d = std::make_unique<Discovered>();
  d->src = test::parseText(text);
  d->ir = buildModuleIR(d->src);
  d->set = discoverTunables(d->ir, launcher, {});
  return d;
}

std::unique_ptr<Discovered> discoverExample(const std::string& name, const std::string& launcher) {
  return discover(test::readFile(test::sourceDir() / "examples" / name / (name + ".py")), launcher);
}

const Tunable& get(const TunableSet& s, const std::string& id) {
  const Tunable* t = s.find(id);
  if (!t) throw std::runtime_error("no tunable " + id);
  return *t;
}

// A GEMM whose tiles come through in-kernel tensor descriptors (what tensor-cores' descriptor
// loads write, B K-major under a flag): the block shapes give the tiles their roles, so BLOCK_K
// stays tuned and BLOCK_M / BLOCK_N keep the dot's limits; the flag is left alone.
TEST(Tunables, DescriptorTilesKeepTheirRoles) {
  auto d = discover(R"PY(
import torch
import triton
import triton.language as tl


@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sbn, sbk, scm,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, B_K_MAJOR: tl.constexpr = False):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[sam, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = (tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[sbn, 1], block_shape=[BLOCK_N, BLOCK_K])
              if B_K_MAJOR else
              tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[sbk, 1], block_shape=[BLOCK_K, BLOCK_N]))
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = a_desc.load([pid_m * BLOCK_M, k0])
        b = (b_desc.load([pid_n * BLOCK_N, k0]).T if B_K_MAJOR else b_desc.load([k0, pid_n * BLOCK_N]))
        acc += tl.dot(a, b)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def mm(a, b):
    M, K = a.shape
    N = b.shape[0]
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)
    grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
    mm_kernel[grid](a, b, c, M, N, K, a.stride(0), b.stride(0), b.stride(1), c.stride(0),
                    BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, B_K_MAJOR=b.stride(0) != 1)
    return c
)PY", "mm");
  EXPECT_EQ(get(d->set, "mm_kernel.BLOCK_M").role, TunableRole::kTileM);
  EXPECT_EQ(get(d->set, "mm_kernel.BLOCK_N").role, TunableRole::kTileN);
  const auto& bk = get(d->set, "mm_kernel.BLOCK_K");
  EXPECT_EQ(bk.role, TunableRole::kTileK);
  EXPECT_TRUE(bk.tunable);
  EXPECT_FALSE(get(d->set, "mm_kernel.B_K_MAJOR").tunable);
}

TEST(Tunables, MatmulExample) {
  auto d = discoverExample("matmul", "matmul");
  ASSERT_EQ(d->set.items.size(), 5u);
  const auto& bm = get(d->set, "matmul_kernel.BLOCK_M");
  EXPECT_EQ(bm.origin, TunableOrigin::kLaunchLiteral);
  EXPECT_EQ(bm.role, TunableRole::kTileM);
  EXPECT_EQ(bm.value, 32);
  EXPECT_TRUE(bm.tunable);
  EXPECT_EQ(bm.mirrors.size(), 1u);  // triton.cdiv(M, 32): grid axis 0 only
  const auto& bn = get(d->set, "matmul_kernel.BLOCK_N");
  EXPECT_EQ(bn.role, TunableRole::kTileN);
  EXPECT_EQ(bn.mirrors.size(), 1u);
  EXPECT_NE(bn.mirrors[0].begin, bm.mirrors[0].begin);
  const auto& bk = get(d->set, "matmul_kernel.BLOCK_K");
  EXPECT_EQ(bk.role, TunableRole::kTileK);
  EXPECT_TRUE(bk.mirrors.empty());
  const auto& nw = get(d->set, "matmul_kernel.num_warps");
  EXPECT_EQ(nw.origin, TunableOrigin::kAbsentOption);
  EXPECT_EQ(nw.value, 4);
  const auto& ns = get(d->set, "matmul_kernel.num_stages");
  EXPECT_EQ(ns.value, 3);
  EXPECT_TRUE(ns.tunable);
}

TEST(Tunables, MatmulRewriteRoundTrip) {
  auto d = discoverExample("matmul", "matmul");
  Config c = {{"matmul_kernel.BLOCK_M", 128}, {"matmul_kernel.BLOCK_N", 64}, {"matmul_kernel.BLOCK_K", 64},
              {"matmul_kernel.num_warps", 8}, {"matmul_kernel.num_stages", 4}};
  std::string out = applyConfig(d->ir, d->set, c);
  EXPECT_NE(out.find("grid = (triton.cdiv(M, 128), triton.cdiv(N, 64))"), std::string::npos) << out;
  EXPECT_NE(out.find("BLOCK_M=128, BLOCK_N=64, BLOCK_K=64, num_warps=8, num_stages=4)"), std::string::npos) << out;
  // Re-discovered from the rewritten text, the values are the configuration's.
  auto again = discover(out, "matmul");
  EXPECT_EQ(get(again->set, "matmul_kernel.BLOCK_M").value, 128);
  EXPECT_EQ(get(again->set, "matmul_kernel.BLOCK_N").value, 64);
  EXPECT_EQ(get(again->set, "matmul_kernel.num_warps").origin, TunableOrigin::kLaunchLiteral);
  EXPECT_EQ(get(again->set, "matmul_kernel.num_warps").value, 8);
  EXPECT_EQ(get(again->set, "matmul_kernel.num_stages").value, 4);
  // Everything outside the edits is unchanged: the kernel body is byte for byte the same.
  std::string orig = d->src.source.text();
  size_t body_end = orig.find("def matmul(");
  EXPECT_EQ(out.substr(0, body_end), orig.substr(0, body_end));
}

TEST(Tunables, BaselineConfigReproducesTheSource) {
  for (const char* name : {"matmul", "softmax", "layernorm"}) {
    auto d = discoverExample(name, name);
    Config c;
    for (const auto& t : d->set.items) c[t.id] = t.value && t.origin != TunableOrigin::kLocalDerived ? *t.value : kKeep;
    EXPECT_EQ(applyConfig(d->ir, d->set, c), d->src.source.text()) << name;
  }
}

TEST(Tunables, SoftmaxBlockCoversTheRow) {
  auto d = discoverExample("softmax", "softmax");
  const auto& block = get(d->set, "softmax_rows.BLOCK");
  EXPECT_EQ(block.origin, TunableOrigin::kLocalDerived);
  EXPECT_EQ(block.expr_text, "triton.next_power_of_2(cols)");
  EXPECT_TRUE(block.covers_dimension);
  EXPECT_FALSE(block.tunable);
  const auto& nw = get(d->set, "softmax_rows.num_warps");
  EXPECT_EQ(nw.origin, TunableOrigin::kLaunchLiteral);
  EXPECT_EQ(nw.value, 4);
  EXPECT_TRUE(nw.tunable);
  EXPECT_FALSE(get(d->set, "softmax_rows.num_stages").tunable);  // no loop
}

TEST(Tunables, LayernormBlockLoops) {
  auto d = discoverExample("layernorm", "layernorm");
  const auto& block = get(d->set, "layernorm_fwd.BLOCK_SIZE");
  EXPECT_EQ(block.role, TunableRole::kBlock);
  EXPECT_FALSE(block.covers_dimension);
  EXPECT_TRUE(block.tunable);
  EXPECT_TRUE(get(d->set, "layernorm_fwd.num_stages").tunable);
}

const char* kAutotuned = R"(import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({'BLOCK': 128}, num_warps=4),
                          triton.Config({'BLOCK': 256}, num_warps=8, num_stages=2)], key=['n'])
@triton.jit
def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


def add(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    grid = lambda META: (triton.cdiv(n, META['BLOCK']),)
    add_kernel[grid](x, y, out, n)
    return out
)";

TEST(Tunables, AutotuneConfigsAreBakedIntoOne) {
  auto d = discover(kAutotuned, "add");
  const auto& block = get(d->set, "add_kernel.BLOCK");
  EXPECT_EQ(block.origin, TunableOrigin::kAutotune);
  EXPECT_EQ(block.value, 128);
  EXPECT_FALSE(block.covers_dimension);  // the grid follows META['BLOCK']
  EXPECT_EQ(get(d->set, "add_kernel.num_warps").origin, TunableOrigin::kAutotune);
  // Each of the configs' keys is its own dimension, though all of them are written in one list.
  EXPECT_TRUE(block.tunable) << block.note;
  EXPECT_TRUE(get(d->set, "add_kernel.num_warps").tunable) << get(d->set, "add_kernel.num_warps").note;
  ASSERT_TRUE(d->ir.kernels[0].autotune);
  EXPECT_EQ(d->ir.kernels[0].autotune->configs_list.size(), 2u);
  EXPECT_EQ(d->ir.kernels[0].autotune->key, std::vector<std::string>{"n"});
  std::string out = applyConfig(d->ir, d->set, {{"add_kernel.BLOCK", 1024}, {"add_kernel.num_warps", 2}});
  EXPECT_NE(out.find("@triton.autotune(configs=[triton.Config({'BLOCK': 1024}, num_warps=2)], key=['n'])"),
            std::string::npos)
      << out;
}

const char* kVariants = R"(import torch
import triton
import triton.language as tl
from triton import cdiv


@triton.heuristics({'BLOCK': lambda args: triton.next_power_of_2(args['n']) // 4})
@triton.jit
def scale_kernel(x, out, n, s, BLOCK: tl.constexpr, ROWS: tl.constexpr = 4):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    for r in range(ROWS):
        tl.store(out + offs + r * n, tl.load(x + offs + r * n) * s)


@triton.jit
def tile_kernel(x, out, M, N, BM: tl.constexpr, BN: tl.constexpr, FLAG: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    v = tl.load(x + rm[:, None] * N + rn[None, :])
    if FLAG:
        v = v * 2
    tl.store(out + rm[:, None] * N + rn[None, :], v)


def run(x, BLOCKX):
    out = torch.empty_like(x)
    n = x.shape[1]
    scale_kernel[(cdiv(n, 256),)](x, out, n, 2.0)
    M, N = x.shape
    BM, BN = 64, 32
    nw = 4
    if M > 1000:
        nw = 8
    tile_kernel[(cdiv(M, BM), cdiv(N, BN))](x, out, M, N, BM=BM, BN=BN, FLAG=True, num_warps=nw)
    tile_kernel[(cdiv(M, BLOCKX), 1)](x, out, M, N, BLOCKX, 16, False)
    return out
)";

TEST(Tunables, EveryWayOfWritingAValue) {
  auto d = discover(kVariants, "run");
  const auto& heur = get(d->set, "scale_kernel.BLOCK");
  EXPECT_EQ(heur.origin, TunableOrigin::kHeuristic);
  EXPECT_EQ(heur.expr_text, "triton.next_power_of_2(args['n']) // 4");
  EXPECT_TRUE(heur.tunable);
  const auto& rows = get(d->set, "scale_kernel.ROWS");
  EXPECT_EQ(rows.origin, TunableOrigin::kKernelDefault);
  EXPECT_EQ(rows.value, 4);
  EXPECT_FALSE(rows.tunable);  // a loop count, not a tile size
  const auto& bm = get(d->set, "tile_kernel.BM");
  EXPECT_EQ(bm.origin, TunableOrigin::kLocalLiteral);
  EXPECT_EQ(bm.value, 64);
  EXPECT_TRUE(bm.tunable);
  EXPECT_EQ(get(d->set, "tile_kernel.BN").value, 32);
  EXPECT_FALSE(get(d->set, "tile_kernel.FLAG").tunable);
  const auto& nw = get(d->set, "tile_kernel.num_warps");
  EXPECT_EQ(nw.origin, TunableOrigin::kLaunchOverride);
  EXPECT_TRUE(nw.tunable);
  // The second launch of tile_kernel: positional values, one from the launcher's parameter.
  const auto& bm2 = get(d->set, "tile_kernel.BM#2");
  EXPECT_FALSE(bm2.tunable);
  EXPECT_NE(bm2.note.find("launcher's parameter 'BLOCKX'"), std::string::npos) << bm2.note;
  const auto& bn2 = get(d->set, "tile_kernel.BN#2");
  EXPECT_EQ(bn2.origin, TunableOrigin::kLaunchLiteral);
  EXPECT_EQ(bn2.value, 16);
  EXPECT_TRUE(bn2.mirrors.empty());  // the grid's axis 1 is the literal 1, not 16

  std::string out = applyConfig(d->ir, d->set,
                                {{"scale_kernel.BLOCK", 512}, {"tile_kernel.BM", 128}, {"tile_kernel.num_warps", 2},
                                 {"tile_kernel.BN#2", 64}});
  EXPECT_NE(out.find("{'BLOCK': lambda args: 512}"), std::string::npos) << out;
  EXPECT_NE(out.find("BM, BN = 128, 32"), std::string::npos) << out;
  EXPECT_NE(out.find("FLAG=True, num_warps=2)"), std::string::npos) << out;
  EXPECT_NE(out.find("(x, out, M, N, BLOCKX, 64, False)"), std::string::npos) << out;
  EXPECT_NE(out.find("nw = 4\n    if M > 1000:\n        nw = 8"), std::string::npos) << out;
}

const char* kAmbiguous = R"(import triton
import triton.language as tl


@triton.jit
def k(x, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    n_tiles = tl.cdiv(N, BN)
    pm = pid // n_tiles
    pn = pid % n_tiles
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    tl.store(x + rm[:, None] * N + rn[None, :], 1.0)


def launch(x):
    M, N = x.shape
    k[(triton.cdiv(M, 64) * triton.cdiv(N, 64),)](x, M, N, BM=64, BN=64)
)";

TEST(Tunables, AmbiguousGridLiteralsAreLeftAlone) {
  auto d = discover(kAmbiguous, "launch");
  for (const char* id : {"k.BM", "k.BN"}) {
    const auto& t = get(d->set, id);
    EXPECT_FALSE(t.tunable) << id;
    EXPECT_NE(t.note.find("repeats the literal 64"), std::string::npos) << t.note;
  }
}

TEST(Tunables, NoLaunchInTheLauncher) {
  auto d = discover("import triton\nimport triton.language as tl\n@triton.jit\ndef k(x):\n    pass\ndef f():\n    return 1\n",
                    "f");
  EXPECT_TRUE(d->set.items.empty());
  ASSERT_EQ(d->set.notes.size(), 1u);
  EXPECT_NE(d->set.notes[0].find("no kernel launch"), std::string::npos);
}

}  // namespace
}  // namespace tf

namespace tf {
namespace {

const char* kSharedAndUnpacked = R"(import torch
import triton
import triton.language as tl


@triton.jit
def mm(a, b, c, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        acc += tl.dot(tl.load(a + rm[:, None] * K + (k + rk)[None, :]), tl.load(b + (k + rk)[:, None] * N + rn[None, :]))
    tl.store(c + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def head(q, o, D: tl.constexpr):
    d = tl.arange(0, D)
    tl.store(o + d, tl.load(q + d))


def launch(a, b):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device)
    BLOCK = 32
    mm[(triton.cdiv(M, BLOCK), triton.cdiv(N, BLOCK))](a, b, c, M, N, K, BLOCK_M=BLOCK, BLOCK_N=BLOCK, BLOCK_K=BLOCK)
    bsz, h, s, d = a.shape
    head[(1,)](a, c, D=d)
    return c
)";

TEST(Tunables, OneValueForSeveralParametersIsTunedOnce) {
  auto d = discover(kSharedAndUnpacked, "launch");
  EXPECT_TRUE(get(d->set, "mm.BLOCK_M").tunable);
  for (const char* id : {"mm.BLOCK_N", "mm.BLOCK_K"}) {
    EXPECT_FALSE(get(d->set, id).tunable) << id;
    EXPECT_NE(get(d->set, id).note.find("same text as mm.BLOCK_M"), std::string::npos) << get(d->set, id).note;
  }
  std::string out = applyConfig(d->ir, d->set, {{"mm.BLOCK_M", 64}});
  EXPECT_NE(out.find("BLOCK = 64\n"), std::string::npos) << out;
}

// The configuration written into an autotuned kernel's config list keeps the first config's
// pre_hook (it may set what the kernel needs, such as TMA descriptors' block shapes).
TEST(Tunables, AnAutotuneConfigKeepsItsPreHook) {
  auto d = discover(R"(import triton
import triton.language as tl


def _hook(nargs):
    nargs['desc'].block_shape = (nargs['BLOCK'], 16)


@triton.autotune(configs=[triton.Config({'BLOCK': 64}, num_warps=4, pre_hook=_hook),
                          triton.Config({'BLOCK': 128}, num_warps=8, pre_hook=_hook)], key=['n'])
@triton.jit
def k(desc, n, BLOCK: tl.constexpr):
    x = tl.arange(0, BLOCK)


def launch(desc, n):
    k[(triton.cdiv(n, 64),)](desc, n)
)", "launch");
  ASSERT_TRUE(get(d->set, "k.BLOCK").tunable);
  std::string out = applyConfig(d->ir, d->set, {{"k.BLOCK", 256}, {"k.num_warps", 8}});
  EXPECT_NE(out.find("[triton.Config({'BLOCK': 256}, num_warps=8, pre_hook=_hook)]"), std::string::npos) << out;
}

// A block computed in straight-line steps (lmdeploy's rotary: from the warps and the vector
// width, then clamped): the last assignment is what the grid and the launch read, and it is
// the text rewritten. Computed before the grid is, so the grid follows it.
constexpr const char* kStepwiseBlock = R"PY(import triton
import triton.language as tl


@triton.jit
def rot(x, n, BLOCK: tl.constexpr, BN: tl.constexpr):
    r = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    c = tl.arange(0, BN)
    tl.store(x + r[:, None] * BN + c[None, :], 1.0, mask=(r < n)[:, None])


def launch(x, heads):
    n = x.shape[0]
    BN = 64
    num_warps = 2
    BLOCK = num_warps * 32 * 8 // BN
    BLOCK = max(1, BLOCK)
    grid = (heads, triton.cdiv(n, BLOCK))
    rot[grid](x, n, BLOCK=BLOCK, BN=BN, num_warps=num_warps)
)PY";

TEST(Tunables, ABlockComputedInStepsIsRewrittenAtItsLastStep) {
  auto d = discover(kStepwiseBlock, "launch");
  const auto& block = get(d->set, "rot.BLOCK");
  ASSERT_TRUE(block.tunable) << block.note;
  EXPECT_EQ(block.origin, TunableOrigin::kLocalDerived);
  EXPECT_EQ(block.expr_text, "max(1, BLOCK)");
  std::string out = applyConfig(d->ir, d->set, {{"rot.BLOCK", 32}});
  EXPECT_NE(out.find("BLOCK = num_warps * 32 * 8 // BN\n    BLOCK = 32\n    grid ="), std::string::npos) << out;

  // The grid computed between the two steps reads the first value: rewriting the last one
  // would launch fewer programs than rows, so the block is left alone.
  std::string early = kStepwiseBlock;
  const std::string grid_line = "    grid = (heads, triton.cdiv(n, BLOCK))\n";
  early.erase(early.find(grid_line), grid_line.size());
  early.insert(early.find("    BLOCK = max(1, BLOCK)"), grid_line);
  auto e = discover(early, "launch");
  EXPECT_FALSE(get(e->set, "rot.BLOCK").tunable);
}

// A value the kernel computes with (a split-K factor) that the writer's own config list varies
// is searched, over the listed values only; one the list never varies is left alone.
TEST(Tunables, AnAutotuneListsVariedValuesAreItsChoices) {
  auto d = discover(R"(import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({'BLOCK_K': 64, 'SPLIT_K': 1, 'FLAG': 1}, num_warps=4),
                          triton.Config({'BLOCK_K': 32, 'SPLIT_K': 4, 'FLAG': 1}, num_warps=8)], key=['K'])
@triton.jit
def k(x, y, K, BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr, FLAG: tl.constexpr):
    pid_k = tl.program_id(1)
    acc = 0.0
    for s in range(pid_k * BLOCK_K, K, BLOCK_K * SPLIT_K):
        acc += tl.sum(tl.load(x + s + tl.arange(0, BLOCK_K)))
    if FLAG:
        tl.atomic_add(y, acc)


def launch(x, y):
    K = x.numel()
    k[lambda META: (1, META['SPLIT_K'])](x, y, K)
)", "launch");
  const auto& split = get(d->set, "k.SPLIT_K");
  EXPECT_TRUE(split.tunable) << split.note;
  EXPECT_EQ(split.role, TunableRole::kOther);
  EXPECT_EQ(split.choices, (std::vector<int64_t>{1, 4}));
  EXPECT_FALSE(get(d->set, "k.FLAG").tunable);
  Space space(d->set, SpaceHints{});
  auto dim = std::find_if(space.dims().begin(), space.dims().end(),
                          [](const Dimension& x) { return x.tunable->id == "k.SPLIT_K"; });
  ASSERT_NE(dim, space.dims().end());
  EXPECT_EQ(dim->values, (std::vector<int64_t>{1, 4}));
  std::string out = applyConfig(d->ir, d->set, {{"k.SPLIT_K", 4}});
  EXPECT_NE(out.find("triton.Config({'BLOCK_K': 64, 'FLAG': 1, 'SPLIT_K': 4}, num_warps=4)"), std::string::npos)
      << out;
}

// Configs computed at run time (a comprehension here; FlagGems' runtime.get_tuned_config(...),
// attorch's config functions): what they set is what the launch leaves unset. A candidate
// writes one literal config with all of it, or leaves the configs as written.
constexpr const char* kComputedConfigs = R"PY(import itertools
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({'BLOCK': b}, num_warps=w)
                          for b, w in itertools.product((64, 128), (4, 8))], key=['n'])
@triton.jit
def scale(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * 2, mask=offs < n)


def launch(x, out):
    n = x.numel()
    scale[lambda META: (triton.cdiv(n, META['BLOCK']),)](x, out, n)
)PY";

TEST(Tunables, ComputedAutotuneConfigsAreReplacedByOneLiteralConfigOrLeftAlone) {
  auto d = discover(kComputedConfigs, "launch");
  const auto& block = get(d->set, "scale.BLOCK");
  ASSERT_TRUE(block.tunable) << block.note;
  EXPECT_TRUE(block.configs_unread);
  EXPECT_EQ(block.origin, TunableOrigin::kAutotune);
  EXPECT_FALSE(block.value);
  ASSERT_TRUE(get(d->set, "scale.num_warps").tunable) << get(d->set, "scale.num_warps").note;
  EXPECT_FALSE(get(d->set, "scale.num_stages").tunable);  // no loop: left out of the config

  std::string out = applyConfig(d->ir, d->set, {{"scale.BLOCK", 256}, {"scale.num_warps", 2}});
  EXPECT_NE(out.find("@triton.autotune(configs=[triton.Config({'BLOCK': 256}, num_warps=2)], key=['n'])"),
            std::string::npos)
      << out;
  // Some set and some kept: not a config the source can be given; the space rejects it.
  EXPECT_EQ(applyConfig(d->ir, d->set, {{"scale.BLOCK", 256}}), std::string(kComputedConfigs));
  Space space(d->set, SpaceHints{});
  std::string why;
  EXPECT_FALSE(space.valid({{"scale.BLOCK", 256}, {"scale.num_warps", kKeep}}, &why));
  EXPECT_NE(why.find("computed"), std::string::npos) << why;
  EXPECT_TRUE(space.valid({{"scale.BLOCK", 256}, {"scale.num_warps", 4}}, &why)) << why;
  EXPECT_TRUE(space.valid(space.baseline(), &why)) << why;

  // A flag the computed configs also set (no tile, not searched): a literal config could not
  // give it, so nothing they set is searched.
  std::string flagged = kComputedConfigs;
  flagged.replace(flagged.find("BLOCK: tl.constexpr):"), 21, "BLOCK: tl.constexpr, EVEN: tl.constexpr):");
  flagged.replace(flagged.find("* 2, mask"), 9, "* (2 if EVEN else 3), mask");
  auto f = discover(flagged, "launch");
  EXPECT_FALSE(get(f->set, "scale.BLOCK").tunable);
  EXPECT_NE(get(f->set, "scale.BLOCK").note.find("computed at run time and also set EVEN"), std::string::npos)
      << get(f->set, "scale.BLOCK").note;
  EXPECT_FALSE(get(f->set, "scale.num_warps").tunable);
}

// A project's own autotuner (a subclass of triton's Autotuner taking configs= and key=, as
// FlagGems' libtuner) is read as @triton.autotune: its configs are searched the same way.
TEST(Tunables, AProjectAutotunerIsReadAsAutotune) {
  std::string text = kComputedConfigs;
  const std::string from = "@triton.autotune(configs=";
  text.replace(text.find(from), from.size(), "@libentry()\n@libtuner(strategy=['align32'], configs=");
  text.replace(text.find("import itertools\n"), 17, "import itertools\nfrom mylib.utils import libentry, libtuner\n");
  auto d = discover(text, "launch");
  ASSERT_TRUE(d->ir.kernels[0].autotune);
  EXPECT_EQ(d->ir.kernels[0].autotune->tuner, "mylib.utils.libtuner");
  const auto& block = get(d->set, "scale.BLOCK");
  ASSERT_TRUE(block.tunable) << block.note;
  EXPECT_TRUE(block.configs_unread);
  std::string out = applyConfig(d->ir, d->set, {{"scale.BLOCK", 512}, {"scale.num_warps", 4}});
  EXPECT_NE(out.find("@libtuner(strategy=['align32'], configs=[triton.Config({'BLOCK': 512}, num_warps=4)], key=['n'])"),
            std::string::npos)
      << out;
}

// A heuristic given as a function's name (`{'BLOCK': block_for}`, FlagGems' style): searched
// like a lambda's; a value replaces it as a lambda.
TEST(Tunables, AHeuristicGivenByNameIsSearched) {
  auto d = discover(R"(import triton
import triton.language as tl


def block_for(args):
    return triton.next_power_of_2(args['n']) // 4


@triton.heuristics({'BLOCK': block_for})
@triton.jit
def k(x, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x + offs, 0.0, mask=offs < n)


def launch(x):
    n = x.numel()
    k[lambda META: (triton.cdiv(n, META['BLOCK']),)](x, n)
)", "launch");
  const auto& block = get(d->set, "k.BLOCK");
  ASSERT_TRUE(block.tunable) << block.note;
  EXPECT_EQ(block.origin, TunableOrigin::kHeuristic);
  EXPECT_EQ(block.expr_text, "block_for(args)");
  std::string out = applyConfig(d->ir, d->set, {{"k.BLOCK", 256}});
  EXPECT_NE(out.find("@triton.heuristics({'BLOCK': lambda args: 256})"), std::string::npos) << out;
}

TEST(Tunables, AValueUnpackedFromAShapeIsLeftAlone) {
  auto d = discover(kSharedAndUnpacked, "launch");
  const auto& dim = get(d->set, "head.D");
  EXPECT_FALSE(dim.tunable);
  EXPECT_NE(dim.note.find("unpacked"), std::string::npos) << dim.note;
  // Not searched, yet known: it spans the row, and the launch is where column-loop caps it.
  EXPECT_TRUE(dim.covers_dimension);
  EXPECT_EQ(dim.origin, TunableOrigin::kLaunchOverride);
  EXPECT_EQ(dim.expr_text, "d");
}

// A block-scaled GEMM: the scale group along N (cdiv(N, scale.size(1))) is arithmetic with
// program ids like a program-order group, but the launcher computes it from the tensors'
// sizes: it describes the data and is left alone.
constexpr const char* kScaleGroup = R"PY(
import torch
import triton
import triton.language as tl


@triton.jit
def scaled_mm(a_ptr, b_ptr, s_ptr, c_ptr, M, N, K, group_n: tl.constexpr, BLOCK_M: tl.constexpr,
              BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    n_m = tl.cdiv(M, BLOCK_M)
    n_n = tl.cdiv(N, BLOCK_N)
    in_group = GROUP_M * n_n
    first_m = (pid // in_group) * GROUP_M
    size_m = min(n_m - first_m, GROUP_M)
    pid_m = first_m + pid % size_m
    pid_n = (pid % in_group) // size_m
    scale = tl.load(s_ptr + pid_n * BLOCK_N // group_n)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc * scale)


def launch(a, b, s):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)
    group_n = triton.cdiv(N, s.size(0))
    grid = (triton.cdiv(M, 64) * triton.cdiv(N, 64),)
    scaled_mm[grid](a, b, s, c, M, N, K, group_n=group_n, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8)
    return c
)PY";

TEST(Tunables, AGroupComputedFromTensorSizesIsLeftAlone) {
  auto d = discover(kScaleGroup, "launch");
  const auto& gn = get(d->set, "scaled_mm.group_n");
  EXPECT_EQ(gn.role, TunableRole::kGroup);
  EXPECT_FALSE(gn.tunable);
  EXPECT_NE(gn.note.find("tensors' sizes"), std::string::npos) << gn.note;
  // The same group written as a literal is a choice the search may make (a wrong one fails
  // verification and is frozen).
  std::string literal = kScaleGroup;
  literal.replace(literal.find("triton.cdiv(N, s.size(0))"), std::string("triton.cdiv(N, s.size(0))").size(), "128");
  auto l = discover(literal, "launch");
  EXPECT_TRUE(get(l->set, "scaled_mm.group_n").tunable) << get(l->set, "scaled_mm.group_n").note;
}

}  // namespace
}  // namespace tf

namespace tf {
namespace {

// A launcher that chooses its launch in a branch: a value assigned once in the branch the
// launch follows in is the writer's choice (searched); one assigned in another branch than
// its launch's is not a value the launch reads there.
TEST(Tunables, AValueAssignedInTheBranchOfItsLaunchIsSearched) {
  const std::string src = R"(import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def scale(x, wide):
    n = x.numel()
    if wide:
        BLOCK = 1024
        with torch.no_grad():
            scale_kernel[(triton.cdiv(n, BLOCK),)](x, n, BLOCK=BLOCK)
    return x
)";
  auto d = discover(src, "scale");
  const auto& block = get(d->set, "scale_kernel.BLOCK");
  ASSERT_TRUE(block.tunable) << block.note;
  EXPECT_EQ(block.origin, TunableOrigin::kLocalLiteral);
  EXPECT_EQ(block.value, 1024);
  std::string out = applyConfig(d->ir, d->set, {{"scale_kernel.BLOCK", 256}});
  EXPECT_NE(out.find("        BLOCK = 256\n"), std::string::npos) << out;

  std::string elsewhere = src;
  elsewhere.replace(elsewhere.find("        BLOCK = 1024\n"), 21, "");
  elsewhere.replace(elsewhere.find("    if wide:\n"), 13, "    if wide:\n        BLOCK = 1024\n    if True:\n");
  auto e = discover(elsewhere, "scale");
  EXPECT_NE(get(e->set, "scale_kernel.BLOCK").origin, TunableOrigin::kLocalLiteral) << elsewhere;
}

}  // namespace
}  // namespace tf

namespace tf {
namespace {

// A grid computed from the GPU's SM count is a choice of programs per SM: the count's read is
// scaled in percent (`(read * V // 100)`), whichever way it is read, inside any expression,
// through any chain of local names the grid depends on. A count the grid does not depend on
// is not tuned. The grid's own read is the first.
TEST(Tunables, AGridFromTheSmCountIsScaled) {
  const std::string text = R"(import torch
import triton
import triton.language as tl


@triton.jit
def rows_kernel(x_ptr, out_ptr, rows, n, BLOCK: tl.constexpr):
    for r in range(tl.program_id(0), rows, tl.num_programs(0)):
        offs = tl.arange(0, BLOCK)
        tl.store(out_ptr + r * n + offs, tl.load(x_ptr + r * n + offs, mask=offs < n) * 2, mask=offs < n)


def double(x, props):
    rows, n = x.shape
    out = torch.empty_like(x)
    num_sm = props['multi_processor_count']
    unused_sm = torch.cuda.get_device_properties(x.device).multi_processor_count
    per_device = num_sm * 4
    grid = (min(rows, per_device), props.multi_processor_count * 2)
    rows_kernel[grid](x, out, rows, n, BLOCK=256)
    return out
)";
  auto d = discover(text, "double");
  const auto& s = get(d->set, "rows_kernel.sm_count_pct");
  EXPECT_EQ(s.origin, TunableOrigin::kLauncherScale);
  EXPECT_EQ(s.value, 100);
  EXPECT_TRUE(s.tunable);
  int scales = 0;
  for (const auto& t : d->set.items) scales += t.origin == TunableOrigin::kLauncherScale;
  EXPECT_EQ(scales, 2);
  std::string out = applyConfig(d->ir, d->set, {{"rows_kernel.sm_count_pct", 50}, {"rows_kernel.sm_count_pct#2", 200}});
  EXPECT_NE(out.find("num_sm = (props['multi_processor_count'] * 200 // 100)\n"), std::string::npos) << out;
  EXPECT_NE(out.find("grid = (min(rows, per_device), (props.multi_processor_count * 50 // 100) * 2)"),
            std::string::npos) << out;
  EXPECT_NE(out.find("unused_sm = torch.cuda.get_device_properties(x.device).multi_processor_count\n"),
            std::string::npos) << out;
  EXPECT_EQ(applyConfig(d->ir, d->set, {{"rows_kernel.sm_count_pct", 100}}), text);
}

}  // namespace
}  // namespace tf

namespace tf {
namespace {

// A name assigned in several branches, one of which the launch reads on every path, is tuned
// where that branch assigns it: the grid and the flag computed from it follow the new value.
// A later assignment in a loop around the launch, or one between, leaves it at the launch.
TEST(Tunables, ABranchAssignmentTheLaunchReadsIsRewrittenThere) {
  const std::string text = R"(import torch
import triton
import triton.language as tl


@triton.jit
def tile_kernel(x_ptr, out_ptr, M, N, H: tl.constexpr, W: tl.constexpr, EVEN: tl.constexpr):
    rid = tl.program_id(0)
    cid = tl.program_id(1)
    offs = (rid * H + tl.arange(0, H)[:, None]) * N + cid * W + tl.arange(0, W)[None, :]
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


def copy(x, rank):
    if rank == 2:
        M, N = x.shape
        H = 64
        W = 32 if x.dtype.itemsize == 1 else 16
        EVEN = M % H == 0 and N % W == 0
        grid = (triton.cdiv(M, H), triton.cdiv(N, W))
        out = torch.empty_like(x)
        tile_kernel[grid](x, out, M, N, H, W, EVEN)
    else:
        B, M, N = x.shape
        W = 8
        H = 32
        grid = (triton.cdiv(M, H), triton.cdiv(N, W))
        out = torch.empty_like(x)
        tile_kernel[grid](x, out, M, N, H, W, False)
    return out
)";
  auto d = discover(text, "copy");
  const auto& w = get(d->set, "tile_kernel.W");
  EXPECT_EQ(w.origin, TunableOrigin::kLocalDerived);
  EXPECT_EQ(w.expr_text, "32 if x.dtype.itemsize == 1 else 16");
  EXPECT_TRUE(w.tunable);
  const auto& h = get(d->set, "tile_kernel.H");
  EXPECT_EQ(h.origin, TunableOrigin::kLocalLiteral);
  EXPECT_EQ(h.value, 64);
  std::string out = applyConfig(d->ir, d->set, {{"tile_kernel.W", 64}, {"tile_kernel.H", 128}});
  EXPECT_NE(out.find("        H = 128\n        W = 64\n        EVEN = M % H == 0 and N % W == 0\n"), std::string::npos) << out;
  EXPECT_NE(out.find("        W = 8\n        H = 32\n"), std::string::npos) << out;
}

TEST(Tunables, AnAssignmentALoopRepeatsAroundTheLaunchIsNotTheOneItReads) {
  const std::string text = R"(import torch
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


def bump(x, times, wide):
    n = x.numel()
    BLOCK = 256
    if wide:
        BLOCK = 1024
    for _ in range(times):
        k[(triton.cdiv(n, BLOCK),)](x, n, BLOCK)
        BLOCK = 512
    return x
)";
  auto d = discover(text, "bump");
  const auto& b = get(d->set, "k.BLOCK");
  EXPECT_NE(b.origin, TunableOrigin::kLocalLiteral);
  EXPECT_NE(b.origin, TunableOrigin::kLocalDerived);
}

}  // namespace
}  // namespace tf

namespace tf {
namespace {

// A block assigned in several branches that join before the launch is tuned by a line written
// where they join: the part count and the grid computed after it follow the tuned value; as
// written, nothing is inserted.
TEST(Tunables, ABlockSetInBranchesIsTunedWhereTheyJoin) {
  const std::string text = R"(import math
import torch
import triton
import triton.language as tl


@triton.jit
def part_kernel(x_ptr, part_ptr, n, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    tl.store(part_ptr + pid, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0)))


def parts(x):
    n = x.numel()
    BLOCK_SIZE = 1024
    if n <= 4096:
        BLOCK_SIZE = triton.next_power_of_2(n)
    part_num = math.ceil(n / BLOCK_SIZE)
    out = torch.empty(part_num, device=x.device)
    part_kernel[(part_num,)](x, out, n, BLOCK_SIZE)
    return out
)";
  auto d = discover(text, "parts");
  const auto& b = get(d->set, "part_kernel.BLOCK_SIZE");
  EXPECT_EQ(b.origin, TunableOrigin::kLocalDerived);
  EXPECT_TRUE(b.tunable) << b.note;
  EXPECT_EQ(applyConfig(d->ir, d->set, {{"part_kernel.BLOCK_SIZE", kKeep}}), text);
  std::string out = applyConfig(d->ir, d->set, {{"part_kernel.BLOCK_SIZE", 256}});
  EXPECT_NE(out.find("        BLOCK_SIZE = triton.next_power_of_2(n)\n    BLOCK_SIZE = 256\n    part_num = math.ceil(n / BLOCK_SIZE)\n"),
            std::string::npos) << out;
}

// An assignment that unpacks a value (a shape) before the launch is data, not a choice: no
// line is written where the branches join.
TEST(Tunables, ABlockUnpackedInABranchGetsNoJoinLine) {
  const std::string text = R"(import torch
import triton
import triton.language as tl


@triton.jit
def row_kernel(x_ptr, N: tl.constexpr):
    rid = tl.program_id(0)
    offs = rid * N + tl.arange(0, N)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)


def bump(x, flat):
    if flat:
        R, N = x.shape
    else:
        R, A, N = x.shape
    row_kernel[(R,)](x, N)
    return x
)";
  auto d = discover(text, "bump");
  const auto& n = get(d->set, "row_kernel.N");
  EXPECT_TRUE(n.insert_prefix.empty());
  EXPECT_NE(n.origin, TunableOrigin::kLocalDerived);
}

}  // namespace
}  // namespace tf

namespace tf {
namespace {

// A row block the grid depends on only through the warp count chosen from it (programs per SM
// from the warps) still spans the row: the programs do not step by it. A grid that divides by
// the block through a local name does step by it.
TEST(Tunables, AGridDependingOnABlockThroughTheWarpsDoesNotStepByIt) {
  const std::string text = R"(import torch
import triton
import triton.language as tl


@triton.jit
def norm_kernel(x_ptr, rows, N_COLS: tl.constexpr, BLOCK_N: tl.constexpr):
    offs = tl.arange(0, BLOCK_N)
    for r in tl.range(tl.program_id(0), rows, tl.num_programs(0)):
        x = tl.load(x_ptr + r * N_COLS + offs, mask=offs < N_COLS)
        tl.store(x_ptr + r * N_COLS + offs, x * 2, mask=offs < N_COLS)


@triton.jit
def part_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, x + 1, mask=offs < n)


def norm(x, props):
    rows, cols = x.shape
    BLOCK_N = triton.next_power_of_2(cols)
    num_warps = min(triton.cdiv(BLOCK_N, 2048), 4)
    cta_per_sm = props['warps_per_sm'] // num_warps
    grid = (min(rows, props['multi_processor_count'] * cta_per_sm),)
    norm_kernel[grid](x, rows, cols, BLOCK_N, num_warps=num_warps)
    BLOCK = triton.next_power_of_2(cols)
    parts = triton.cdiv(cols, BLOCK)
    part_kernel[(parts,)](x, cols, BLOCK)
    return x
)";
  auto d = discover(text, "norm");
  const auto& b = get(d->set, "norm_kernel.BLOCK_N");
  EXPECT_TRUE(b.covers_dimension);
  EXPECT_FALSE(b.tunable);
  const auto& p = get(d->set, "part_kernel.BLOCK");
  EXPECT_FALSE(p.covers_dimension) << p.note;
}

}  // namespace
}  // namespace tf

namespace tf {
namespace {

// A helper named for the SM count (`get_device_sm_count()`) is a read of it like the
// property: the call is scaled, and a buffer sized by the same name follows the grid.
TEST(Tunables, AnSmCountHelperCallIsScaledToo) {
  const std::string text = R"(import torch
import triton
import triton.language as tl
from util import get_device_sm_count


@triton.jit
def rows_kernel(x_ptr, part_ptr, rows, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for r in range(tl.program_id(0), rows, tl.num_programs(0)):
        acc += tl.load(x_ptr + r * n + offs, mask=offs < n, other=0.0)
    tl.store(part_ptr + tl.program_id(0) * n + offs, acc, mask=offs < n)


def col_sums(x):
    rows, n = x.shape
    sms = get_device_sm_count()
    part = torch.empty((sms, n), device=x.device)
    rows_kernel[(sms,)](x, part, rows, n, BLOCK=triton.next_power_of_2(n))
    return part.sum(0)
)";
  auto d = discover(text, "col_sums");
  const auto& s = get(d->set, "rows_kernel.sm_count_pct");
  EXPECT_EQ(s.origin, TunableOrigin::kLauncherScale);
  std::string out = applyConfig(d->ir, d->set, {{"rows_kernel.sm_count_pct", 400}});
  EXPECT_NE(out.find("    sms = (get_device_sm_count() * 400 // 100)\n"), std::string::npos) << out;
}

// A launch that unpacks a dict of options (`**kernel_args`): an option the launching function
// writes into that dict (a literal key, a subscript, update()) is left alone, since adding it
// at the launch gives it twice (a TypeError at every call); one it never writes is tuned.
TEST(Tunables, AnOptionSetThroughAnUnpackedDictIsLeftAlone) {
  const std::string src = R"(
import torch
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def run(x):
    n = x.numel()
    opts = {OPTS}
    if x.device.type == "xpu":
        opts.update({"num_stages": 4})
    k[(triton.cdiv(n, 1024),)](x, n, BLOCK=1024, **opts)
    return x
)";
  auto with = [&](const std::string& opts) {
    std::string text = src;
    text.replace(text.find("{OPTS}"), 6, opts);
    return discover(text, "run");
  };
  auto d = with("{\"num_warps\": 8}");
  const Tunable& w = get(d->set, "k.num_warps");
  EXPECT_FALSE(w.tunable);
  EXPECT_NE(w.note.find("**kwargs"), std::string::npos) << w.note;
  auto e = with("{}");
  EXPECT_TRUE(get(e->set, "k.num_warps").tunable) << get(e->set, "k.num_warps").note;
  auto f = with("dict()\n    opts[\"num_warps\"] = 4");
  EXPECT_FALSE(get(f->set, "k.num_warps").tunable);
}

}  // namespace
}  // namespace tf

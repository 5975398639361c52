"""Runs golden outputs of the transformation passes under Triton's interpreter (CPU, torch)
on small shapes that the tiles do not divide, against torch. Run by
test_transform_interpret.py in a subprocess (TRITON_INTERPRET must be set before triton is
imported). Prints one line per case and exits 1 if any is wrong."""

import importlib.util
import math
import os
import sys
import types

os.environ["TRITON_INTERPRET"] = "1"
import torch  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from benchlib import interpreter_fixes  # noqa: E402

interpreter_fixes.apply()

# The launchers ask the GPU for its SM count and allocate on "cuda": give them a CPU stand-in.
torch.cuda.get_device_properties = lambda *a, **k: types.SimpleNamespace(multi_processor_count=3)
torch.cuda.current_device = lambda: 0
_empty = torch.empty
torch.empty = lambda *a, **k: _empty(*a, **{x: v for x, v in k.items() if x != "device"})

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden", "transform")
gen = torch.Generator().manual_seed(0)


def load(path, n=[0]):
    n[0] += 1
    spec = importlib.util.spec_from_file_location(f"tf_interp_{n[0]}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def close(out, ref, rtol, atol):
    return torch.allclose(out.float(), ref.float(), rtol=rtol, atol=atol)


def matmul(mod, M, N, K):
    a, b = torch.randn(M, K, generator=gen).half(), torch.randn(K, N, generator=gen).half()
    out, ref = mod.matmul(a, b), a.float() @ b.float()
    extra = 0 if out.dtype == torch.float32 else 2e-3 * ref.abs().max().item()
    return close(out, ref, 2e-3, 2e-3 * math.sqrt(K) + extra)


def matmul_both_layouts(mod, M, N, K):
    """B stored (K, N) and (N, K) transposed: a K-major B takes the other descriptor."""
    a = torch.randn(M, K, generator=gen).half()
    ok = True
    for b in (torch.randn(K, N, generator=gen).half(), torch.randn(N, K, generator=gen).half().T):
        ref = a.float() @ b.float()
        ok = ok and close(mod.matmul(a, b), ref, 2e-3, 2e-3 * math.sqrt(K) + 2e-3 * ref.abs().max().item())
    return ok


def bmm(mod, M, N, K, batch=3):
    """Batched: A (batch, M, K), B (batch, K, N) and (batch, N, K) transposed."""
    a = torch.randn(batch, M, K, generator=gen).half()
    ok = True
    for b in (torch.randn(batch, K, N, generator=gen).half(), torch.randn(batch, N, K, generator=gen).half().transpose(1, 2)):
        ref = a.float() @ b.float()
        ok = ok and close(mod.bmm(a, b), ref, 2e-3, 2e-3 * math.sqrt(K) + 2e-3 * ref.abs().max().item())
    return ok


def scores(mod, M, N, D, batch=3):
    """Batched Q K^T: Q (batch, M, D), K (batch, N, D)."""
    q = torch.randn(batch, M, D, generator=gen).half()
    k = torch.randn(batch, N, D, generator=gen).half()
    ref = q.float() @ k.float().transpose(1, 2)
    return close(mod.scores(q, k), ref, 2e-3, 2e-3 * math.sqrt(D) + 2e-3 * ref.abs().max().item())


def int8_gemm(mod, M, N, K):
    """Exact: integer products summed in int32, whatever the order."""
    a = torch.randint(-128, 128, (M, K), generator=gen, dtype=torch.int8)
    b = torch.randint(-128, 128, (K, N), generator=gen, dtype=torch.int8)
    return torch.equal(mod.int8_gemm(a, b), a.int() @ b.int())


def matmul_fp32(mod, M, N, K):
    a, b = torch.randn(M, K, generator=gen), torch.randn(K, N, generator=gen)
    ref = a.double() @ b.double()
    return close(mod.matmul(a, b), ref, 1e-4, 1e-4 * math.sqrt(K))


def linear(mod, M, N, K, layouts=("rows",)):
    """y = x @ w^T with w stored (N, K) ("rows") or as the transpose of a (K, N) tensor."""
    x = torch.randn(M, K, generator=gen).half()
    ok = True
    for layout in layouts:
        w = torch.randn(N, K, generator=gen).half() if layout == "rows" else torch.randn(K, N, generator=gen).half().T
        ref = x.float() @ w.float().T
        ok = ok and close(mod.linear(x, w), ref, 2e-3, 2e-3 * math.sqrt(K) + 2e-3 * ref.abs().max().item())
    return ok


def linear_either_layout(mod, M, N, K):
    return linear(mod, M, N, K, ("rows", "transposed"))


def linear_gelu(mod, M, N, K):
    x, w = torch.randn(M, K, generator=gen).half(), torch.randn(K, N, generator=gen).half()
    bias = torch.randn(N, generator=gen).half()
    out = mod.linear_gelu(x, w, bias)
    ref = torch.nn.functional.gelu(x.float() @ w.float() + bias.float())
    return close(out, ref, 2e-3, 2e-3 * math.sqrt(K) + 2e-3 * ref.abs().max().item())


def matmul_lower(mod, M, N, K):
    """A kernel that writes the lower triangle only: the rest of its output is left as it was."""
    a, b = torch.randn(M, K, generator=gen).half(), torch.randn(K, N, generator=gen).half()
    out, ref = mod.matmul(a, b), a.float() @ b.float()
    lower = torch.ones(M, N, dtype=torch.bool).tril()
    return close(out[lower], ref[lower], 2e-3, 2e-3 * math.sqrt(K) + 2e-3 * ref.abs().max().item())


def matmul_tril(mod, M, N, K):
    """The lower triangle of A @ B, zeros above."""
    a, b = torch.randn(M, K, generator=gen).half(), torch.randn(K, N, generator=gen).half()
    out, ref = mod.matmul(a, b), (a.float() @ b.float()).tril()
    return close(out, ref, 2e-3, 2e-3 * math.sqrt(K) + 2e-3 * ref.abs().max().item())


def attention_sdpa(fn_name, causal, grouped):
    """The launcher's attention (q (B, Hq, S, D), k and v (B, Hkv, S, D) fp16) against torch's
    in float32: the gluon-attention route takes the kernel as written off the GPU."""
    def check(mod, B, HQ, HKV, S, D):
        q = torch.randn(B, HQ, S, D, generator=gen).half()
        k, v = (torch.randn(B, HKV, S, D, generator=gen).half() for _ in range(2))
        scale = 1.0 / math.sqrt(D)
        out = getattr(mod, fn_name)(q, k, v) if grouped else getattr(mod, fn_name)(q, k, v, scale)
        kk, vv = (x.float().repeat_interleave(HQ // HKV, dim=1) for x in (k, v))
        ref = torch.nn.functional.scaled_dot_product_attention(q.float(), kk, vv, is_causal=causal, scale=scale)
        return close(out, ref, 1e-2, 2e-3)
    return check


def attention_with_lse2(mod, B, H, S, D):
    """attention() returning the output and each row's base-2 log-sum-exp of its scaled scores."""
    q, k, v = (torch.randn(B, H, S, D, generator=gen).half() for _ in range(3))
    scale = 1.0 / math.sqrt(D)
    out, lse = mod.attention(q, k, v, scale)
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), scale=scale)
    ref_lse = torch.logsumexp(scale * q.float() @ k.float().transpose(-1, -2), dim=-1) / math.log(2)
    return close(out, ref, 1e-2, 2e-3) and close(lse.reshape(ref_lse.shape), ref_lse, 1e-4, 1e-3)


def staged_attention_both_modes(mod, B, H, S, D):
    """attention(q, k, v, causal, scale) -> (output, base-2 log-sum-exp), causal and not."""
    ok = True
    for causal in (False, True):
        q, k, v = (torch.randn(B, H, S, D, generator=gen).half() for _ in range(3))
        scale = 1.0 / math.sqrt(D)
        out, lse = mod.attention(q, k, v, causal, scale)
        ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), scale=scale,
                                                               is_causal=causal)
        scores = scale * q.float() @ k.float().transpose(-1, -2)
        if causal:
            scores = scores.masked_fill(torch.ones(S, S, dtype=torch.bool).triu(1), float("-inf"))
        ref_lse = torch.logsumexp(scores, dim=-1) / math.log(2)
        ok = ok and close(out, ref, 1e-2, 2e-3) and close(lse, ref_lse, 1e-4, 1e-3)
    return ok


def same_as_input(case, fn_name):
    """The rewritten launcher returns exactly what the launcher as written returns (a rewrite
    of the torch glue around the kernel), on fp16 values with a NaN-free row of zeros."""
    def check(mod, *shape):
        before = load(os.path.join(GOLDEN, case, "input.py"))
        x = (torch.randn(*shape, generator=gen) * 4).half()
        x[0] = 0
        outs, refs = getattr(mod, fn_name)(x), getattr(before, fn_name)(x)
        return all(torch.equal(o, r) for o, r in zip(outs, refs))
    return check


def as_written_within(case, fn_name, make_args, rtol, tensors_within=False):
    """The rewritten launcher returns what the launcher as written returns: tensors of the
    kernel's own outputs exactly (within `rtol` with `tensors_within`), and the sums the pass
    moved into the kernel (their additions reordered) within `rtol`."""
    def check(mod, *shape):
        before = load(os.path.join(GOLDEN, case, "input.py"))
        args = make_args(*shape)
        outs, refs = getattr(mod, fn_name)(*args), getattr(before, fn_name)(*args)
        outs, refs = (outs, refs) if isinstance(outs, tuple) else ((outs,), (refs,))
        ok = True
        for o, r in zip(outs, refs):
            ok = ok and o.dtype == r.dtype and o.shape == r.shape
            within = o.dim() == 0 or tensors_within
            ok = ok and (torch.allclose(o.float(), r.float(), rtol=rtol, atol=0) if within else torch.equal(o, r))
        return ok
    return check


def log_probs(M, N):
    x = torch.randn(M, N, generator=gen).log_softmax(-1).half()
    return x, torch.randn(M, N, generator=gen).log_softmax(-1).half()


def two_halves(M, N):
    return torch.randn(M, N, generator=gen).half(), torch.randn(M, N, generator=gen).half()


def weights_and_scales(M, N):
    s = torch.rand(math.ceil(M / 128), math.ceil(N / 128), generator=gen) + 0.5
    return (torch.randn(M, N, generator=gen) * 8).half(), s


def scaling_backward(M, N):
    w = torch.randn(N, generator=gen).half()
    return torch.randn(M, N, generator=gen).half(), torch.randn(M, N, generator=gen).half(), w


def optional_scaling(mod, M, N):
    """With a weight (partial rows summed by the kernel) and without (None passed, no sum)."""
    dy, x, w = scaling_backward(M, N)
    before = load(os.path.join(GOLDEN, "fused-sum/optional_partial_rows", "input.py"))
    (dx, dw), (rdx, rdw) = mod.scale_backward(dy, x, w), before.scale_backward(dy, x, w)
    (ndx, ndw), (rndx, rndw) = mod.scale_backward(dy, x, None), before.scale_backward(dy, x, None)
    return (torch.equal(dx, rdx) and dw.dtype == rdw.dtype and torch.allclose(dw.float(), rdw.float(), rtol=1e-5)
            and ndw is None and rndw is None and torch.equal(ndx, rndx))


def own_row_stride(mod, M, N):
    """The kernel writes its partial rows at offsets it computes itself, not through the stride
    it is given: after the pass only program 0's row lands inside the accumulator and every
    other add is dropped, so the gradient is program 0's partial sum alone (wrong: verification
    refuses it), and nothing was written outside."""
    dy, x, w = scaling_backward(M, N)
    dx, dw = mod.scale_backward(dy, x, w)
    per_program = math.ceil(M / 3)  # the stand-in's 3 SMs
    first = (dy[:per_program].float() * x[:per_program].float()).sum(0).to(w.dtype)
    whole = (dy.float() * x.float()).sum(0).to(w.dtype)
    return torch.equal(dx, (dy.float() * w.float()).half()) and torch.allclose(dw.float(), first.float(), rtol=1e-2) \
        and not torch.allclose(dw.float(), whole.float(), rtol=1e-2)


def vector_and_scalar(n):
    return torch.randn(n, generator=gen), 1.0 / 3.0


def softmax(mod, M, N):
    x = torch.randn(M, N, generator=gen) * 3
    return close(mod.softmax(x), torch.softmax(x.double(), -1), 1e-4, 1e-6)


def softmax_short_and_long(mod, M, N):
    # column-loop with fits: rows shorter than fits keep the body as written, longer ones loop.
    return softmax(mod, M, N) and softmax(mod, M, 3000)


def layernorm(mod, M, N):
    x, w = torch.randn(M, N, generator=gen).half(), torch.rand(N, generator=gen).half() + 0.5
    b = torch.randn(N, generator=gen).half()
    ref = torch.nn.functional.layer_norm(x.double(), (N,), w.double(), b.double(), eps=1e-5)
    return close(mod.layernorm(x, w, b), ref, 2e-3, 2e-2)


def router(mod, M, E, K):
    # Softmax over E experts, then the K largest probabilities and their experts, with and
    # without renormalizing the picks (which reads the stored picks back).
    x = torch.randn(M, E, generator=gen) * 2
    probs = torch.softmax(x.double(), -1)
    top, ids = probs.topk(K, -1)
    ok = True
    for renorm in (True, False):
        w, i = mod.router(x, K, renorm)
        ref = top / top.sum(-1, keepdim=True) if renorm else top
        ok = ok and close(w, ref, 1e-4, 1e-6) and torch.equal(i.long(), ids)
    return ok


def log_softmax(mod, M, N):
    x = (torch.randn(M, N, generator=gen) * 4).half()
    return close(mod.log_softmax(x), torch.log_softmax(x.double(), -1), 2e-3, 1e-2)


def scaled(mod, M, N):
    x = torch.randn(M, N, generator=gen)
    m = x.double().max(-1, keepdim=True).values
    ref = torch.exp(x.double() - m) / torch.exp(x.double() * 0.5 - m).sum(-1, keepdim=True)
    return close(mod.scaled(x), ref, 1e-4, 1e-7)


def masked_head(x):
    # Row 0 starts with a run of -inf longer than a chunk (masked logits): a running max that
    # is still -inf must not turn the sum into NaN (exp(-inf - -inf)).
    x = x.clone()
    x[0, : x.shape[1] // 2] = float("-inf")
    return x


def rms(mod, B, H, N):
    x = torch.randn(B, H, N, generator=gen).half()
    ref = x.double() / torch.sqrt((x.double() ** 2).mean(-1, keepdim=True) + 1e-6)
    return close(mod.rms(x), ref, 2e-3, 2e-3)


def recurrent(mod, B, T, H, K):
    q, k, v = (torch.randn(B, T, H, K, generator=gen).half() for _ in range(3))
    out = mod.recurrent(q, k, v)
    scale = K ** -0.5
    h = torch.zeros(B, H, K, K, dtype=torch.float64)
    ref = torch.empty(B, T, H, K, dtype=torch.float64)
    for t in range(T):
        h = h * 0.95 + k[:, t].double()[..., :, None] * v[:, t].double()[..., None, :]
        ref[:, t] = (h * (q[:, t].double() * scale)[..., :, None]).sum(-2)
    return close(out, ref, 2e-3, 2e-3)


def recurrent_gated(mod, B, T, H, K):
    q, k, v = (torch.randn(B, T, H, K, generator=gen).half() for _ in range(3))
    g = -torch.rand(B, T, H, generator=gen) * 0.1
    scale = K ** -0.5
    ok = True
    for gate in (g, None):
        out = mod.recurrent(q, k, v, gate)
        h = torch.zeros(B, H, K, K, dtype=torch.float64)
        ref = torch.empty(B, T, H, K, dtype=torch.float64)
        for t in range(T):
            decay = torch.exp(gate[:, t].double())[..., None, None] if gate is not None else 0.95
            h = h * decay + k[:, t].double()[..., :, None] * v[:, t].double()[..., None, :]
            ref[:, t] = (h * (q[:, t].double() * scale)[..., :, None]).sum(-2)
        ok = ok and close(out, ref, 2e-3, 2e-3)
    return ok


def decayed_sum(mod, T, N):
    x = torch.randn(T, N, generator=gen)
    ref = torch.zeros(N, dtype=torch.float64)
    for t in range(T):
        ref = ref * 0.5 + x[t].double()
    return close(mod.decayed_sum(x), ref, 1e-5, 1e-5)


def row_sum(mod, M, N):
    x = torch.randn(M, N, generator=gen)
    return close(mod.row_sum(x), x.double().sum(1), 1e-4, 1e-4)


def head_rms(mod, T, H):
    x, w = torch.randn(T, H, 64, generator=gen).half(), torch.randn(64, generator=gen).half()
    ref = x.double() / torch.sqrt((x.double() ** 2).mean(-1, keepdim=True) + 1e-6) * w.double()
    return close(mod.rms_norm(x, w), ref, 2e-3, 4e-3)


def block_scaled_matmul(mod, M, N, K):
    """int8 operands, a scale per 128-wide K block of A's rows and of B's columns, one scale."""
    blocks = -(-K // 128)
    a = torch.randint(-4, 5, (M, K), generator=gen, dtype=torch.int8)
    b = torch.randint(-4, 5, (K, N), generator=gen, dtype=torch.int8)
    a_s, b_s = torch.rand(M, blocks, generator=gen) + 0.5, torch.rand(N, blocks, generator=gen) + 0.5
    ref = torch.zeros(M, N, dtype=torch.float64)
    for kb in range(blocks):
        part = a[:, kb * 128:(kb + 1) * 128].double() @ b[kb * 128:(kb + 1) * 128].double()
        ref += part * a_s[:, kb, None].double() * b_s[None, :, kb].double()
    ref *= 0.01
    out = mod.matmul(a, b, a_s, b_s, 0.01)
    return close(out, ref, 2e-3, 2e-3 * ref.abs().max().item())


def center(mod, M, N):
    x = torch.randn(M, N, generator=gen) + 2
    return close(mod.center(x), x.double() - x.double().mean(-1, keepdim=True), 1e-5, 1e-5)


def softmax_masked(mod, M, N):
    x = masked_head(torch.randn(M, N, generator=gen) * 3)
    out = mod.softmax(x)
    return close(out, torch.softmax(x.double(), -1), 1e-4, 1e-6) and not out.isnan().any()


def softmax_half_masked(mod, M, N):
    x = masked_head(torch.randn(M, N, generator=gen) * 3).half()
    out = mod.softmax(x)
    return close(out, torch.softmax(x.double(), -1), 2e-3, 1e-3) and not out.isnan().any()


def cross_entropy(mod, M, V):
    x = masked_head(torch.randn(M, V, generator=gen) * 2).to(torch.bfloat16)
    t = torch.randint(V // 2, V, (M,), generator=gen)
    ref = torch.nn.functional.cross_entropy(x.double(), t, reduction="none")
    return close(mod.cross_entropy(x, t), ref, 1e-4, 1e-4)


def nll(mod, M, V):
    x = torch.randn(M, V, generator=gen) * 2
    t = torch.randint(0, V, (M,), generator=gen)
    out, loss = mod.nll(x, t)
    ref = -torch.log_softmax(x.double(), -1)
    return close(out, ref, 1e-4, 1e-4) and close(loss, ref.gather(1, t[:, None])[:, 0], 1e-4, 1e-4)


def attention(mod, B, H, S, D):
    q, k, v = (torch.randn(B, H, S, D, generator=gen).half() for _ in range(3))
    ref = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double())
    return close(mod.attention(q, k, v), ref, 2e-3, 2e-3)


def attention_lse(mod, B, H, S, D):
    q, k, v = (torch.randn(B, H, S, D, generator=gen).half() for _ in range(3))
    s = (q.double() @ k.double().transpose(-1, -2)) / math.sqrt(D)
    ref_out, ref_lse = torch.softmax(s, -1) @ v.double(), torch.logsumexp(s, -1)
    out, lse = mod.attention_lse(q, k, v)
    return close(out, ref_out, 2e-3, 2e-3) and close(lse, ref_lse, 1e-4, 1e-4)


def causal_lse(mod, B, H, S, D):
    q, k, v = (torch.randn(B, H, S, D, generator=gen).half() for _ in range(3))
    t = 5.0
    s = (q.double() @ k.double().transpose(-1, -2)) / t
    s = s.masked_fill(torch.ones(S, S, dtype=torch.bool).triu(1), float("-inf"))
    ref_out, ref_lse = torch.softmax(s, -1) @ v.double(), torch.logsumexp(s, -1)
    out, lse = mod.causal_lse(q, k, v, t)
    return close(out, ref_out, 2e-3, 2e-3) and close(lse, ref_lse, 1e-5, 1e-5)


def softmax_t(mod, M, N):
    x = torch.randn(M, N, generator=gen) * 3
    return close(mod.softmax_t(x, 0.7), torch.softmax(x.double() / 0.7, -1), 1e-4, 1e-6)


def add(mod, n):
    x, y = torch.randn(n, generator=gen), torch.randn(n, generator=gen)
    return close(mod.add(x, y), x + y, 0, 0)


def conv2d(mod, N, H, W, C, K, R, S, launcher="conv2d_nhwc"):
    """NHWC convolution, stride 1, padding 1 (the launcher's defaults), against torch's NCHW one."""
    x = torch.randn(N, H, W, C, generator=gen).half()
    w = torch.randn(K, R, S, C, generator=gen).half()
    out = getattr(mod, launcher)(x, w)
    ref = torch.nn.functional.conv2d(x.float().permute(0, 3, 1, 2), w.float().permute(0, 3, 1, 2), padding=1)
    ref = ref.permute(0, 2, 3, 1)
    return out.shape == ref.shape and close(out, ref, 2e-3, 2e-3 * math.sqrt(C * R * S) + 2e-3 * ref.abs().max().item())


def conv2d_nchw(mod, N, H, W, C, K, R, S):
    """NCHW convolution, stride 1, padding 1; the input and weights non-contiguous views too."""
    x = torch.randn(N, C, H, W, generator=gen).half()
    w = torch.randn(K, C, R, S, generator=gen).half()
    ref = torch.nn.functional.conv2d(x.float(), w.float(), padding=1)
    ok = True
    for xx, ww in ((x, w), (x.contiguous(memory_format=torch.channels_last), w.permute(2, 3, 0, 1).contiguous().permute(2, 3, 0, 1))):
        out = mod.conv2d_nchw(xx, ww)
        ok = ok and out.shape == ref.shape and close(out, ref, 2e-3, 2e-3 * math.sqrt(C * R * S) + 2e-3 * ref.abs().max().item())
    return ok


def matmul_layouts(mod, M, N, K):
    """matmul with B row-major, column-major and a strided view."""
    a = torch.randn(M, K, generator=gen).half()
    ok = True
    for b in (torch.randn(K, N, generator=gen).half(), torch.randn(N, K, generator=gen).half().t(),
              torch.randn(K, 2 * N, generator=gen).half()[:, ::2]):
        ok = ok and close(mod.matmul(a, b), a.float() @ b.float(), 2e-3, 2e-3 * math.sqrt(K))
    return ok


def sgemm_unit_stride(mod, M, N, K):
    """fp32 matmul whose kernel takes B's column stride as 1: B contiguous, and B a view of
    whole rows of a wider matrix (column stride 1, row stride 2N), both relaid K-major."""
    a = torch.randn(M, K, generator=gen)
    ok = True
    for b in (torch.randn(K, N, generator=gen), torch.randn(K, 2 * N, generator=gen)[:, :N]):
        ok = ok and close(mod.matmul(a, b), a @ b, 1e-4, 1e-4 * math.sqrt(K))
    return ok


def conv2d_direct(mod, N, H, W, C, K, R, S):
    return conv2d(mod, N, H, W, C, K, R, S, launcher="conv2d_direct")


def patch_embed_nchw(mod, B, C, H, W, D, P):
    """Patch embedding (stride = filter = P, + bias) of NCHW images, contiguous and a strided
    view (every other column of wider images), against torch's convolution."""
    w = torch.randn(D, C, P, P, generator=gen).half()
    bias = torch.randn(D, generator=gen).half()
    ok = True
    for x in (torch.randn(B, C, H, W, generator=gen).half(), torch.randn(B, C, H, 2 * W, generator=gen).half()[..., ::2]):
        ref = torch.nn.functional.conv2d(x.float(), w.float(), bias.float(), stride=P).flatten(2).transpose(1, 2)
        out = mod.patch_embed(x, w, bias)
        ok = ok and out.shape == ref.shape and close(out, ref, 2e-3, 2e-3 * math.sqrt(C * P * P) + 2e-3 * ref.abs().max().item())
    return ok


def patchify_nhwc(mod, N, H, W, C, K, R, S):
    """NHWC convolution with stride = filter (R x S), no padding, against torch's NCHW one."""
    x = torch.randn(N, H, W, C, generator=gen).half()
    w = torch.randn(K, R, S, C, generator=gen).half()
    out = mod.patchify(x, w)
    ref = torch.nn.functional.conv2d(x.float().permute(0, 3, 1, 2), w.float().permute(0, 3, 1, 2), stride=(R, S))
    ref = ref.permute(0, 2, 3, 1)
    ok = out.shape == ref.shape and close(out, ref, 2e-3, 2e-3 * math.sqrt(C * R * S) + 2e-3 * ref.abs().max().item())
    # Two empty filter loops (R = S = -1): the kernel as written adds nothing, and the collapsed
    # nest must not run (-1) * (-1) * C steps.
    y = torch.full((N * 2 * 2 * K,), 7.0).half()
    mod.patchify_kernel[(1, 1)](x, w, y, N, H, W, C, K, 2, 2, -1, -1, BLOCK_M=32, BLOCK_N=32)
    return ok and bool((y.view(N * 4, K)[:32, :32] == 0).all())


def sgemm_k_tails(mod, M, N, *Ks):
    """fp32 matmul (fp32 products, no tf32) per K, B row-major and a transposed view."""
    ok = True
    for K in Ks:
        a = torch.randn(M, K, generator=gen)
        for b in (torch.randn(K, N, generator=gen), torch.randn(N, K, generator=gen).t()):
            ok = ok and close(mod.matmul(a, b), a @ b, 1e-5, 1e-5 * math.sqrt(K))
    return ok


def matmul_k_tails(mod, M, N, *Ks):
    """One matmul per K: a multiple of the K tile (no partial block), one with a partial
    block, one shorter than a tile (no whole block)."""
    return all(matmul(mod, M, N, K) for K in Ks)


def brgemm(mod, G, M, N, K):
    a, b = torch.randn(G, M, K, generator=gen).half(), torch.randn(G, K, N, generator=gen).half()
    out, ref = mod.brgemm(a, b), (a.float() @ b.float()).sum(0)
    return close(out, ref, 2e-3, 2e-3 * math.sqrt(G * K) + 2e-3 * ref.abs().max().item())


def _attention_inputs(B, H, S, D):
    return tuple(torch.randn(B, H, S, D, generator=gen).half() for _ in range(3))


def _launch_attention(mod, q, k, v, block_m, block_n, **extra):
    """The kernel launched with other tiles than its launcher writes."""
    import triton

    B, H, S, D = q.shape
    out = torch.empty_like(q)
    grid = (triton.cdiv(S, block_m), B * H)
    mod.causal_attention_kernel[grid](q, k, v, out, S, 1.0 / math.sqrt(D), q.stride(1), q.stride(2),
                                      HEAD_DIM=D, BLOCK_M=block_m, BLOCK_N=block_n, **extra)
    return out


# Row tiles smaller than, equal to and larger than the key tiles: the split point
# (pid * BLOCK_M) // BLOCK_N * BLOCK_N falls inside a row block, on it, and below it.
ATTENTION_TILES = ((16, 32), (16, 16), (32, 16))


def causal_attention(mod, B, H, S, D):
    q, k, v = _attention_inputs(B, H, S, D)
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True)
    outs = [mod.causal_attention(q, k, v)] + [_launch_attention(mod, q, k, v, bm, bn) for bm, bn in ATTENTION_TILES]
    return all(close(out, ref, 1e-2, 1e-2) for out in outs)


def causal_and_full_attention(mod, B, H, S, D):
    """A kernel whose causal mask sits under IS_CAUSAL: causal at every tile, and not causal (the
    kernel, like the one it mirrors, takes S a multiple of the key tile when not causal)."""
    q, k, v = _attention_inputs(B, H, S, D)
    full = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float())
    outs = [_launch_attention(mod, q, k, v, bm, bn, IS_CAUSAL=False) for bm, bn in ATTENTION_TILES]
    return causal_attention(mod, B, H, S, D) and all(close(out, full, 1e-2, 1e-2) for out in outs)


def window_attention(mod, B, H, S, D, window=48):
    """Each row sees the `window` keys up to itself."""
    q, k, v = _attention_inputs(B, H, S, D)
    i = torch.arange(S)
    allowed = (i[None, :] <= i[:, None]) & (i[None, :] > i[:, None] - window)
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), attn_mask=allowed)
    outs = [mod.causal_attention(q, k, v, window)]
    outs += [_launch_attention(mod, q, k, v, bm, bn, WINDOW=window) for bm, bn in ATTENTION_TILES]
    return all(close(out, ref, 1e-2, 1e-2) for out in outs)


CASES = {
    "retile/matmul_tiles": (matmul, (100, 136, 72)),
    "grouped-order/matmul_tuple_grid": (matmul, (300, 136, 72)),
    "grouped-order/matmul_lambda_grid": (matmul, (300, 136, 72)),
    "split-k/atomic_matmul": (matmul, (100, 72, 600)),
    "split-k/atomic_pointer_advance": (matmul, (100, 72, 600)),
    "split-k/two_stage_matmul": (matmul, (100, 72, 600)),
    "split-k/two_stage_pointer_advance": (matmul, (100, 72, 600)),
    "persistent/matmul_2d": (matmul, (200, 136, 72)),
    "persistent/matmul_1d_derived": (matmul, (200, 136, 72)),
    "persistent/softmax_tiles_param": (softmax, (37, 100)),
    "persistent/add_1d": (add, (5000,)),
    "persistent/matmul_warp_specialize": (matmul, (200, 136, 72)),
    "persistent/descriptors_flatten_warp_specialize": (matmul, (300, 136, 72)),
    "persistent/descriptors_tutorial_flatten_warp_specialize": (matmul, (300, 136, 72)),
    "tensor-cores/descriptor_loads": (matmul_both_layouts, (100, 136, 72)),
    "tensor-cores/descriptor_loads_linear_weight": (linear_either_layout, (100, 136, 72)),
    "tensor-cores/descriptor_loads_unit_row_stride": (linear, (100, 136, 72)),
    "tensor-cores/descriptor_loads_relaid_unit_stride": (matmul_fp32, (100, 136, 72)),
    "tensor-cores/descriptor_loads_stores": (matmul, (100, 136, 72)),
    "tensor-cores/accumulate_int8_out_dtype": (int8_gemm, (100, 136, 200)),
    "tensor-cores/descriptor_loads_subtiled_stores": (matmul, (100, 136, 72)),
    "tensor-cores/descriptor_stores_persistent": (matmul, (300, 136, 72)),
    "tensor-cores/descriptor_store_named_pointer": (matmul, (300, 136, 72)),
    "tensor-cores/keep_store_mask_not_bounds": (matmul_lower, (100, 136, 72)),
    "tensor-cores/block_pointer_loads": (matmul, (100, 136, 72)),
    "tensor-cores/descriptor_loads_pointer_advance": (matmul, (100, 136, 72)),
    "tensor-cores/descriptor_loads_tutorial_cdiv": (matmul, (100, 136, 72)),
    # gluon-gemm on the CPU: the route takes the kernel as written (no CUDA tensor), which must
    # still compute the same through the rebinding.
    "gluon-gemm/tutorial_pointer_advance": (matmul, (100, 136, 72)),
    "gluon-gemm/int8_out_dtype": (int8_gemm, (100, 136, 200)),
    "gluon-gemm/linear_weight": (linear_either_layout, (100, 136, 72)),
    "gluon-gemm/batched_3d_descriptors": (bmm, (100, 136, 72)),
    "gluon-gemm/batched_base_alias": (scores, (100, 136, 72)),
    "gluon-attention/gqa_causal": (attention_sdpa("gqa_attention", True, True), (1, 4, 2, 40, 64)),
    "gluon-attention/exp2_folded_scale": (attention_sdpa("attention", False, False), (2, 2, 2, 100, 64)),
    "gluon-attention/exp2_with_lse": (attention_with_lse2, (2, 2, 100, 64)),
    "gluon-attention/block_pointers_flag_lse": (attention_with_lse2, (2, 2, 128, 64)),
    "gluon-attention/stage_mode_helper_loop": (staged_attention_both_modes, (1, 2, 256, 64)),
    "gluon-attention/descriptor_rows_helper": (staged_attention_both_modes, (1, 2, 256, 64)),
    "gluon-attention/host_descriptors_stage_helper": (staged_attention_both_modes, (1, 2, 256, 64)),
    "gluon-attention/block_pointers_boundary_checks": (attention_sdpa("attention", False, False), (2, 2, 2, 100, 64)),
    "gluon-attention/normalized_accumulator": (attention_sdpa("attention", False, False), (2, 2, 2, 128, 64)),
    "gluon-attention/causal_flag_masked_zeros": (attention_sdpa("attention", True, False), (1, 2, 2, 128, 64)),
    "gluon-attention/finite_fill_bounds": (attention_sdpa("attention", False, False), (2, 2, 2, 100, 64)),
    "gluon-attention/even_flags_branch_loads": (attention_sdpa("attention", False, False), (2, 2, 2, 100, 64)),
    "gluon-attention/finite_fill_additive_causal": (attention_sdpa("attention", True, False), (1, 2, 2, 128, 64)),
    "tensor-cores/descriptor_shifted_index_loads_stores": (linear_gelu, (100, 136, 72)),
    "launcher-glue/per_tensor_scale": (same_as_input("launcher-glue/per_tensor_scale", "quantize"), (5000,)),
    "launcher-glue/per_row_scale_in_caller": (same_as_input("launcher-glue/per_row_scale_in_caller",
                                                            "row_quantize"), (7, 1000)),
    "fused-sum/elementwise_loss": (as_written_within("fused-sum/elementwise_loss", "jsd", log_probs, 2e-3),
                                   (37, 1000)),
    "fused-sum/partial_rows": (as_written_within("fused-sum/partial_rows", "scale_backward", scaling_backward, 1e-5,
                                                 tensors_within=True), (37, 100)),
    "fused-sum/own_row_stride": (own_row_stride, (37, 100)),
    "fused-sum/optional_partial_rows": (optional_scaling, (37, 100)),
    "fused-sum/two_partial_buffers": (as_written_within("fused-sum/two_partial_buffers", "scale_backward",
                                                        scaling_backward, 1e-5, tensors_within=True), (37, 100)),
    "fused-sum/per_row_mean": (as_written_within("fused-sum/per_row_mean", "row_error", two_halves, 1e-2), (37, 100)),
    # The interpreter stores float32 into bfloat16 by truncation where torch (and the GPU's
    # cvt.rn) round to nearest: equal within one bfloat16 step here, bit for bit on a GPU
    # (test_fused_epilogue_gpu.py).
    "fused-cast/dequant_to_bf16": (as_written_within("fused-cast/dequant_to_bf16", "dequant", weights_and_scales,
                                                     2 ** -7, tensors_within=True), (200, 136)),
    "fused-cast/rebound_half": (as_written_within("fused-cast/rebound_half", "scale", vector_and_scalar, 0), (5000,)),
    "warp-specialize/descriptor_loads": (matmul, (100, 136, 72)),
    "warp-specialize/descriptor_loads_eight_warps": (matmul, (100, 136, 72)),
    "warp-specialize/pointer_loads_asked": (matmul, (100, 136, 72)),
    "autotune/bake_second_config": (matmul, (100, 136, 72)),
    "memory-hints/offsets_matmul": (matmul, (100, 136, 72)),
    "rows-per-program/softmax": (softmax, (37, 100)),
    "rows-per-program/options_dict": (softmax, (37, 100)),
    "prefetch/recurrence": (recurrent, (2, 7, 4, 64)),
    "prefetch/row_walk": (row_sum, (5, 1000)),
    "prefetch/recurrence_gated": (recurrent_gated, (2, 7, 4, 64)),
    "prefetch/moved_between": (decayed_sum, (9, 64)),
    "rows-per-program/pointer_bumps": (softmax, (37, 100)),
    "persistent/pointer_bumps": (softmax, (37, 100)),
    "rows-per-program/layernorm_pipelined": (layernorm, (37, 100)),
    "rows-per-program/block_softmax": (softmax, (37, 100)),
    "rows-per-program/softmax_trailing_return": (softmax, (37, 100)),
    "rows-per-program/block_layernorm": (layernorm, (37, 200)),
    "rows-per-program/block_layernorm_column_loops": (layernorm, (37, 600)),
    "rows-per-program/block_router_topk": (router, (37, 60, 6)),
    # (rows-per-program/normalized_cast_pid_docstring is not run here: the interpreter's loop
    # variable is a Python int, which has no .to(); compiled, it is an i32 tensor.)
    "rows-per-program/loop_2d_grid_heads": (head_rms, (37, 3)),
    "rows-per-program/grid_in_a_branch": (softmax, (37, 100)),
    "rows-per-program/def_grid": (softmax, (37, 100)),
    "persistent/def_grid_meta": (add, (5000,)),
    "grouped-order/normalized_tuple_pids": (matmul, (100, 136, 72)),
    "persistent/normalized_inline_pid": (add, (5000,)),
    "persistent/early_return_guard": (add, (5000,)),
    "split-k/atomic_block_scaled": (block_scaled_matmul, (20, 72, 300)),
    "split-k/atomic_branch_epilogue": (matmul_tril, (100, 136, 72)),
    "column-loop/softmax": (softmax, (3, 9000)),
    "column-loop/softmax_passes": (softmax, (3, 9000)),
    "column-loop/log_softmax": (log_softmax, (3, 5000)),
    "column-loop/online_needs_same_values": (scaled, (3, 9000)),
    "column-loop/layernorm": (layernorm, (3, 5000)),
    "column-loop/softmax_unpacked_settings": (softmax, (3, 9000)),
    "column-loop/rebound_pointer_then_loss": (nll, (3, 9000)),
    "column-loop/softmax_fits": (softmax_short_and_long, (3, 9000)),
    "vectorize/add_block": (add, (5000,)),
    "exp2/attention": (attention, (1, 2, 80, 64)),
    "exp2/causal_lse": (causal_lse, (1, 2, 80, 64)),
    "exp2/scale_in_place": (attention_lse, (1, 2, 80, 64)),
    "exp2/softmax_temperature": (softmax_t, (5, 300)),
    "exp2/difference_row_max": (softmax, (5, 300)),
    "exp2/online_cross_entropy": (cross_entropy, (3, 3000)),
    "column-loop/softmax_masked_head": (softmax_masked, (3, 9000)),
    "online-softmax/cross_entropy": (cross_entropy, (3, 3000)),
    "online-softmax/softmax_three_loops": (softmax_half_masked, (3, 3000)),
    "eviction-hints/softmax_three_loops": (softmax_half_masked, (3, 3000)),
    "eviction-hints/online_softmax": (softmax_half_masked, (3, 3000)),
    "eviction-hints/layernorm_two_loops": (layernorm, (3, 600)),
    "causal-split/suite_named_mask": (causal_attention, (1, 2, 80, 16)),
    "causal-split/tl_range_exp2": (causal_attention, (1, 2, 80, 16)),
    "causal-split/tutorial_additive": (causal_attention, (1, 2, 80, 16)),
    "causal-split/guarded_zeros_then_dot": (causal_and_full_attention, (1, 2, 96, 16)),
    "causal-split/window_offset_start": (window_attention, (1, 2, 80, 16)),
    "flatten-loops/conv_suite": (conv2d, (2, 7, 9, 40, 36, 3, 2)),
    "flatten-loops/conv_compiler": (conv2d, (2, 7, 9, 40, 36, 3, 2)),
    "flatten-loops/conv_constexpr_filter": (conv2d, (2, 7, 9, 40, 36, 3, 2)),
    "flatten-loops/blocked_k_tl_range": (brgemm, (2, 100, 72, 80)),
    "flatten-loops/pointer_advance": (brgemm, (2, 100, 72, 80)),
    "relayout/conv_nchw": (conv2d_nchw, (2, 7, 9, 40, 36, 3, 3)),
    "relayout/matmul_operand_b": (matmul_layouts, (100, 136, 72)),
    "relayout/unit_stride_b": (sgemm_unit_stride, (100, 136, 72)),
    "tail-split/attention_exp2": (attention, (1, 2, 80, 64)),
    "tail-split/softmax_two_loops": (softmax, (3, 9000)),
    "tail-split/softmax_block_range_name": (softmax, (3, 9000)),
    "tail-split/matmul_k_bounds": (matmul_k_tails, (100, 136, 64, 72, 20)),
    "tail-split/matmul_pointer_advance": (matmul_k_tails, (100, 136, 64, 72, 20)),
    "tail-split/matmul_counted_blocks": (matmul_k_tails, (100, 136, 64, 72, 20)),
    "implicit-gemm/conv_nhwc_channels_inner": (conv2d_direct, (2, 7, 9, 40, 36, 3, 3)),
    "implicit-gemm/conv_nchw_channels_outer": (conv2d_nchw, (2, 7, 9, 40, 36, 3, 3)),
    "implicit-gemm/matmul_outer_inline": (sgemm_k_tails, (100, 136, 64, 72, 20)),
    "implicit-gemm/matmul_pointer_advance": (matmul_k_tails, (100, 136, 64, 72, 20)),
    "implicit-gemm/matmul_2d_pointers": (matmul_k_tails, (100, 136, 64, 72, 20)),
    "implicit-gemm/matmul_2d_direct": (matmul_k_tails, (100, 136, 64, 72, 20)),
    "implicit-gemm/matmul_row_implicit": (matmul_k_tails, (100, 136, 64, 72, 20)),
    "implicit-gemm/patch_embed_nchw_nest": (patch_embed_nchw, (3, 3, 20, 36, 40, 4)),
    "implicit-gemm/nest_tensor_binding_falls_back": (patch_embed_nchw, (3, 3, 20, 36, 40, 4)),
    "implicit-gemm/patch_nhwc_filter_nest": (patchify_nhwc, (2, 15, 21, 10, 36, 3, 3)),
    "implicit-gemm/patch_nhwc_static_filter": (patchify_nhwc, (2, 15, 21, 10, 36, 3, 3)),
    # split-rows: chunks that end inside a block, empty chunks, a row whose first chunks are
    # all -inf (masked_head), several blocks per chunk (rms: 20000 columns, 8 parts of 3072).
    "split-rows/softmax_online": (softmax, (3, 9000)),
    "split-rows/softmax_online_masked_head": (softmax_masked, (3, 9000)),
    "split-rows/cross_entropy_online": (cross_entropy, (3, 3000)),
    "split-rows/cross_entropy_exp2": (cross_entropy, (3, 3000)),
    "split-rows/layernorm_three_stages": (layernorm, (3, 5000)),
    "split-rows/rms_grid_2d": (rms, (2, 3, 20000)),
    "split-rows/center_rebound_variable": (center, (3, 3000)),
    "tensor-cores/descriptor_loads_implicit_gemm": (matmul_k_tails, (100, 136, 64, 72, 24)),
    "tensor-cores/descriptor_loads_after_relayout": (matmul_k_tails, (100, 136, 64, 72, 24)),
}

if __name__ == "__main__":
    wrong = 0
    for case, (fn, shape) in CASES.items():
        try:
            ok = fn(load(os.path.join(GOLDEN, case.replace("_masked_head", ""), "expected.py")), *shape)
            msg = "ok" if ok else "WRONG"
        except Exception as exc:  # reported, the run goes on
            ok, msg = False, f"ERROR {type(exc).__name__}: {exc}"
        wrong += not ok
        print(f"{case} {shape}: {msg}", flush=True)
    sys.exit(1 if wrong else 0)

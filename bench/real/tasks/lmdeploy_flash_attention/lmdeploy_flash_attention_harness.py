"""LMDeploy's varlen prefill attention: flash_attn_varlen_func(q, k, v, cu_seqlens_q,
cu_seqlens_k, max_seqlen_q, max_seqlen_k, softmax_scale, causal, window_size, softcap, ...,
kv_layout='shd') with q (tokens, q heads, 128) and k, v (tokens, kv heads, 128) bf16 over
packed sequences -> o (tokens, q heads, 128) bf16; causal, GQA, optionally a sliding window
(key j seen by query i when i - window <= j <= i). Block sizes and warps are chosen by the
launcher from the device's compute capability."""

import torch

DEVICE = "cuda"
PEAK = "bf16"
VENDOR = "SDPA per sequence (causal, window mask, GQA)"
SMALL_CASE = {"SEQS": 3, "MEAN": 20, "HQ": 4, "HK": 2, "D": 16, "WIN": 0}


def _lengths(case):
    n, mean = case["SEQS"], case["MEAN"]
    return [max(1, mean // 2 + (mean * i) // max(1, n - 1)) if n > 1 else mean for i in range(n)]


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    lens = _lengths(case)
    T, HQ, HK, D = sum(lens), case["HQ"], case["HK"], case["D"]
    q = torch.randn(T, HQ, D, device=DEVICE, generator=g).to(torch.bfloat16)
    k = torch.randn(T, HK, D, device=DEVICE, generator=g).to(torch.bfloat16)
    v = torch.randn(T, HK, D, device=DEVICE, generator=g).to(torch.bfloat16)
    cu = torch.tensor([0] + lens, device=DEVICE).cumsum(0).to(torch.int32)
    window = case["WIN"] if case["WIN"] > 0 else -1
    return (q, k, v, cu, cu, max(lens), max(lens), D ** -0.5, True, window, 0.0,
            None, None, None, None, None, None, 1, "shd")


def _attend(q, k, v, cu, scale, window):
    out = torch.empty_like(q)
    group = q.shape[1] // k.shape[1]
    bounds = cu.tolist()
    for s, e in zip(bounds[:-1], bounds[1:]):
        n = e - s
        i = torch.arange(n, device=q.device)
        mask = i[None, :] <= i[:, None]
        if window > 0:
            mask &= i[None, :] >= i[:, None] - window
        qs = q[s:e].transpose(0, 1)
        ks = k[s:e].transpose(0, 1).repeat_interleave(group, 0)
        vs = v[s:e].transpose(0, 1).repeat_interleave(group, 0)
        o = torch.nn.functional.scaled_dot_product_attention(qs, ks, vs, attn_mask=mask, scale=scale)
        out[s:e] = o.transpose(0, 1)
    return out


def reference(q, k, v, cu_q, cu_k, max_q, max_k, scale, causal, window, softcap, *rest):
    return _attend(q, k, v, cu_q, scale, window)


def vendor(q, k, v, cu_q, cu_k, max_q, max_k, scale, causal, window, softcap, *rest):
    return _attend(q, k, v, cu_q, scale, window)


def flops(case):
    total = 0
    for n in _lengths(case):
        w = case["WIN"]
        pairs = n * (n + 1) // 2 if w <= 0 else sum(min(i, w) + 1 for i in range(n))
        total += 4 * case["HQ"] * case["D"] * pairs
    return total


def bytes(case):
    T = sum(_lengths(case))
    return 2 * T * case["D"] * (2 * case["HQ"] + 2 * case["HK"])

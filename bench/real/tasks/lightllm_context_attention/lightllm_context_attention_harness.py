"""LightLLM's prefill attention: context_attention_fwd_no_prompt_cache(q, k, v, o, b_start_loc,
b_seq_len, max_input_len) over packed sequences (q: (tokens, q heads, head_dim), k and v:
(tokens, kv heads, head_dim), fp16), causal within each sequence, softmax scale 1/sqrt(d)."""

import torch

DEVICE = "cuda"
PEAK = "fp16"
VENDOR = "SDPA per sequence (is_causal, GQA)"
SMALL_CASE = {"SEQS": 3, "MEAN": 20, "HQ": 4, "HK": 2, "D": 16}


def _lengths(case):
    n, mean = case["SEQS"], case["MEAN"]
    # Lengths spread from mean/2 to 3*mean/2, deterministic, summing to about n * mean.
    return [max(1, mean // 2 + (mean * i) // max(1, n - 1)) if n > 1 else mean for i in range(n)]


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    lens = _lengths(case)
    T, HQ, HK, D = sum(lens), case["HQ"], case["HK"], case["D"]
    q = torch.randn(T, HQ, D, device=DEVICE, generator=g).to(torch.float16)
    k = torch.randn(T, HK, D, device=DEVICE, generator=g).to(torch.float16)
    v = torch.randn(T, HK, D, device=DEVICE, generator=g).to(torch.float16)
    o = torch.empty_like(q)
    seq_len = torch.tensor(lens, device=DEVICE, dtype=torch.int32)
    start = torch.cumsum(seq_len, 0, dtype=torch.int32) - seq_len
    return (q, k, v, o, start, seq_len, max(lens))


def _attend(q, k, v, start, seq_len, causal=True):
    out = torch.empty_like(q)
    group = q.shape[1] // k.shape[1]
    for s, n in zip(start.tolist(), seq_len.tolist()):
        qs = q[s:s + n].transpose(0, 1)
        ks = k[s:s + n].transpose(0, 1).repeat_interleave(group, 0)
        vs = v[s:s + n].transpose(0, 1).repeat_interleave(group, 0)
        o = torch.nn.functional.scaled_dot_product_attention(qs[None], ks[None], vs[None], is_causal=causal)
        out[s:s + n] = o[0].transpose(0, 1)
    return out


def reference(q, k, v, o, start, seq_len, max_len):
    return _attend(q, k, v, start, seq_len)


def vendor(q, k, v, o, start, seq_len, max_len):
    o.copy_(_attend(q, k, v, start, seq_len))


def flops(case):
    lens = _lengths(case)
    return sum(2 * case["HQ"] * n * n * case["D"] for n in lens)  # causal: half of 4 * n^2 * d


def bytes(case):
    T = sum(_lengths(case))
    return 2 * T * case["D"] * (2 * case["HQ"] + 2 * case["HK"])

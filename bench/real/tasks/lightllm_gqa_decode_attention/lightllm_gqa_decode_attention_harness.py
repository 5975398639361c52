"""LightLLM's GQA decode attention: gqa_decode_attention_fwd(q, k, v, o, req_to_tokens,
b_req_idx, b_seq_len) with q (requests, q heads, head_dim) fp16, the KV cache k, v (slots, kv
heads, head_dim) fp16, req_to_tokens (request, position) -> slot, and each request's length;
writes o (requests, q heads, head_dim). One program per (request, kv head) holding that head's
query group, looping over the request's tokens 32 at a time. Softmax scale 1/sqrt(head_dim)."""

import torch

DEVICE = "cuda"
PEAK = "fp16"
VENDOR = "SDPA per request over the gathered cache (GQA)"
SMALL_CASE = {"B": 3, "LEN": 40, "HQ": 4, "HK": 2, "D": 16}


def _lengths(case):
    n, mean = case["B"], case["LEN"]
    # Spread from mean/2 to 3*mean/2, deterministic.
    return [max(1, mean // 2 + (mean * i) // max(1, n - 1)) if n > 1 else mean for i in range(n)]


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    lens = _lengths(case)
    B, HQ, HK, D = case["B"], case["HQ"], case["HK"], case["D"]
    slots = sum(lens) + 64
    k = torch.randn(slots, HK, D, device=DEVICE, generator=g).to(torch.float16)
    v = torch.randn(slots, HK, D, device=DEVICE, generator=g).to(torch.float16)
    q = torch.randn(B, HQ, D, device=DEVICE, generator=g).to(torch.float16)
    o = torch.empty_like(q)
    # Each request's tokens live in slots scattered over the cache (a paged allocator's order).
    perm = torch.randperm(slots, device=DEVICE, generator=g).to(torch.int32)
    req_to_tokens = torch.zeros(B, max(lens), dtype=torch.int32, device=DEVICE)
    start = 0
    for b, n in enumerate(lens):
        req_to_tokens[b, :n] = perm[start:start + n]
        start += n
    b_req_idx = torch.arange(B, dtype=torch.int32, device=DEVICE)
    b_seq_len = torch.tensor(lens, dtype=torch.int32, device=DEVICE)
    return (q, k, v, o, req_to_tokens, b_req_idx, b_seq_len)


def _attend(q, k, v, req_to_tokens, b_req_idx, b_seq_len, sdpa=False):
    out = torch.empty_like(q)
    group = q.shape[1] // k.shape[1]
    for b, n in enumerate(b_seq_len.tolist()):
        idx = req_to_tokens[int(b_req_idx[b])][:n].long()
        kb = k[idx].transpose(0, 1).repeat_interleave(group, 0)      # (HQ, n, D)
        vb = v[idx].transpose(0, 1).repeat_interleave(group, 0)
        if sdpa:
            out[b] = torch.nn.functional.scaled_dot_product_attention(q[b][:, None], kb, vb)[:, 0]
            continue
        scores = (kb @ q[b][:, :, None])[..., 0] / q.shape[-1] ** 0.5  # (HQ, n)
        out[b] = (torch.softmax(scores, -1)[:, None, :] @ vb)[:, 0]
    return out


def reference(q, k, v, o, req_to_tokens, b_req_idx, b_seq_len):
    return _attend(q, k, v, req_to_tokens, b_req_idx, b_seq_len)


def vendor(q, k, v, o, req_to_tokens, b_req_idx, b_seq_len):
    o.copy_(_attend(q, k, v, req_to_tokens, b_req_idx, b_seq_len, sdpa=True))


def flops(case):
    return 4 * sum(_lengths(case)) * case["HQ"] * case["D"]


def bytes(case):
    T = sum(_lengths(case))
    return 2 * (2 * T * case["HK"] * case["D"] + 2 * case["B"] * case["HQ"] * case["D"]) + 4 * T

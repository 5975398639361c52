"""LightLLM's GQA decode attention (flash decoding: stage 1 splits each request's tokens into
blocks of 128 per program, stage 2 merges them): gqa_token_decode_attention_flash_decoding(q,
infer_state, q_head_num, head_dim, cache_k, cache_v) with q (requests, q heads, head_dim) fp16,
the KV cache (slots, kv heads, head_dim) fp16 and infer_state carrying batch_size,
max_len_in_batch, b_req_idx, b_seq_len and req_manager.req_to_token_indexs (request, position)
-> slot, as LightLLM's inference state does; out=None and alloc_tensor_func(shape, dtype, device)
standing for LightLLM's cache manager (whose alloc_tensor takes its arguments positionally, as the
launcher calls it). Softmax scale 1/sqrt(head_dim)."""

import types

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
    max_len = max(lens)
    slots = sum(lens) + 64
    cache_k = torch.randn(slots, HK, D, device=DEVICE, generator=g).to(torch.float16)
    cache_v = torch.randn(slots, HK, D, device=DEVICE, generator=g).to(torch.float16)
    q = torch.randn(B, HQ, D, device=DEVICE, generator=g).to(torch.float16)
    # Each request's tokens live in slots scattered over the cache (a paged allocator's order).
    perm = torch.randperm(slots, device=DEVICE, generator=g).to(torch.int32)
    req_to_token = torch.zeros(B, max_len, dtype=torch.int32, device=DEVICE)
    start = 0
    for b, n in enumerate(lens):
        req_to_token[b, :n] = perm[start:start + n]
        start += n
    state = types.SimpleNamespace(
        batch_size=B, max_len_in_batch=max_len,
        b_req_idx=torch.arange(B, dtype=torch.int32, device=DEVICE),
        b_seq_len=torch.tensor(lens, dtype=torch.int32, device=DEVICE),
        req_manager=types.SimpleNamespace(req_to_token_indexs=req_to_token))
    return (q, state, HQ, D, cache_k, cache_v, None, _alloc)


def _alloc(shape, dtype, device):
    return torch.empty(shape, dtype=dtype, device=device)


def _attend(q, state, cache_k, cache_v):
    out = torch.empty_like(q)
    group = q.shape[1] // cache_k.shape[1]
    table = state.req_manager.req_to_token_indexs
    for b, n in enumerate(state.b_seq_len.tolist()):
        idx = table[int(state.b_req_idx[b])][:n].long()
        k = cache_k[idx].transpose(0, 1).repeat_interleave(group, 0)     # (HQ, n, D)
        v = cache_v[idx].transpose(0, 1).repeat_interleave(group, 0)
        scores = (k @ q[b][:, :, None])[..., 0] / q.shape[-1] ** 0.5     # (HQ, n)
        out[b] = (torch.softmax(scores, -1)[:, None, :] @ v)[:, 0]
    return out


def reference(q, state, q_head_num, head_dim, cache_k, cache_v, out, alloc):
    return _attend(q, state, cache_k, cache_v)


def vendor(q, state, q_head_num, head_dim, cache_k, cache_v, out, alloc):
    out = torch.empty_like(q)
    group = q.shape[1] // cache_k.shape[1]
    table = state.req_manager.req_to_token_indexs
    for b, n in enumerate(state.b_seq_len.tolist()):
        idx = table[int(state.b_req_idx[b])][:n].long()
        k = cache_k[idx].transpose(0, 1).repeat_interleave(group, 0)
        v = cache_v[idx].transpose(0, 1).repeat_interleave(group, 0)
        out[b] = torch.nn.functional.scaled_dot_product_attention(q[b][:, None], k, v)[:, 0]
    return out


def flops(case):
    return 4 * sum(_lengths(case)) * case["HQ"] * case["D"]


def bytes(case):
    T = sum(_lengths(case))
    return 2 * (2 * T * case["HK"] * case["D"] + 2 * case["B"] * case["HQ"] * case["D"]) + 4 * T

"""LMDeploy's fused multi-LoRA: fused_lora(input, lora_a, lora_b, scaling, rank_start, ranks,
seq_start, seq_lens, adapter_ids, max_rank, max_seqlen) with input (tokens, K) fp16, lora_a
(total rank, K) and lora_b (total rank, N) fp16 holding every adapter's rows from rank_start
on, per-adapter rank and scaling, and per request its first token, length and adapter ->
(tokens, N) = scaling * (x @ A.T) @ B for each request's adapter."""

import torch

DEVICE = "cuda"
PEAK = "fp16"
VENDOR = "two torch.mm per request"
SMALL_CASE = {"B": 3, "LEN": 5, "K": 64, "N": 48}
RANKS = [8, 16, 32, 64]


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    B, L, K, N = case["B"], case["LEN"], case["K"], case["N"]
    total = sum(RANKS)
    x = torch.randn(B * L, K, device=DEVICE, generator=g).to(torch.float16)
    lora_a = (torch.randn(total, K, device=DEVICE, generator=g) / K ** 0.5).to(torch.float16)
    lora_b = torch.cat([torch.randn(r, N, device=DEVICE, generator=g) / r ** 0.5 for r in RANKS]).to(torch.float16)
    scaling = torch.tensor([2.0, 1.0, 0.5, 0.25], device=DEVICE, dtype=torch.float16)
    ranks = torch.tensor(RANKS, device=DEVICE)
    rank_start = torch.cumsum(ranks, 0) - ranks
    seq_lens = torch.full((B,), L, device=DEVICE, dtype=torch.long)
    seq_start = torch.arange(B, device=DEVICE) * L
    adapters = torch.arange(B, device=DEVICE) % len(RANKS)
    return (x, lora_a, lora_b, scaling, rank_start, ranks, seq_start, seq_lens, adapters, max(RANKS), L)


def _apply(x, lora_a, lora_b, scaling, rank_start, ranks, seq_start, seq_lens, adapters):
    out = torch.empty(x.shape[0], lora_b.shape[1], dtype=x.dtype, device=x.device)
    for s, n, a in zip(seq_start.tolist(), seq_lens.tolist(), adapters.tolist()):
        r0, r = int(rank_start[a]), int(ranks[a])
        mid = (x[s:s + n] @ lora_a[r0:r0 + r].T) * scaling[a].to(x.dtype)
        out[s:s + n] = mid @ lora_b[r0:r0 + r]
    return out


def reference(x, lora_a, lora_b, scaling, rank_start, ranks, seq_start, seq_lens, adapters, max_rank, max_len):
    return _apply(x, lora_a, lora_b, scaling, rank_start, ranks, seq_start, seq_lens, adapters)


def vendor(x, lora_a, lora_b, scaling, rank_start, ranks, seq_start, seq_lens, adapters, max_rank, max_len):
    return _apply(x, lora_a, lora_b, scaling, rank_start, ranks, seq_start, seq_lens, adapters)


def flops(case):
    B, L, K, N = case["B"], case["LEN"], case["K"], case["N"]
    r = sum(RANKS[i % len(RANKS)] for i in range(B)) / B
    return int(2 * B * L * r * (K + N))


def bytes(case):
    B, L, K, N = case["B"], case["LEN"], case["K"], case["N"]
    return 2 * (B * L * (K + N) + sum(RANKS) * (K + N))

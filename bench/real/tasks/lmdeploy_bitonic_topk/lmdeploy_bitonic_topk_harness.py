"""LMDeploy's bitonic top-k (the DeepSeek-V3.2 indexer's token selection): bitonic_topk(scores,
q_seqlens, kv_seqlens, k) with scores (queries, max kv length) fp32 and each query's kv length
-> (queries, k) int32 token ids ordered by decreasing score (-1 past a short row's end). Kernel
0 sorts each k-wide block (a persistent grid), kernel 1 merges the blocks of a row."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "torch.topk per row"
SMALL_CASE = {"T": 3, "LEN": 40, "K": 16}


def _lengths(case):
    n, mean = case["T"], case["LEN"]
    return [max(1, mean // 2 + (mean * i) // max(1, n - 1)) if n > 1 else mean for i in range(n)]


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    lens = _lengths(case)
    T, L = case["T"], max(lens)
    # Distinct scores (a random order of 0..L-1, scaled): ties would make the order ambiguous.
    scores = torch.stack([torch.randperm(L, device=DEVICE, generator=g) for _ in range(T)]).float()
    scores = scores / L * 20.0 - 10.0
    kv = torch.tensor(lens, dtype=torch.int32, device=DEVICE)
    q = torch.ones(T, dtype=torch.int32, device=DEVICE)
    return (scores, q, kv, case["K"])


def reference(scores, q_seqlens, kv_seqlens, k):
    out = torch.full((scores.shape[0], k), -1, dtype=torch.int64, device=scores.device)
    for i, n in enumerate(kv_seqlens.tolist()):
        top = scores[i, :n].topk(min(k, n), sorted=True).indices
        out[i, :top.numel()] = top
    return out


def vendor(scores, q_seqlens, kv_seqlens, k):
    return reference(scores, q_seqlens, kv_seqlens, k).to(torch.int32)


def flops(case):
    return 0


def bytes(case):
    return 4 * sum(_lengths(case)) + 4 * case["T"] * case["K"]

"""LightLLM's MoE router: softmax_topk(router_logits, topk, renorm) returns the top-k softmax
probabilities (fp32, descending) and their expert indices (int32), renormalized to sum to 1
when renorm is set."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "torch.softmax + torch.topk"
SMALL_CASE = {"T": 9, "E": 12, "K": 3, "RENORM": True}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    T, E = case["T"], case["E"]
    # Distinct logits per row (a permutation of a fine grid plus noise): the top-k is unique.
    perm = torch.argsort(torch.rand(T, E, device=DEVICE, generator=g), dim=1).float()
    logits = perm * 0.05 + torch.rand(T, E, device=DEVICE, generator=g) * 0.01 - 1.5
    return (logits, case["K"], case["RENORM"])


def reference(logits, k, renorm):
    p = torch.softmax(logits, dim=-1)
    vals, idx = torch.topk(p, k, dim=-1)
    if renorm:
        vals = vals / vals.sum(-1, keepdim=True)
    return (vals, idx)


def vendor(logits, k, renorm):
    vals, idx = torch.topk(torch.softmax(logits, dim=-1), k, dim=-1)
    if renorm:
        vals = vals / vals.sum(-1, keepdim=True)
    return (vals, idx.to(torch.int32))


def flops(case):
    return 4 * case["T"] * case["E"]


def bytes(case):
    return 4 * case["T"] * case["E"] + 8 * case["T"] * case["K"]

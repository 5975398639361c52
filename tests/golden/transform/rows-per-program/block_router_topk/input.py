"""MoE router written the straightforward way: one program per token, a softmax over the
experts, then k rounds that each take the largest remaining probability and its expert,
and a renormalization that reads the k picks back from memory."""

import torch
import triton
import triton.language as tl


@triton.jit
def router_topk(logits_ptr, weights_ptr, ids_ptr, stride, n_experts,
                BLOCK_E: tl.constexpr, K: tl.constexpr, BLOCK_K: tl.constexpr, RENORM: tl.constexpr):
    token = tl.program_id(0)
    cols = tl.arange(0, BLOCK_E)
    x = tl.load(logits_ptr + token * stride + cols, mask=cols < n_experts, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    total = tl.sum(tl.exp(x), axis=0)
    picked = 0.0
    for i in range(K):
        best = tl.max(x, axis=0)
        at = tl.argmax(x, axis=0)
        p = tl.exp(best) / total
        picked += p
        tl.store(weights_ptr + token * K + i, p)
        tl.store(ids_ptr + token * K + i, at)
        x = tl.where(cols == at, -float("inf"), x)
    if RENORM:
        ks = tl.arange(0, BLOCK_K)
        w = tl.load(weights_ptr + token * K + ks, mask=ks < K, other=0.0)
        tl.store(weights_ptr + token * K + ks, w / picked, mask=ks < K)


def router(logits, k, renorm=True):
    tokens, experts = logits.shape
    weights = torch.empty((tokens, k), dtype=torch.float32, device=logits.device)
    ids = torch.empty((tokens, k), dtype=torch.int32, device=logits.device)
    router_topk[(tokens,)](logits, weights, ids, logits.stride(0), experts,
                           BLOCK_E=triton.next_power_of_2(experts), K=k,
                           BLOCK_K=triton.next_power_of_2(k), RENORM=renorm, num_warps=1)
    return weights, ids

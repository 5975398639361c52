"""MoE router written the straightforward way: one program per token, a softmax over the
experts, then k rounds that each take the largest remaining probability and its expert,
and a renormalization that reads the k picks back from memory."""

import torch
import triton
import triton.language as tl


@triton.jit
def router_topk(logits_ptr, weights_ptr, ids_ptr, stride, n_experts,
                BLOCK_E: tl.constexpr, K: tl.constexpr, BLOCK_K: tl.constexpr, RENORM: tl.constexpr,
                ROWS_PER_PROGRAM: tl.constexpr,
                n_rows):
    # rows-per-program: this program takes ROWS_PER_PROGRAM rows as one tile, a row per tile row
    token = tl.program_id(0) * ROWS_PER_PROGRAM + tl.arange(0, ROWS_PER_PROGRAM)[:, None]
    cols = tl.arange(0, BLOCK_E)
    x = tl.load(logits_ptr + token * stride + cols, mask=(cols < n_experts) & (token < n_rows), other=-float("inf"))
    x = x - tl.max(x, axis=1, keep_dims=True)
    total = tl.sum(tl.exp(x), axis=1, keep_dims=True)
    picked = tl.full([ROWS_PER_PROGRAM, 1], 0.0, tl.float32)
    for i in range(K):
        best = tl.max(x, axis=1, keep_dims=True)
        at = tl.argmax(x, axis=1, keep_dims=True)
        p = tl.exp(best) / total
        picked += p
        tl.store(weights_ptr + token * K + i, p, mask=token < n_rows)
        tl.store(ids_ptr + token * K + i, at, mask=token < n_rows)
        x = tl.where(cols == at, -float("inf"), x)
    if RENORM:
        ks = tl.arange(0, BLOCK_K)
        # rows-per-program: the tile's rows span warps; what the program stored is read back below
        tl.debug_barrier()
        w = tl.load(weights_ptr + token * K + ks, mask=(ks < K) & (token < n_rows), other=0.0)
        tl.store(weights_ptr + token * K + ks, w / picked, mask=(ks < K) & (token < n_rows))


def router(logits, k, renorm=True):
    tokens, experts = logits.shape
    weights = torch.empty((tokens, k), dtype=torch.float32, device=logits.device)
    ids = torch.empty((tokens, k), dtype=torch.int32, device=logits.device)
    rows_per_program = 8
    router_topk[(triton.cdiv(tokens, rows_per_program),)](logits, weights, ids, logits.stride(0), experts,
                           BLOCK_E=triton.next_power_of_2(experts), K=k,
                           BLOCK_K=triton.next_power_of_2(k), RENORM=renorm,
                           ROWS_PER_PROGRAM=rows_per_program, n_rows=tokens, num_warps=1)
    return weights, ids

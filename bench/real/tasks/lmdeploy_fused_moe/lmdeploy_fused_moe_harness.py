"""LMDeploy's fused MoE: fused_moe(hidden_states, w1, w2, topk_weights, topk_ids, topk) with
hidden_states (tokens, hidden) bf16, w1 (experts, 2 I, hidden) = [gate | up] and w2 (experts,
hidden, I) bf16, the router's weights (tokens, topk) fp32 and expert ids (tokens, topk) int64
-> sum_k weight_k * (silu(x W1g^T) * (x W1u^T)) W2^T for each token's experts, bf16. Tokens
are sorted by expert with two small Triton kernels (or block-aligned for the compact path),
then grouped GEMMs (@triton.autotune) run over each expert's rows."""

import torch

DEVICE = "cuda"
PEAK = "bf16"
VENDOR = "torch, expert by expert"
SMALL_CASE = {"M": 6, "E": 4, "H": 64, "I": 32, "K": 2}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    M, E, H, I, K = case["M"], case["E"], case["H"], case["I"], case["K"]
    x = torch.randn(M, H, device=DEVICE, generator=g).to(torch.bfloat16)
    w1 = (torch.randn(E, 2 * I, H, device=DEVICE, generator=g) / H ** 0.5).to(torch.bfloat16)
    w2 = (torch.randn(E, H, I, device=DEVICE, generator=g) * (2.0 / I) ** 0.5).to(torch.bfloat16)
    logits = torch.randn(M, E, device=DEVICE, generator=g)
    weights, ids = torch.softmax(logits, -1).topk(K, -1)
    return (x, w1, w2, weights, ids, K)


def _moe(x, w1, w2, weights, ids, topk):
    out = torch.zeros(x.shape[0], w2.shape[1], dtype=torch.float64 if x.dtype == torch.float64 else torch.float32,
                      device=x.device)
    I = w2.shape[2]
    for e in range(w1.shape[0]):
        tok, slot = torch.nonzero(ids == e, as_tuple=True)
        if tok.numel() == 0:
            continue
        h = x[tok] @ w1[e].T
        a = torch.nn.functional.silu(h[:, :I]) * h[:, I:]
        y = a @ w2[e].T
        out.index_add_(0, tok, (y * weights[tok, slot][:, None].to(y.dtype)).to(out.dtype))
    return out


def reference(x, w1, w2, weights, ids, topk):
    return _moe(x, w1, w2, weights, ids, topk)


def vendor(x, w1, w2, weights, ids, topk):
    return _moe(x, w1, w2, weights, ids, topk).to(x.dtype)


def flops(case):
    return 2 * case["M"] * case["K"] * 3 * case["H"] * case["I"]


def bytes(case):
    M, E, H, I, K = case["M"], case["E"], case["H"], case["I"], case["K"]
    experts = min(E, M * K)
    return 2 * 3 * experts * H * I + 2 * 2 * M * H + 2 * M * K * (3 * I + H)

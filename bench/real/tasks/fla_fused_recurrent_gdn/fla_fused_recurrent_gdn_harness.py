"""flash-linear-attention's fused recurrent Gated DeltaNet: fused_recurrent_gated_delta_rule(q,
k, v, g, gk, gv, beta, scale, initial_state, output_final_state, use_qk_l2norm_in_kernel) with
q, k (batch, tokens, heads, 128) bf16, v (batch, tokens, value heads, 128) bf16, g (batch,
tokens, value heads) fp32 log-decays, beta (batch, tokens, value heads) bf16 and an fp32 state
(batch, value heads, 128, 128) -> (o (batch, tokens, value heads, 128) bf16, final state fp32).
Per step: q, k L2-normalised, S *= exp(g), v' = beta (v - S^T k), S += k v'^T, o = S^T q * scale.
One program per (8 value columns, request, value head), one warp."""

import torch

DEVICE = "cuda"
PEAK = None
SMALL_CASE = {"B": 2, "T": 3, "H": 2, "HV": 4, "D": 16}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    B, T, H, HV, D = case["B"], case["T"], case["H"], case["HV"], case["D"]
    q = torch.randn(B, T, H, D, device=DEVICE, generator=g).to(torch.bfloat16)
    k = torch.randn(B, T, H, D, device=DEVICE, generator=g).to(torch.bfloat16)
    v = torch.randn(B, T, HV, D, device=DEVICE, generator=g).to(torch.bfloat16)
    decay = -torch.nn.functional.softplus(torch.randn(B, T, HV, device=DEVICE, generator=g)) * 0.5
    beta = torch.sigmoid(torch.randn(B, T, HV, device=DEVICE, generator=g)).to(torch.bfloat16)
    state = torch.randn(B, HV, D, D, device=DEVICE, generator=g) * 0.1
    return (q, k, v, decay, None, None, beta, D ** -0.5, state, True, True)


def reference(q, k, v, g, gk, gv, beta, scale, state, output_final_state, l2norm):
    B, T, H, D = q.shape
    HV = v.shape[2]
    rep = HV // H
    qn = q / torch.sqrt((q * q).sum(-1, keepdim=True) + 1e-6)
    kn = k / torch.sqrt((k * k).sum(-1, keepdim=True) + 1e-6)
    qn = qn.repeat_interleave(rep, 2) * scale
    kn = kn.repeat_interleave(rep, 2)
    S = state.clone()
    out = torch.empty_like(v)
    for t in range(T):
        S = S * g[:, t].exp()[..., None, None]
        kt, qt, vt = kn[:, t], qn[:, t], v[:, t]                      # (B, HV, D)
        delta = beta[:, t][..., None] * (vt - torch.einsum("bhkv,bhk->bhv", S, kt))
        S = S + kt[..., :, None] * delta[..., None, :]
        out[:, t] = torch.einsum("bhkv,bhk->bhv", S, qt)
    return out, S


def flops(case):
    B, T, HV, D = case["B"], case["T"], case["HV"], case["D"]
    return 6 * B * T * HV * D * D


def bytes(case):
    B, T, H, HV, D = case["B"], case["T"], case["H"], case["HV"], case["D"]
    return 2 * B * T * D * (2 * H + 2 * HV) + 6 * B * T * HV + 2 * 4 * B * HV * D * D

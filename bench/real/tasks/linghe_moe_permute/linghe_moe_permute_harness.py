"""Linghe's MoE permutation: triton_permute_with_mask_map(inp, scale, probs, row_id_map,
num_out_tokens) with inp (tokens, hidden) fp8 e4m3, scale (tokens,) fp32, probs (tokens,
experts) fp32 and row_id_map (tokens, experts) int32 (the output row of each routed pair, -1
where not routed; each expert's rows contiguous, in token order) -> (output (rows, hidden),
permuted scales (rows,), permuted probabilities (rows,)). One program per token, looping over
its experts in increasing order."""

import torch

DEVICE = "cuda"
PEAK = None
SMALL_CASE = {"T": 6, "E": 8, "K": 2, "H": 16}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    T, E, K, H = case["T"], case["E"], case["K"], case["H"]
    x = torch.randn(T, H, device=DEVICE, generator=g)
    scale = x.abs().amax(-1) / 448.0
    inp = (x / scale[:, None]).to(torch.float8_e4m3fn)
    probs = torch.softmax(torch.randn(T, E, device=DEVICE, generator=g), -1)
    chosen = torch.rand(T, E, device=DEVICE, generator=g).topk(K, -1).indices
    routed = torch.zeros(T, E, dtype=torch.bool, device=DEVICE)
    routed.scatter_(1, chosen, True)
    # Rows of expert e start after all tokens of experts < e; within e, in token order.
    per_expert = routed.sum(0)
    start = torch.cumsum(per_expert, 0) - per_expert
    rank = torch.cumsum(routed.int(), 0) - 1
    row_id_map = torch.where(routed, start[None, :] + rank, -1).to(torch.int32).contiguous()
    return (inp, scale, probs, row_id_map, T * K)


def reference(inp, scale, probs, row_id_map, num_out):
    tok, exp = torch.nonzero(row_id_map >= 0, as_tuple=True)
    rows = row_id_map[tok, exp].long()
    out = torch.zeros(num_out, inp.shape[1], dtype=inp.dtype, device=inp.device)
    out_scale = torch.zeros(num_out, dtype=scale.dtype, device=scale.device)
    out_probs = torch.zeros(num_out, dtype=probs.dtype, device=probs.device)
    out[rows] = inp[tok]
    out_scale[rows] = scale[tok]
    out_probs[rows] = probs[tok, exp]
    return out, out_scale, out_probs


def flops(case):
    return 0


def bytes(case):
    T, E, K, H = case["T"], case["E"], case["K"], case["H"]
    return T * H + T * K * H + 4 * T * (1 + E) + 4 * T * E + 8 * T * K

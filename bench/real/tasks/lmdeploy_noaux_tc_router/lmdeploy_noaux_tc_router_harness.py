"""LMDeploy's fused DeepSeek-V3 router: fused_noaux_tc_routing(logits, bias, num_experts,
n_group, topk_group, top_k, renormalize, routed_scaling_factor) -> (weights (tokens, top_k)
fp32, expert ids (tokens, top_k) int64), ids by decreasing biased score; weights are the
unbiased sigmoid scores, renormalised, times the scaling factor. One program per token; groups
and experts chosen by repeated tl.argmax."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "DeepSeek-V3's routing in torch"
SMALL_CASE = {"T": 5, "E": 64, "G": 4, "TG": 2, "K": 4}
SCALE = 2.5


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    T, E = case["T"], case["E"]
    target = _separated_scores(T, E, g)        # the biased scores
    bias = (torch.rand(E, device=DEVICE, generator=g) - 0.5) * 0.08
    p = target - bias                           # sigmoid(logits) + bias == target
    logits = torch.log(p / (1 - p))
    return (logits, bias, E, case["G"], case["TG"], case["K"], True, SCALE)


def _separated_scores(T, E, g):
    """(T, E) scores in (0.05, 0.95), distinct within each row by at least 0.45 / E: each row a
    random order of an evenly spaced grid, jittered. Random logits put near-ties (gaps below
    fp32's resolution) among the chosen experts of about one token in 16384, which an fp32
    kernel may order either way; a float64 reference cannot then decide which ids are right."""
    order = torch.argsort(torch.rand(T, E, device=DEVICE, generator=g), dim=-1).float()
    jitter = torch.rand(T, E, device=DEVICE, generator=g) * 0.5
    return 0.05 + 0.9 * (order + 0.25 + jitter) / E


def _route(logits, bias, E, groups, topk_group, top_k, renormalize, scaling):
    scores = torch.sigmoid(logits)
    biased = scores + bias
    T = biased.shape[0]
    group_score = biased.view(T, groups, E // groups).topk(2, dim=-1).values.sum(-1)
    keep = torch.zeros_like(group_score, dtype=torch.bool)
    keep.scatter_(1, group_score.topk(topk_group, dim=-1).indices, True)
    masked = biased.masked_fill(~keep.repeat_interleave(E // groups, 1), float("-inf"))
    ids = masked.topk(top_k, dim=-1, sorted=True).indices
    weights = scores.gather(1, ids)
    if renormalize:
        weights = weights / weights.sum(-1, keepdim=True)
    return weights * scaling, ids


def reference(logits, bias, E, groups, topk_group, top_k, renormalize, scaling):
    return _route(logits, bias, E, groups, topk_group, top_k, renormalize, scaling)


def vendor(logits, bias, E, groups, topk_group, top_k, renormalize, scaling):
    w, ids = _route(logits, bias, E, groups, topk_group, top_k, renormalize, scaling)
    return w.float(), ids


def flops(case):
    return 0


def bytes(case):
    return 4 * case["T"] * case["E"] + 4 * case["E"] + 12 * case["T"] * case["K"]

"""LightLLM's grouped top-k router: triton_grouped_topk(hidden_states, gating_output,
correction_bias, topk, renormalize, num_expert_group, topk_group, scoring_func,
group_score_used_topk_num) -> (weights (tokens, topk) fp32, expert ids (tokens, topk) int64),
ids in decreasing order of the (biased) score. One program per token; hidden_states is unused
by the kernel (None here)."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "DeepSeek's grouped top-k in torch"
SMALL_CASE = {"T": 5, "E": 24, "G": 4, "TG": 2, "K": 3, "V3": 1}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    T, E = case["T"], case["E"]
    v3 = bool(case["V3"])
    target = _separated_scores(T, E, g)       # the biased scores (V3) or the probabilities' order (V2)
    if v3:
        bias = (torch.rand(E, device=DEVICE, generator=g) - 0.5) * 0.08
        p = target - bias                      # sigmoid(logits) + bias == target
        logits = torch.log(p / (1 - p))
    else:
        bias = None
        logits = torch.log(target)             # softmax(logits) is target, normalised
    return (None, logits, bias, case["K"], v3, case["G"], case["TG"], "sigmoid" if v3 else "softmax", 2 if v3 else 1)


def _separated_scores(T, E, g):
    """(T, E) scores in (0.05, 0.95), distinct within each row by at least 0.45 / E: each row a
    random order of an evenly spaced grid, jittered. Random logits put near-ties (gaps below
    fp32's resolution) among the chosen experts of about one token in 16384, which an fp32
    kernel may order either way; a float64 reference cannot then decide which ids are right."""
    order = torch.argsort(torch.rand(T, E, device=DEVICE, generator=g), dim=-1).float()
    jitter = torch.rand(T, E, device=DEVICE, generator=g) * 0.5
    return 0.05 + 0.9 * (order + 0.25 + jitter) / E


def _route(logits, bias, topk, renormalize, groups, topk_group, scoring, used):
    scores = torch.sigmoid(logits) if scoring == "sigmoid" else torch.softmax(logits, -1)
    biased = scores + bias if bias is not None else scores
    T, E = biased.shape
    per_group = biased.view(T, groups, E // groups)
    group_score = per_group.topk(used, dim=-1).values.sum(-1)                 # (T, groups)
    keep = torch.zeros_like(group_score, dtype=torch.bool)
    keep.scatter_(1, group_score.topk(topk_group, dim=-1).indices, True)
    masked = biased.masked_fill(~keep.repeat_interleave(E // groups, 1), float("-inf"))
    ids = masked.topk(topk, dim=-1, sorted=True).indices
    weights = scores.gather(1, ids)
    if renormalize:
        weights = weights / weights.sum(-1, keepdim=True)
    return weights, ids


def reference(hidden, logits, bias, topk, renormalize, groups, topk_group, scoring, used):
    return _route(logits, bias, topk, renormalize, groups, topk_group, scoring, used)


def vendor(hidden, logits, bias, topk, renormalize, groups, topk_group, scoring, used):
    w, ids = _route(logits, bias, topk, renormalize, groups, topk_group, scoring, used)
    return w.float(), ids


def flops(case):
    return 0


def bytes(case):
    return 4 * case["T"] * case["E"] + 4 * case["E"] + (4 + 8) * case["T"] * case["K"]

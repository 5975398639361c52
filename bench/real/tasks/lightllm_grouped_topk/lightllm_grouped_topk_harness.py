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
    logits = torch.randn(T, E, device=DEVICE, generator=g) * 2.0
    v3 = bool(case["V3"])
    bias = (torch.randn(E, device=DEVICE, generator=g) * 0.1) if v3 else None
    return (None, logits, bias, case["K"], v3, case["G"], case["TG"], "sigmoid" if v3 else "softmax", 2 if v3 else 1)


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

"""LightLLM's vocabulary embedding: embedding(input_ids, weight, vob_start_id, vob_end_id, out)
writes weight[id - start] for ids this rank holds and zeros for the others (tensor parallel:
the ranks' outputs are summed afterwards)."""

import torch

DEVICE = "cuda"
PEAK = None
SMALL_CASE = {"T": 70, "V": 50, "H": 24, "TP": 2, "RANK": 1}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    T, V, H, tp, rank = case["T"], case["V"], case["H"], case["TP"], case["RANK"]
    part = V // tp
    start, end = rank * part, (rank + 1) * part
    weight = (torch.randn(part, H, device=DEVICE, generator=g) * 0.02).to(torch.bfloat16)
    ids = torch.randint(0, V, (T,), device=DEVICE, generator=g)
    out = torch.empty(T, H, device=DEVICE, dtype=torch.bfloat16)
    return (ids, weight, start, end, out)


def reference(ids, weight, start, end, out):
    mine = (ids >= start) & (ids < end)
    rows = weight[(ids - start).clamp(0, weight.shape[0] - 1)]
    return torch.where(mine[:, None], rows, torch.zeros_like(rows))


def flops(case):
    return 0


def bytes(case):
    # ids, the output, and the rows this rank holds (about 1/TP of the tokens').
    return 8 * case["T"] + 2 * case["T"] * case["H"] + 2 * case["T"] * case["H"] // case["TP"]

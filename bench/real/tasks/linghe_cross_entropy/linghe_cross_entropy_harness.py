"""Linghe's softmax cross-entropy forward: triton_softmax_cross_entropy_forward(logits, labels,
ignore_index) with logits (tokens, vocab) bf16 and labels (tokens,) int64 -> (loss (tokens,),
sum_exp (tokens,), max_logit (tokens,)) fp32, sum_exp = sum exp(x - max); an ignored token gets
zeros. One program per token, an online softmax over 2048-wide blocks (fp64 running sum)."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "F.cross_entropy(logits.float(), reduction='none') + logsumexp parts"
SMALL_CASE = {"T": 5, "V": 3000}
IGNORE = -100


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    T, V = case["T"], case["V"]
    logits = (torch.randn(T, V, device=DEVICE, generator=g) * 2.0).to(torch.bfloat16)
    labels = torch.randint(0, V, (T,), device=DEVICE, generator=g)
    labels[torch.rand(T, device=DEVICE, generator=g) < 0.05] = IGNORE
    labels[0] = IGNORE   # at least one ignored token in every case
    return (logits, labels, IGNORE)


def reference(logits, labels, ignore_index):
    keep = labels != ignore_index
    m = logits.amax(-1)
    s = (logits - m[:, None]).exp().sum(-1)
    target = logits.gather(1, labels.clamp_min(0)[:, None])[:, 0]
    loss = s.log() - (target - m)
    zero = torch.zeros_like(loss)
    return torch.where(keep, loss, zero), torch.where(keep, s, zero), torch.where(keep, m, zero)


def vendor(logits, labels, ignore_index):
    x = logits.float()
    loss = torch.nn.functional.cross_entropy(x, labels, ignore_index=ignore_index, reduction="none")
    keep = labels != ignore_index
    m = x.amax(-1)
    s = (x - m[:, None]).exp().sum(-1)
    return loss, torch.where(keep, s, 0.0), torch.where(keep, m, 0.0)


def flops(case):
    return 4 * case["T"] * case["V"]


def bytes(case):
    return 2 * case["T"] * case["V"] + 8 * case["T"] + 12 * case["T"]

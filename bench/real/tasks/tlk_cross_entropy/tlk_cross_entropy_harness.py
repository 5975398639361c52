"""triton-lang/kernels' cross-entropy: cross_entropy(logits, indices) returns the per-token
loss -log softmax(logits)[index] in the logits' type; indices are int64."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "F.cross_entropy(logits.float(), reduction='none')"
SMALL_CASE = {"T": 7, "V": 1000}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    T, V = case["T"], case["V"]
    logits = (torch.randn(T, V, device=DEVICE, generator=g) * 2).to(torch.bfloat16)
    target = torch.randint(0, V, (T,), device=DEVICE, generator=g)
    return (logits, target)


def reference(logits, target):
    return torch.nn.functional.cross_entropy(logits, target, reduction="none")


def vendor(logits, target):
    return torch.nn.functional.cross_entropy(logits.float(), target, reduction="none").to(logits.dtype)


def flops(case):
    return 4 * case["T"] * case["V"]


def bytes(case):
    # The least traffic of a per-token loss: the logits once, the targets and the losses.
    return 2 * case["T"] * case["V"] + 8 * case["T"] + 2 * case["T"]

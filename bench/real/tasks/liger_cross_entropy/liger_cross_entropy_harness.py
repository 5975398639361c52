"""Liger's cross-entropy as a training loop calls it: LigerCrossEntropyFunction.apply(logits,
target, weight=None, ignore_index=-100, lse_square_scale=0, label_smoothing=0, reduction="mean"),
which returns (loss, z_loss, token_accuracy, predicted_tokens), the last three None here.
Logits are bf16 and do not require grad (an evaluation step), so the kernel leaves them as
they are."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "F.cross_entropy(logits.float())"
SMALL_CASE = {"T": 7, "V": 1000}
IGNORE = -100


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    T, V = case["T"], case["V"]
    logits = (torch.randn(T, V, device=DEVICE, generator=g) * 2).to(torch.bfloat16)
    target = torch.randint(0, V, (T,), device=DEVICE, generator=g)
    target[torch.arange(T, device=DEVICE) % 16 == 5] = IGNORE
    return (logits, target, None, IGNORE, 0.0, 0.0, "mean")


def reference(logits, target, weight, ignore_index, lse_square_scale, label_smoothing, reduction):
    loss = torch.nn.functional.cross_entropy(logits, target, ignore_index=ignore_index, reduction=reduction)
    return (loss, None, None, None)


def vendor(logits, target, weight, ignore_index, lse_square_scale, label_smoothing, reduction):
    loss = torch.nn.functional.cross_entropy(logits.float(), target, ignore_index=ignore_index)
    return (loss.to(logits.dtype), None, None, None)


def flops(case):
    return 4 * case["T"] * case["V"]


def bytes(case):
    return 2 * case["T"] * case["V"] + 8 * case["T"]

"""attorch's p-losses: PLossAutoGrad.apply(input, target, p_loss=2, reduction='mean') -> the
mean of (input - target)^2 over all elements: a 1-D grid of blocks under @triton.autotune, each
writing a partial sum, then torch sums the partials (the tuned block read back from the
kernel's best_config)."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "F.mse_loss"
SMALL_CASE = {"T": 5, "H": 300}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    x = torch.randn(case["T"], case["H"], device=DEVICE, generator=g)
    t = torch.randn(case["T"], case["H"], device=DEVICE, generator=g)
    return (x, t, 2, "mean")


def reference(x, t, p, reduction):
    return (x - t).pow(2).mean()


def vendor(x, t, p, reduction):
    return torch.nn.functional.mse_loss(x, t)


def flops(case):
    return 3 * case["T"] * case["H"]


def bytes(case):
    return 4 * 2 * case["T"] * case["H"]

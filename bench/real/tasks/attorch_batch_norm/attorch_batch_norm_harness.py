"""attorch's batch normalisation: BatchNormAutoGrad.apply(input, training, weight, bias,
running_mean, running_var, momentum, eps, track_running_stats, pre_act_add, act_func) on an
NCHW-like (N, C, H*W) fp32 input in training mode with ReLU fused, no running statistics and no
residual: one program per channel over the batch and spatial positions."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "F.relu(F.batch_norm(training=True))"
SMALL_CASE = {"N": 3, "C": 5, "HW": 20}
EPS = 1e-5


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    N, C, HW = case["N"], case["C"], case["HW"]
    x = torch.randn(N, C, HW, device=DEVICE, generator=g) * 2.0 + 0.5
    w = torch.rand(C, device=DEVICE, generator=g) + 0.5
    b = torch.randn(C, device=DEVICE, generator=g) * 0.1
    return (x, True, w, b, None, None, 0.1, EPS, False, None, "relu")


def reference(x, training, w, b, rm, rv, momentum, eps, track, pre_act_add, act):
    mean = x.mean(dim=(0, 2), keepdim=True)
    var = x.var(dim=(0, 2), unbiased=False, keepdim=True)
    return torch.relu((x - mean) * torch.rsqrt(var + eps) * w[:, None] + b[:, None])


def vendor(x, training, w, b, rm, rv, momentum, eps, track, pre_act_add, act):
    return torch.relu(torch.nn.functional.batch_norm(x, None, None, w, b, True, momentum, eps))


def flops(case):
    return 8 * case["N"] * case["C"] * case["HW"]


def bytes(case):
    # Read twice (statistics, then normalisation), written once.
    return 4 * 3 * case["N"] * case["C"] * case["HW"]

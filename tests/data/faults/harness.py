import torch


def make_inputs(case, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(case["N"], device="cuda", dtype=torch.float32, generator=g)
    y = torch.randn(case["N"], device="cuda", dtype=torch.float32, generator=g)
    return (x, y)


def reference(x, y):
    return 2 * x + y


def bytes(case):
    return 3 * case["N"] * 4


def flops(case):
    return 2 * case["N"]

import torch


def make_inputs(case, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(case["M"], case["K"], device="cuda", dtype=torch.float16, generator=g)
    b = torch.randn(case["K"], case["N"], device="cuda", dtype=torch.float16, generator=g)
    return (a, b)


def reference(a, b):
    # Called on float64 copies of the inputs: the exact product, rounded to fp16 on
    # comparison by the tolerance below.
    return a @ b


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]


def bytes(case):
    return 2 * (case["M"] * case["K"] + case["K"] * case["N"] + case["M"] * case["N"])

"""attorch's softmax family: SoftmaxAutoGrad.apply(input, neg, log) with neg = False and
log = True (LogSoftmax) over the last dimension of an fp16 (rows, features) tensor; a 1-D grid
of BLOCK_SIZE_BATCH rows per program under @triton.autotune (warps) and @triton.heuristics."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "torch.log_softmax"
SMALL_CASE = {"R": 5, "F": 300}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    x = (torch.randn(case["R"], case["F"], device=DEVICE, generator=g) * 2.0).to(torch.float16)
    return (x, False, True)


def reference(x, neg, log):
    return torch.log_softmax(-x if neg else x, -1)


def vendor(x, neg, log):
    return torch.log_softmax(x, -1)


def flops(case):
    return 4 * case["R"] * case["F"]


def bytes(case):
    return 2 * 2 * case["R"] * case["F"]

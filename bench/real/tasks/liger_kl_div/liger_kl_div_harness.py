"""Liger's KL divergence: LigerKLDivLossFunction.apply(y_pred, y_true, reduction, log_target,
eps) with y_pred = log Q (tokens, vocab) fp32 and y_true = P fp32 (log_target = False) -> the
scalar sum of P (log max(P, eps) - log Q) over the vocabulary and tokens, divided by the tokens
(batchmean). One program per row looping over 16384-wide blocks; torch sums the row results."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "F.kl_div(reduction='batchmean')"
SMALL_CASE = {"T": 5, "V": 300}
EPS = 1e-10


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    T, V = case["T"], case["V"]
    student = torch.log_softmax(torch.randn(T, V, device=DEVICE, generator=g) * 2.0, -1)
    teacher = torch.softmax(torch.randn(T, V, device=DEVICE, generator=g) * 2.0, -1)
    return (student, teacher, "batchmean", False, EPS)


def reference(y_pred, y_true, reduction, log_target, eps):
    return (y_true * (y_true.clamp_min(eps).log() - y_pred)).sum() / y_pred.shape[0]


def vendor(y_pred, y_true, reduction, log_target, eps):
    return torch.nn.functional.kl_div(y_pred, y_true, reduction="batchmean")


def flops(case):
    return 4 * case["T"] * case["V"]


def bytes(case):
    return 4 * 2 * case["T"] * case["V"]

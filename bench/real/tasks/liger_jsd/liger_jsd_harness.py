"""Liger's JSD loss: LigerJSDFunction.apply(input, target, shift_labels, beta, ignore_index)
with input = log Q (the student's log-probabilities) and target = log P (the teacher's), both
(tokens, vocab) bf16 -> the scalar sum over tokens and vocabulary of beta P log P + (1 - beta)
Q log Q - M log M, M = beta P + (1 - beta) Q, divided by the number of tokens, in bf16. One
program per token; the gradient is written alongside."""

import torch

DEVICE = "cuda"
PEAK = None
SMALL_CASE = {"T": 5, "V": 300}
BETA = 0.5


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    T, V = case["T"], case["V"]
    student = torch.log_softmax(torch.randn(T, V, device=DEVICE, generator=g) * 2.0, -1).to(torch.bfloat16)
    teacher = torch.log_softmax(torch.randn(T, V, device=DEVICE, generator=g) * 2.0, -1).to(torch.bfloat16)
    return (student, teacher, None, BETA, -100)


def reference(x, y, labels, beta, ignore_index):
    p, q = y.exp(), x.exp()
    m = beta * p + (1 - beta) * q
    return (beta * p * y + (1 - beta) * q * x - m * m.log()).sum() / x.shape[0]


def flops(case):
    return 12 * case["T"] * case["V"]


def bytes(case):
    # Both inputs read, the fp32 per-element loss written and summed, the gradient written.
    return case["T"] * case["V"] * (2 + 2 + 4 + 4 + 2)

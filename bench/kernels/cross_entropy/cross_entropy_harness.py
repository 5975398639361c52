"""Inputs, reference and roofline formulas for cross_entropy.

Shape: the language-model loss of Llama-3-8B (vocabulary 128256) over 4096 tokens: logits
(4096 x 128256) bf16, targets (4096,) int64, loss per token fp32 (reduction "none"). Logits
~N(0, 2^2). The vendor upcasts the logits to fp32 first, as Hugging Face's Llama does.
Memory-bound: bytes = read the logits once (plus the targets and the loss)."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "F.cross_entropy(logits.float())"
SMALL_CASE = {"M": 6, "V": 3000}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    M, V = case["M"], case["V"]
    logits = (torch.randn(M, V, device=DEVICE, dtype=torch.float32, generator=g) * 2).to(torch.bfloat16)
    targets = torch.randint(0, V, (M,), device=DEVICE, dtype=torch.int64, generator=g)
    return (logits, targets)


def reference(logits, targets):
    return torch.nn.functional.cross_entropy(logits, targets, reduction="none")


def vendor(logits, targets):
    return torch.nn.functional.cross_entropy(logits.float(), targets, reduction="none")


def flops(case):
    return 3 * case["M"] * case["V"]


def bytes(case):
    return 2 * case["M"] * case["V"] + 8 * case["M"] + 4 * case["M"]

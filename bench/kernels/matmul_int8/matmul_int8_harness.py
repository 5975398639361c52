"""Inputs, reference and roofline formulas for matmul_int8.

Shape: an LLM projection at int8 (a 4096 -> 8192 layer over 8192 tokens):
(8192 x 4096) @ (8192 x 4096)^T, int8 in, int32 out. The weight B is stored (N, K), as a
linear layer stores it. Inputs are uniform over [-127, 127] (symmetric int8 quantization)."""

import torch

DEVICE = "cuda"
PEAK = "int8"
VENDOR = "cuBLAS int8 (torch._int_mm)"
SMALL_CASE = {"M": 80, "N": 144, "K": 160}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    M, N, K = case["M"], case["N"], case["K"]
    a = torch.randint(-127, 128, (M, K), device=DEVICE, dtype=torch.int32, generator=g).to(torch.int8)
    b = torch.randint(-127, 128, (N, K), device=DEVICE, dtype=torch.int32, generator=g).to(torch.int8)
    return (a, b)


def reference(a, b):
    # Integer inputs reach the reference unchanged (the float64 upcast leaves them alone).
    # In float64 every product (at most 2^14) and every sum over K (at most 2^14 K = 2^26 at
    # K = 4096, below 2^53) is exact, in any order; CUDA has no int64 matrix product.
    f64 = torch.float64
    return (a.to(f64) @ b.to(f64).t()).to(torch.int32)


def vendor(a, b):
    # b.t() of the row-major (N, K) weight is the column-major (K, N) operand _int_mm wants.
    return torch._int_mm(a, b.t())


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]


def bytes(case):
    return case["M"] * case["K"] + case["N"] * case["K"] + 4 * case["M"] * case["N"]

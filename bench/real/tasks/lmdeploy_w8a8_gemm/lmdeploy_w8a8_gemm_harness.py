"""LMDeploy's W8A8 GEMM: matmul_kernel_dynamic_quant(a, b, rms_scale, linear_scale) with a
(tokens, K) int8 and its per-token scales (tokens, 1) fp32 (what the fused RMSNorm + quant
produces), b (N, K) int8 (the weight, row-major) and its per-channel scales (N, 1) fp32 ->
(a @ b.T) * rms_scale * linear_scale.T in fp16."""

import torch

DEVICE = "cuda"
PEAK = "int8"
VENDOR = "torch._int_mm + scales"
SMALL_CASE = {"M": 5, "K": 256, "N": 384}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    M, K, N = case["M"], case["K"], case["N"]
    a = torch.randint(-127, 128, (M, K), device=DEVICE, generator=g, dtype=torch.int32).to(torch.int8)
    b = torch.randint(-127, 128, (N, K), device=DEVICE, generator=g, dtype=torch.int32).to(torch.int8)
    # a @ b.T has a standard deviation of about 73^2 sqrt(K): scales bring outputs to ~N(0, 1).
    a_s = (torch.rand(M, 1, device=DEVICE, generator=g) + 0.5) / 73.0
    b_s = (torch.rand(N, 1, device=DEVICE, generator=g) + 0.5) / (73.0 * K ** 0.5)
    return (a, b, a_s, b_s)


def reference(a, b, a_s, b_s):
    return (a.double() @ b.double().T) * a_s * b_s.T


def vendor(a, b, a_s, b_s):
    # torch._int_mm needs more than 16 rows; fewer go through fp32 (exact to 2^-24 relative).
    acc = torch._int_mm(a, b.T) if a.is_cuda and a.shape[0] > 16 else (a.float() @ b.float().T)
    return (acc.float() * a_s * b_s.T).to(torch.float16)


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]


def bytes(case):
    M, K, N = case["M"], case["K"], case["N"]
    return M * K + N * K + 4 * (M + N) + 2 * M * N

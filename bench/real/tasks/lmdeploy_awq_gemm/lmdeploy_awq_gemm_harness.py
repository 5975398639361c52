"""LMDeploy's AWQ linear: awq_linear(x, qweight, scales, qzeros) with x (tokens, K) fp16,
qweight (K, N/8) int32 and qzeros (K/128, N/8) int32 each packing 8 consecutive columns in
AWQ's interleaved order (column j of a word in nibble [0, 4, 1, 5, 2, 6, 3, 7][j]), scales
(K/128, N) fp16. W = (q - z) * s per group; C = x @ W in fp16. The kernel unpacks with inline
PTX (lop3 and fp16 magic numbers)."""

import torch

DEVICE = "cuda"
PEAK = "fp16"
VENDOR = "dequantize in torch + torch.mm"
SMALL_CASE = {"M": 5, "K": 256, "N": 128}
G = 128
NIBBLE = [0, 4, 1, 5, 2, 6, 3, 7]     # nibble holding column j of each 8-column word


def _pack(nib):
    """(R, C) values 0..15 -> (R, C/8) int32 in AWQ's order."""
    n = nib.to(torch.int64).view(nib.shape[0], -1, 8)
    shifts = 4 * torch.tensor(NIBBLE, device=nib.device)
    word = (n << shifts).sum(-1)
    return torch.where(word >= 2 ** 31, word - 2 ** 32, word).to(torch.int32)


def _unpack(words):
    w = words.to(torch.int64) & 0xFFFFFFFF
    shifts = 4 * torch.tensor(NIBBLE, device=words.device)
    return ((w[..., None] >> shifts) & 0xF).view(words.shape[0], -1)


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    M, K, N = case["M"], case["K"], case["N"]
    x = torch.randn(M, K, device=DEVICE, generator=g).to(torch.float16)
    q = torch.randint(0, 16, (K, N), device=DEVICE, generator=g)
    z = torch.randint(6, 10, (K // G, N), device=DEVICE, generator=g)
    s = (torch.rand(K // G, N, device=DEVICE, generator=g) + 0.5) / (4.7 * K ** 0.5)
    return (x, _pack(q), s.to(torch.float16), _pack(z))


def _weight(qweight, scales, qzeros):
    q = _unpack(qweight)
    z = _unpack(qzeros).repeat_interleave(G, 0)
    return (q - z).to(scales.dtype) * scales.repeat_interleave(G, 0)


def reference(x, qweight, scales, qzeros):
    return x @ _weight(qweight, scales, qzeros)


def vendor(x, qweight, scales, qzeros):
    return torch.mm(x, _weight(qweight, scales, qzeros).to(x.dtype))


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]


def bytes(case):
    M, K, N = case["M"], case["K"], case["N"]
    return 2 * M * K + K * N // 2 + 2 * (K // G) * N + (K // G) * N // 2 + 2 * M * N

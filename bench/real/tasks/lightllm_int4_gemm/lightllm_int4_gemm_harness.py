"""LightLLM's weight-only int4 linear: matmul_dequantize_int4_s2(x, qweight, scales, qzeros,
group_size) with x (tokens, K) fp16, qweight (K/8, N) int32 packing 8 consecutive K entries
(nibble i holds row 8p + i), scales (K/128, N) fp16 and qzeros (K/128, N/8) int32 packing 8
consecutive N entries, as LightLLM's quantize_int4 lays them out. W = (q - z) * s per group;
C = x @ W in fp16."""

import torch

DEVICE = "cuda"
PEAK = "fp16"
VENDOR = "dequantize in torch + torch.mm"
SMALL_CASE = {"M": 5, "K": 1024, "N": 64}
G = 128


def _pack(nibbles, dim):
    """Packs 8 consecutive int4 values along `dim` into one int32 (nibble i = element 8p + i)."""
    n = nibbles.movedim(dim, -1).to(torch.int64)
    n = n.reshape(*n.shape[:-1], n.shape[-1] // 8, 8)
    word = (n << (4 * torch.arange(8, device=n.device))).sum(-1)
    word = torch.where(word >= 2 ** 31, word - 2 ** 32, word).to(torch.int32)
    return word.movedim(-1, dim).contiguous()


def _unpack(words, dim):
    w = words.movedim(dim, -1).to(torch.int64) & 0xFFFFFFFF
    n = (w[..., None] >> (4 * torch.arange(8, device=w.device))) & 0xF
    return n.reshape(*w.shape[:-1], w.shape[-1] * 8).movedim(-1, dim)


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    M, K, N = case["M"], case["K"], case["N"]
    x = torch.randn(M, K, device=DEVICE, generator=g).to(torch.float16)
    q = torch.randint(0, 16, (K, N), device=DEVICE, generator=g)
    z = torch.randint(6, 10, (K // G, N), device=DEVICE, generator=g)
    # (q - z) has a standard deviation of about 4.7: scales near 1 / (4.7 sqrt(K)) keep C ~ N(0, 1).
    s = (torch.rand(K // G, N, device=DEVICE, generator=g) + 0.5) / (4.7 * K ** 0.5)
    return (x, _pack(q, 0), s.to(torch.float16), _pack(z, 1), G)


def _weight(qweight, scales, qzeros, group_size):
    q = _unpack(qweight, 0)
    z = _unpack(qzeros, 1).repeat_interleave(group_size, 0)
    return (q - z).to(scales.dtype) * scales.repeat_interleave(group_size, 0)


def reference(x, qweight, scales, qzeros, group_size):
    return x @ _weight(qweight, scales, qzeros, group_size)


def vendor(x, qweight, scales, qzeros, group_size):
    return torch.mm(x, _weight(qweight, scales, qzeros, group_size).to(x.dtype))


def flops(case):
    return 2 * case["M"] * case["N"] * case["K"]


def bytes(case):
    M, K, N = case["M"], case["K"], case["N"]
    return 2 * M * K + K * N // 2 + 2 * (K // G) * N + (K // G) * N // 2 + 2 * M * N

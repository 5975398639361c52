"""LightLLM's KV-cache write: destindex_copy_kv(K, DestLoc, Out) copies row t of K (tokens,
heads, head_dim) into Out[DestLoc[t]] (slots, heads, head_dim), one program per token."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "Out.index_copy_(0, DestLoc, K)"
SMALL_CASE = {"T": 7, "H": 3, "D": 16, "SLOTS": 20}


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    T, H, D, S = case["T"], case["H"], case["D"], case["SLOTS"]
    k = torch.randn(T, H, D, device=DEVICE, generator=g).to(torch.float16)
    dest = torch.randperm(S, device=DEVICE, generator=g)[:T].to(torch.int32)
    out = torch.randn(S, H, D, device=DEVICE, generator=g).to(torch.float16)
    return (k, dest, out)


def reference(k, dest, out):
    out = out.clone()
    out[dest.long()] = k
    return out


def vendor(k, dest, out):
    out.index_copy_(0, dest.long(), k)


def flops(case):
    return 0


def bytes(case):
    return 2 * 2 * case["T"] * case["H"] * case["D"] + 4 * case["T"]

"""flash-linear-attention's chunk-local cumulative sum: chunk_local_cumsum(g, chunk_size=64)
with g (batch, tokens, heads) or (batch, tokens, heads, channels) fp32 -> the cumulative sum of
g along the tokens restarted at every chunk of 64, fp32. The scalar kernel has one program per
(chunk, batch x head); the vector one is autotuned over channel blocks and warps."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "g.view(chunks).cumsum"
SMALL_CASE = {"B": 2, "T": 200, "H": 3, "D": 0}
CHUNK = 64


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    B, T, H, D = case["B"], case["T"], case["H"], case["D"]
    shape = (B, T, H) if D == 0 else (B, T, H, D)
    # Log-space decays: log(sigmoid(.)) of pre-activations, all negative.
    gates = torch.nn.functional.logsigmoid(torch.randn(shape, device=DEVICE, generator=g) + 2.0)
    return (gates, CHUNK)


def _cumsum(g, chunk):
    B, T = g.shape[:2]
    pad = (-T) % chunk
    x = torch.nn.functional.pad(g.movedim(1, -1), (0, pad)).movedim(-1, 1)
    x = x.reshape(B, (T + pad) // chunk, chunk, *g.shape[2:]).cumsum(2)
    return x.reshape(B, T + pad, *g.shape[2:])[:, :T]


def reference(g, chunk):
    return _cumsum(g, chunk)


def vendor(g, chunk):
    return _cumsum(g, chunk)


def flops(case):
    return case["B"] * case["T"] * case["H"] * max(1, case["D"])


def bytes(case):
    return 2 * 4 * case["B"] * case["T"] * case["H"] * max(1, case["D"])

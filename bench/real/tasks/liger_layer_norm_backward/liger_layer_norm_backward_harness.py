"""The backward of Liger's LayerNorm as a training step runs it: LigerLayerNormFunction.apply(X,
W, B, eps) on (tokens, hidden) bf16 activations, then the gradients of X, W and B for a bf16
output gradient (tritonforge draws it from the seed). The kernel writes one partial row of W's
and B's gradients per SM, which the launcher sums with torch. The reference gradients come
from autograd through `reference` in float64."""

import torch

DEVICE = "cuda"
PEAK = None
VENDOR = "autograd of F.layer_norm"
SMALL_CASE = {"T": 5, "H": 300}
EPS = 1e-5


def make_inputs(case, seed):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    T, H = case["T"], case["H"]
    x = (torch.randn(T, H, device=DEVICE, generator=g) * 2 + 0.5).to(torch.bfloat16)
    w = (torch.rand(H, device=DEVICE, generator=g) + 0.5).to(torch.bfloat16)
    b = (torch.randn(H, device=DEVICE, generator=g) * 0.1).to(torch.bfloat16)
    return (x, w, b, EPS)


def reference(x, w, b, eps):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, eps)


def vendor(x, w, b, eps):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, eps)


def flops(case):
    # per element: the normalized value, two products and sums for dW, dB and the two row
    # reductions, dX's combination
    return 12 * case["T"] * case["H"]


def bytes(case):
    # reads the output gradient and X (bf16), writes dX (bf16); W, B, the statistics and the
    # partial rows are small beside them
    return 2 * 3 * case["T"] * case["H"]

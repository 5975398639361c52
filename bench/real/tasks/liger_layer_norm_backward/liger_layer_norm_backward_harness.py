"""The backward of Liger's LayerNorm as a training step runs it: LigerLayerNormFunction.apply(X,
W, B, eps) on (tokens, hidden) bf16 activations, then the gradients of X, W and B for a bf16
output gradient (tritonforge draws it from the seed). The kernel writes one partial row of W's
and B's gradients per SM, which the launcher sums with torch.

The reference gradients are the exact ones (float64) of the statistics the library keeps: its
forward stores each row's mean and 1/std in the input's dtype (bf16) and its backward uses
those, so x_hat differs from the exact one by up to 2^-9 relative, an error that sums over the
tokens into W's gradient (about 0.5 absolute on values near zero at 16384 tokens). The
reference rounds the statistics the same way and is exact from there on."""

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


def reference_backward(grad_outputs, x, w, b, eps):
    dy = grad_outputs[0] if isinstance(grad_outputs, (tuple, list)) else grad_outputs
    x64, w64, dy64 = x.double(), w.double(), dy.double()
    mean = x64.mean(-1, keepdim=True)
    var = ((x64 - mean) ** 2).mean(-1, keepdim=True)
    rstd = torch.rsqrt(var + eps)
    # as stored by the forward: in the input's dtype (bf16: make_inputs; tritonforge passes
    # float64 copies here)
    mean, rstd = mean.to(torch.bfloat16).double(), rstd.to(torch.bfloat16).double()
    x_hat = (x64 - mean) * rstd
    wdy = w64 * dy64
    n = x.shape[-1]
    c1 = (x_hat * wdy).sum(-1, keepdim=True) / n
    c2 = wdy.sum(-1, keepdim=True) / n
    dx = (wdy - (x_hat * c1 + c2)) * rstd
    return dx, (dy64 * x_hat).sum(0), dy64.sum(0)


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

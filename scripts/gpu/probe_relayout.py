"""Probe: what an operand relayout (a contiguous copy of a read-only tensor in another memory
order, its strides passed as before) buys attorch's conv2d. Needs bench/real/src laid out.
Prints one line per case and layout: median ms (triton.testing.do_bench, L2 flushed), the
copies included in the timed call."""
import itertools
import math
import sys

import torch
import triton

sys.path.insert(0, "bench/real/src/attorch")
from attorch.conv_layer import Conv2dAutoGrad  # noqa: E402
from attorch.conv_kernels import conv2d_forward_kernel  # noqa: E402


def relaid(t, inner_first_order):
    """t's values, same logical shape, memory order `inner_first_order` (outermost first)."""
    inv = [inner_first_order.index(i) for i in range(t.dim())]
    return t.permute(*inner_first_order).contiguous().permute(*inv)


def main():
    for (N, C, H, W, K) in [(8, 320, 64, 64, 320), (8, 640, 32, 32, 640)]:
        x = torch.randn(N, C, H, W, device="cuda").half()
        w = (torch.randn(K, C, 3, 3, device="cuda") / math.sqrt(9 * C)).half()
        ref = torch.nn.functional.conv2d(x, w, None, padding=1)
        cudnn = triton.testing.do_bench(lambda: torch.nn.functional.conv2d(x, w, None, padding=1))
        print(f"case N={N} C={C} H={H} W={W} K={K} cudnn {cudnn:.3f} ms", flush=True)
        orders = [None] + [list(p) for p in itertools.permutations(range(4)) if p != (0, 1, 2, 3)]
        for xo in [None, [0, 2, 3, 1]]:
            for wo in orders:
                if wo is not None and wo[-1] == 3 and wo != [1, 2, 0, 3]:
                    continue

                def call():
                    xx = relaid(x, xo) if xo else x
                    ww = relaid(w, wo) if wo else w
                    return Conv2dAutoGrad.apply(xx, ww, None, 1, 1, 1, 1, 1)

                conv2d_forward_kernel.cache.clear()  # autotune again for this layout
                out = call()
                err = (out.float() - ref.float()).abs().max().item()
                ms = triton.testing.do_bench(call)
                print(f"  x {xo} w {wo}: {ms:.3f} ms  maxerr {err:.2e}", flush=True)


main()

"""matmul_int4w under @triton.autotune: the kernel as written, wrapped with the suite's
standard tile list (tiles(2): x and the dequantized weight are fp16), keyed on the shape.
The kernel finds each k's packed row, shift and group from k itself, so any BLOCK_K is
correct; the list's K steps (64 and 32) are multiples of 8 that divide the group size 128
all the same. GROUP_SIZE comes from the shapes, as in the kernel as written."""

import torch
import triton


def make_launcher(mod, autotune, configs):
    kernel = autotune(configs=configs.tiles(2), key=["M", "N", "K"])(mod.matmul_int4w_kernel)

    def matmul_int4w(x, qweight, scales):
        M, K = x.shape
        N = qweight.shape[1]
        y = torch.empty((M, N), device=x.device, dtype=torch.float16)
        grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]), triton.cdiv(N, META["BLOCK_N"]))
        kernel[grid](x, qweight, scales, y, M, N, K,
                     x.stride(0), x.stride(1), qweight.stride(0), qweight.stride(1),
                     scales.stride(0), scales.stride(1), y.stride(0), y.stride(1),
                     GROUP_SIZE=K // scales.shape[0])
        return y

    return matmul_int4w

"""SwiGLU activation, silu(gate) * up, element-wise, written the straightforward way: the
tensors seen as flat arrays, one program per block of 256 elements, fp32 arithmetic.
gate, up and the output are (tokens, ffn) bf16, contiguous."""

import torch
import triton
import triton.language as tl

BLOCK_SIZE = 512


@triton.jit
def swiglu_kernel(gate_ptr, up_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    g = tl.load(gate_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(up_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    silu = g / (1.0 + tl.exp(-g))
    tl.store(out_ptr + offs, (silu * u).to(tl.bfloat16), mask=mask)


def swiglu(gate, up):
    out = torch.empty_like(gate)
    n = gate.numel()
    grid = (triton.cdiv(n, BLOCK_SIZE),)
    swiglu_kernel[grid](gate, up, out, n, BLOCK=BLOCK_SIZE, num_warps=1)
    return out

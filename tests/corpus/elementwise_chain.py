"""A chain of elementwise operations in fp32 on fp16 data: bias, GELU (sigmoid form), scale."""
import triton
import triton.language as tl


@triton.jit
def bias_gelu_kernel(x_ptr, b_ptr, out_ptr, n_rows, n_cols, stride_row, scale,
                     BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    col_block = tl.program_id(1)
    cols = col_block * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_row + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
    h = x + b
    g = h * tl.sigmoid(1.702 * h)
    y = g * scale
    tl.store(out_ptr + row * stride_row + cols, y.to(tl.float16), mask=mask)


def bias_gelu(x, b, scale=1.0):
    rows, cols = x.shape
    out = x.new_empty(x.shape)
    bias_gelu_kernel[(rows, triton.cdiv(cols, 512))](x, b, out, rows, cols, x.stride(0), scale, BLOCK_N=512)
    return out

"""Online softmax: two passes over the row in blocks (running max and sum, then normalize)."""
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_online_kernel(out_ptr, in_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = in_ptr + row * stride
    m = tl.full((BLOCK,), float("-inf"), tl.float32)
    s = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(base + cols, mask=cols < n_cols, other=float("-inf"))
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
        m = m_new
    row_max = tl.max(m, axis=0)
    row_sum = tl.sum(s * tl.exp(m - row_max), axis=0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(base + cols, mask=cols < n_cols, other=float("-inf"))
        tl.store(out_ptr + row * stride + cols, tl.exp(x - row_max) / row_sum, mask=cols < n_cols)


def softmax_online(x):
    rows, cols = x.shape
    out = torch.empty_like(x)
    softmax_online_kernel[(rows,)](out, x, cols, x.stride(0), BLOCK=1024)
    return out

import torch
import triton
import triton.language as tl


@triton.jit
def conv_nchw_kernel(x_ptr, w_ptr, y_ptr, N, C, H, W, K, P, Q,
                     sxn, sxc, sxh, sxw, swk, swc, swr, sws, syn, syk, syp, syq,
                     R: tl.constexpr, S: tl.constexpr, pad: tl.constexpr,
                     BLOCK_NPQ: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_npq = tl.program_id(0)
    pid_k = tl.program_id(1)
    npq = pid_npq * BLOCK_NPQ + tl.arange(0, BLOCK_NPQ)
    n = npq // (P * Q)
    p = (npq // Q) % P
    q = npq % Q
    ks = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_NPQ, BLOCK_K), dtype=tl.float32)
    for r in range(R):
        for s in range(S):
            h = p - pad + r
            w = q - pad + s
            row_ok = (npq < N * P * Q) & (h >= 0) & (h < H) & (w >= 0) & (w < W)
            for c0 in range(0, C, BLOCK_C):
                cs = c0 + tl.arange(0, BLOCK_C)
                x_ptrs = x_ptr + (n * sxn + h * sxh + w * sxw)[:, None] + (cs * sxc)[None, :]
                x_tile = tl.load(x_ptrs, mask=row_ok[:, None] & (cs < C)[None, :], other=0.0)
                w_ptrs = w_ptr + (cs * swc)[:, None] + (ks * swk)[None, :] + r * swr + s * sws
                w_tile = tl.load(w_ptrs, mask=(cs < C)[:, None] & (ks < K)[None, :], other=0.0)
                acc += tl.dot(x_tile, w_tile)
    y_ptrs = y_ptr + (n * syn + p * syp + q * syq)[:, None] + (ks * syk)[None, :]
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=(npq < N * P * Q)[:, None] & (ks < K)[None, :])


def conv2d_nchw(x, w, pad=1):
    N, C, H, W = x.shape
    K, _, R, S = w.shape
    P, Q = H + 2 * pad - R + 1, W + 2 * pad - S + 1
    y = torch.empty((N, K, P, Q), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(N * P * Q, 64), triton.cdiv(K, 32))
    conv_nchw_kernel[grid](x, w, y, N, C, H, W, K, P, Q,
                           *x.stride(), *w.stride(), *y.stride(),
                           R, S, pad, BLOCK_NPQ=64, BLOCK_C=32, BLOCK_K=32)
    return y

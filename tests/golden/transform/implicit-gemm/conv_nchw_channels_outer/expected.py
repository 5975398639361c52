import torch
import triton
import triton.language as tl


@triton.jit
def conv2d_nchw_kernel(x_ptr, w_ptr, y_ptr, N, C, H, W, K, P, Q,
                       sxn, sxc, sxh, sxw, swk, swc, swr, sws,
                       R: tl.constexpr, S: tl.constexpr, PAD: tl.constexpr,
                       BLOCK_P: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_C: tl.constexpr = 32):
    pid_p = tl.program_id(0)
    pid_k = tl.program_id(1)
    nb = tl.program_id(2)
    offs_p = pid_p * BLOCK_P + tl.arange(0, BLOCK_P)    # output pixels of image nb
    offs_k = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)    # output channels
    oh = offs_p // Q
    ow = offs_p % Q
    p_ok = offs_p < P * Q
    k_ok = offs_k < K
    acc = tl.zeros((BLOCK_P, BLOCK_K), dtype=tl.float32)
    for c in range(0, C, BLOCK_C):
        c_offs = c + tl.arange(0, BLOCK_C)
        for r in range(R):
            ih = oh - PAD + r
            for s in range(S):
                iw = ow - PAD + s
                ok = p_ok & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
                x_ptrs = (x_ptr + nb * sxn + ih * sxh + iw * sxw)[:, None] + c_offs[None, :] * sxc
                xv = tl.load(x_ptrs, mask=ok[:, None] & (c_offs[None, :] < C), other=0.0)
                wv = tl.load((w_ptr + offs_k * swk + r * swr + s * sws)[None, :] + c_offs[:, None] * swc,
                             mask=k_ok[None, :] & (c_offs[:, None] < C), other=0.0)
                acc += tl.dot(xv, wv, input_precision="ieee")
    y_ptrs = y_ptr + nb * K * P * Q + offs_k[None, :] * (P * Q) + offs_p[:, None]
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=p_ok[:, None] & k_ok[None, :])


def conv2d_nchw(x, w):
    N, C, H, W = x.shape
    K, _, R, S = w.shape
    P, Q = H, W
    y = torch.empty((N, K, P, Q), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(P * Q, 32), triton.cdiv(K, 32), N)
    conv2d_nchw_kernel[grid](x, w, y, N, C, H, W, K, P, Q, *x.stride(), *w.stride(),
                             R=R, S=S, PAD=R // 2, BLOCK_P=32, BLOCK_K=32)
    return y

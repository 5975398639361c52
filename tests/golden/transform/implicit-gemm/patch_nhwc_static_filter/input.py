import torch
import triton
import triton.language as tl


@triton.jit
def patchify_kernel(x_ptr, w_ptr, y_ptr, N, H, W, C, K, GH, GW, R: tl.constexpr, S: tl.constexpr,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # NHWC convolution whose stride is its filter size (R x S, unrolled), no padding: y is (N, GH, GW, K).
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    n = offs_m // (GH * GW)
    p = (offs_m % (GH * GW)) // GW
    q = offs_m % GW
    m_ok = offs_m < N * GH * GW
    n_ok = offs_n < K
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for r in tl.static_range(R):
        for s in tl.static_range(S):
            for c in range(C):
                x_off = ((n * H + p * R + r) * W + q * S + s) * C + c
                a = tl.load(x_ptr + x_off, mask=m_ok, other=0.0)
                b = tl.load(w_ptr + ((offs_n * R + r) * S + s) * C + c, mask=n_ok, other=0.0)
                acc = acc + b[None, :].to(tl.float32) * a[:, None].to(tl.float32)
    tl.store(y_ptr + offs_m[:, None] * K + offs_n[None, :], acc.to(tl.float16),
             mask=m_ok[:, None] & n_ok[None, :])


def patchify(x, w):
    N, H, W, C = x.shape
    K, R, S, _ = w.shape
    GH, GW = H // R, W // S
    y = torch.empty((N, GH, GW, K), device=x.device, dtype=torch.float16)
    grid = (triton.cdiv(N * GH * GW, 32), triton.cdiv(K, 32))
    patchify_kernel[grid](x, w, y, N, H, W, C, K, GH, GW, R, S, BLOCK_M=32, BLOCK_N=32)
    return y

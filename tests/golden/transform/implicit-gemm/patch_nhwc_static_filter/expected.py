import torch
import triton
import triton.language as tl


@triton.jit
def patchify_kernel(x_ptr, w_ptr, y_ptr, N, H, W, C, K, GH, GW, R: tl.constexpr, S: tl.constexpr,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_R_S_C: tl.constexpr = 32):
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
    r_s_c_steps = R * tl.maximum(S, 0) * tl.maximum(C, 0)
    for r_s_c in range(0, r_s_c_steps, BLOCK_R_S_C):
        r_s_c_offs = r_s_c + tl.arange(0, BLOCK_R_S_C)
        r = r_s_c_offs // (S * C)
        s = (r_s_c_offs // C) % S
        c = r_s_c_offs % C
        a = tl.load((x_ptr + ((n * H + p * R) * W + q * S) * C)[:, None] + ((r * W + s) * C + c)[None, :],
                    mask=m_ok[:, None] & (r_s_c_offs[None, :] < r_s_c_steps), other=0.0)
        b = tl.load((w_ptr + ((offs_n * R) * S) * C)[None, :] + ((r * S + s) * C + c)[:, None],
                    mask=n_ok[None, :] & (r_s_c_offs[:, None] < r_s_c_steps), other=0.0)
        acc = acc + tl.dot(a, b, input_precision="ieee")
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

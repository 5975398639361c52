import triton
import triton.language as tl


@triton.jit
def k(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    # a_off shares its line with another binding: it cannot be removed alone (not read through)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(K):
        t = 1; a_off = offs_m * sam + k * sak
        a = tl.load(a_ptr + a_off, mask=offs_m < M, other=0.0)
        b = tl.load(b_ptr + k * sbk + offs_n * sbn, mask=offs_n < N, other=0.0)
        acc += a[:, None] * b[None, :]
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc)

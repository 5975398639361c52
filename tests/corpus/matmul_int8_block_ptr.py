"""Quantized linear layer: int8 activations x int8 weights -> int32, written the way
production int8 GEMMs are: block pointers advanced through the K loop, a grouped program
order for L2 reuse, an autotune list plus heuristics, per-row activation scales and
per-column weight scales applied in the epilogue, an optional bias, and a split-K variant
that accumulates partial tiles with atomics. Also the dynamic per-row quantizer that feeds
it, and the Python launcher.

Written for the analyze corpus: it is the size and shape of a real file (about 300 lines),
not a minimal example."""
import torch
import triton
import triton.language as tl


def _int8_configs():
    # The tile shapes worth trying on Hopper for 8-bit operands: K tiles of 64 or 128 bytes
    # so that each TMA / cp.async row is a full 128-byte line.
    configs = []
    for block_m, block_n, block_k, warps, stages in [
        (128, 256, 128, 8, 3),
        (256, 128, 128, 8, 3),
        (128, 128, 128, 4, 4),
        (128, 128, 64, 4, 5),
        (64, 128, 128, 4, 4),
        (128, 64, 128, 4, 4),
        (64, 64, 128, 4, 5),
        (64, 256, 64, 4, 4),
    ]:
        configs.append(
            triton.Config(
                {"BLOCK_M": block_m, "BLOCK_N": block_n, "BLOCK_K": block_k, "GROUP_M": 8},
                num_warps=warps,
                num_stages=stages,
            )
        )
    return configs


@triton.jit
def _grouped_tile(pid, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    # Programs walk the output in groups of GROUP_M tile rows so that the tiles of B a group
    # reads stay in L2 while the group's rows of A are consumed.
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit
def _dequant_epilogue(acc, a_scale_ptr, b_scale_ptr, bias_ptr, offs_m, offs_n, M, N,
                      HAS_BIAS: tl.constexpr):
    # int32 accumulator -> fp32 with per-row (activation) and per-column (weight) scales.
    a_scale = tl.load(a_scale_ptr + offs_m, mask=offs_m < M, other=0.0)
    b_scale = tl.load(b_scale_ptr + offs_n, mask=offs_n < N, other=0.0)
    out = acc.to(tl.float32) * a_scale[:, None] * b_scale[None, :]
    if HAS_BIAS:
        bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0)
        out = out + bias[None, :].to(tl.float32)
    return out


@triton.jit
def quantize_rows_kernel(x_ptr, q_ptr, scale_ptr, M, K, stride_xm, stride_xk, stride_qm, stride_qk,
                         BLOCK_K: tl.constexpr):
    # Dynamic symmetric per-row quantization: scale = max|x| / 127 over the row.
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_xm
    q_row = q_ptr + row * stride_qm
    amax = tl.zeros((BLOCK_K,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        offs = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(x_row + offs * stride_xk, mask=offs < K, other=0.0).to(tl.float32)
        amax = tl.maximum(amax, tl.abs(x))
    row_max = tl.max(amax, axis=0)
    scale = tl.maximum(row_max, 1e-8) / 127.0
    inv_scale = 1.0 / scale
    for k0 in range(0, K, BLOCK_K):
        offs = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(x_row + offs * stride_xk, mask=offs < K, other=0.0).to(tl.float32)
        q = tl.extra.cuda.libdevice.rint(x * inv_scale)
        q = tl.minimum(tl.maximum(q, -127.0), 127.0)
        tl.store(q_row + offs * stride_qk, q.to(tl.int8), mask=offs < K)
    tl.store(scale_ptr + row, scale)


@triton.autotune(configs=_int8_configs(), key=["M", "N", "K"])
@triton.heuristics({"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0})
@triton.jit
def int8_matmul_kernel(
    a_ptr, b_ptr, c_ptr, a_scale_ptr, b_scale_ptr, bias_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    HAS_BIAS: tl.constexpr,
    EVEN_K: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    # The last group can hold fewer rows of tiles.
    GROUP_M = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % GROUP_M)
    pid_n = (pid % num_pid_in_group) // GROUP_M

    a_block = tl.make_block_ptr(
        base=a_ptr,
        shape=(M, K),
        strides=(stride_am, stride_ak),
        offsets=(pid_m * BLOCK_M, 0),
        block_shape=(BLOCK_M, BLOCK_K),
        order=(1, 0),
    )
    b_block = tl.make_block_ptr(
        base=b_ptr,
        shape=(K, N),
        strides=(stride_bk, stride_bn),
        offsets=(0, pid_n * BLOCK_N),
        block_shape=(BLOCK_K, BLOCK_N),
        order=(0, 1),
    )

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        if EVEN_K:
            a = tl.load(a_block, boundary_check=(0,))
            b = tl.load(b_block, boundary_check=(1,))
        else:
            a = tl.load(a_block, boundary_check=(0, 1), padding_option="zero")
            b = tl.load(b_block, boundary_check=(0, 1), padding_option="zero")
        acc += tl.dot(a, b, out_dtype=tl.int32)
        a_block = tl.advance(a_block, (0, BLOCK_K))
        b_block = tl.advance(b_block, (BLOCK_K, 0))

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    out = _dequant_epilogue(acc, a_scale_ptr, b_scale_ptr, bias_ptr, offs_m, offs_n, M, N, HAS_BIAS)

    c_block = tl.make_block_ptr(
        base=c_ptr,
        shape=(M, N),
        strides=(stride_cm, stride_cn),
        offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N),
        block_shape=(BLOCK_M, BLOCK_N),
        order=(1, 0),
    )
    tl.store(c_block, out.to(c_ptr.dtype.element_ty), boundary_check=(0, 1))


@triton.jit
def int8_matmul_splitk_kernel(
    a_ptr, b_ptr, c_ptr, a_scale_ptr, b_scale_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    SPLIT_K: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    # Skinny problems (few rows of activations, long K): split K over grid axis 1 and add the
    # dequantized partial tiles into an fp32 output that the launcher zeroed.
    pid = tl.program_id(axis=0)
    pid_k = tl.program_id(axis=1)
    pid_m, pid_n = _grouped_tile(pid, M, N, BLOCK_M, BLOCK_N, GROUP_M)

    k_per_split = tl.cdiv(K, SPLIT_K * BLOCK_K) * BLOCK_K
    k_start = pid_k * k_per_split
    k_stop = min(k_start + k_per_split, K)

    a_block = tl.make_block_ptr(
        base=a_ptr,
        shape=(M, K),
        strides=(stride_am, stride_ak),
        offsets=(pid_m * BLOCK_M, k_start),
        block_shape=(BLOCK_M, BLOCK_K),
        order=(1, 0),
    )
    b_block = tl.make_block_ptr(
        base=b_ptr,
        shape=(K, N),
        strides=(stride_bk, stride_bn),
        offsets=(k_start, pid_n * BLOCK_N),
        block_shape=(BLOCK_K, BLOCK_N),
        order=(0, 1),
    )
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for k in range(k_start, k_stop, BLOCK_K):
        a = tl.load(a_block, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_block, boundary_check=(0, 1), padding_option="zero")
        acc += tl.dot(a, b, out_dtype=tl.int32)
        a_block = tl.advance(a_block, (0, BLOCK_K))
        b_block = tl.advance(b_block, (BLOCK_K, 0))

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    a_scale = tl.load(a_scale_ptr + offs_m, mask=offs_m < M, other=0.0)
    b_scale = tl.load(b_scale_ptr + offs_n, mask=offs_n < N, other=0.0)
    part = acc.to(tl.float32) * a_scale[:, None] * b_scale[None, :]
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.atomic_add(c_ptrs, part, mask=c_mask, sem="relaxed")


def quantize_rows(x):
    """Per-row symmetric int8 quantization of a 2-D activation tensor."""
    assert x.dim() == 2, "expected a 2-D activation"
    M, K = x.shape
    q = torch.empty((M, K), device=x.device, dtype=torch.int8)
    scale = torch.empty((M,), device=x.device, dtype=torch.float32)
    block_k = min(triton.next_power_of_2(K), 4096)
    quantize_rows_kernel[(M,)](x, q, scale, M, K, x.stride(0), x.stride(1), q.stride(0), q.stride(1),
                               BLOCK_K=block_k, num_warps=8)
    return q, scale


def quantize_weight(w):
    """Per-output-channel symmetric quantization of a (K, N) weight, done once on the host."""
    amax = w.abs().amax(dim=0).clamp(min=1e-8).float()
    scale = amax / 127.0
    q = torch.round(w.float() / scale[None, :]).clamp(-127, 127).to(torch.int8)
    return q, scale


def _use_split_k(M, N, K):
    # Few output tiles and a long K leave most SMs idle without a split.
    tiles = triton.cdiv(M, 64) * triton.cdiv(N, 128)
    return M <= 64 and K >= 4096 and tiles < 66


def int8_linear(x, w_q, w_scale, bias=None, out_dtype=torch.float16):
    """y = (quantize(x) @ w_q) * scales + bias, with x (M, K) in fp16 / bf16 and w_q (K, N) int8."""
    assert x.shape[1] == w_q.shape[0], "incompatible dimensions"
    assert w_q.dtype == torch.int8, "the weight must be quantized"
    a_q, a_scale = quantize_rows(x)
    M, K = a_q.shape
    N = w_q.shape[1]
    if _use_split_k(M, N, K):
        split_k = 4
        c = torch.zeros((M, N), device=x.device, dtype=torch.float32)
        grid = (triton.cdiv(M, 64) * triton.cdiv(N, 128), split_k)
        int8_matmul_splitk_kernel[grid](
            a_q, w_q, c, a_scale, w_scale,
            M, N, K,
            a_q.stride(0), a_q.stride(1),
            w_q.stride(0), w_q.stride(1),
            c.stride(0), c.stride(1),
            SPLIT_K=split_k, BLOCK_M=64, BLOCK_N=128, BLOCK_K=128, GROUP_M=8,
            num_warps=4, num_stages=4,
        )
        if bias is not None:
            c += bias.float()[None, :]
        return c.to(out_dtype)
    c = torch.empty((M, N), device=x.device, dtype=out_dtype)
    grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]) * triton.cdiv(N, META["BLOCK_N"]),)
    int8_matmul_kernel[grid](
        a_q, w_q, c, a_scale, w_scale, bias if bias is not None else a_scale,
        M, N, K,
        a_q.stride(0), a_q.stride(1),
        w_q.stride(0), w_q.stride(1),
        c.stride(0), c.stride(1),
        HAS_BIAS=bias is not None,
    )
    return c


def reference(x, w_q, w_scale, bias=None, out_dtype=torch.float16):
    """The same computation in PyTorch, for tests."""
    a_q, a_scale = quantize_rows(x)
    acc = a_q.to(torch.int32) @ w_q.to(torch.int32)
    y = acc.float() * a_scale[:, None] * w_scale[None, :]
    if bias is not None:
        y = y + bias.float()[None, :]
    return y.to(out_dtype)


if __name__ == "__main__":
    torch.manual_seed(0)
    for m, n, k in [(16, 4096, 4096), (512, 4096, 4096), (4096, 4096, 4096), (1000, 3000, 1024)]:
        x = torch.randn((m, k), device="cuda", dtype=torch.float16)
        w = torch.randn((k, n), device="cuda", dtype=torch.float16)
        w_q, w_scale = quantize_weight(w)
        b = torch.randn((n,), device="cuda", dtype=torch.float16)
        y = int8_linear(x, w_q, w_scale, b)
        r = reference(x, w_q, w_scale, b)
        err = (y.float() - r.float()).abs().max().item()
        print(f"M={m} N={n} K={k}: max abs error {err:.3e}")

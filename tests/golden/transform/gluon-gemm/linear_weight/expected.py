"""y = x @ w^T for a linear layer's weight w stored (N, K): the kernel reads w's (n, k) element
as the (k, n) element of its B tile, both strides passed, so w may come either way."""

import torch
import triton
import triton.language as tl


@triton.jit
def linear_kernel(x_ptr, w_ptr, y_ptr, M, N, K,
                  stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(x_ptr + rm[:, None] * stride_xm + rk[None, :] * stride_xk,
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        w = tl.load(w_ptr + rn[None, :] * stride_wn + rk[:, None] * stride_wk,
                    mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(x, w)
    tl.store(y_ptr + rm[:, None] * stride_ym + rn[None, :] * stride_yn, acc.to(tl.float16),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


# gluon-gemm: linear_kernel lowered to Gluon for Hopper (persistent programs, a TMA loader warp, an mbarrier ring of stages,
# asynchronous wgmma); _linear_kernel_gluon_launch routes each launch to it or to the kernel as written.
try:
    from triton.experimental import gluon as _gluon
    from triton.experimental.gluon import language as _gl
    from triton.experimental.gluon.language.nvidia.hopper import mbarrier as _mbarrier, tma as _tma
    from triton.experimental.gluon.language.nvidia.hopper import warpgroup_mma as _wgmma
    from triton.experimental.gluon.language.nvidia.hopper import warpgroup_mma_wait as _wgmma_wait
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor as _TensorDescriptor
except ImportError:  # a Triton without Gluon's Hopper support: the kernel as written runs
    _gluon = None

if _gluon is not None:

    @_gluon.jit
    def _linear_kernel_gluon_tile(tile, GRID_0, GRID_1, GRID_2, GROUP: _gl.constexpr):
        # programs along axis 0 taken GROUP at a time (tiles that share operands run together)
        per_plane = GRID_0 * GRID_1
        t = tile % per_plane
        width = GROUP * GRID_1
        first = (t // width) * GROUP
        rows = _gl.minimum(GRID_0 - first, GROUP)
        return first + (t % width) % rows, (t % width) // rows, tile // per_plane

    @_gluon.jit
    def _linear_kernel_gluon_load(a_desc, b_desc, a_s, b_s, ready, empty, GRID_0, GRID_1, GRID_2,
                                  GROUP: _gl.constexpr, B_KMAJOR: _gl.constexpr, x_ptr, w_ptr,
                                  y_ptr, M, N, K, stride_xm, stride_xk, stride_wn, stride_wk,
                                  stride_ym, stride_yn, BLOCK_M: tl.constexpr,
                                  BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
        STAGES: _gl.constexpr = a_s.type.shape[0]
        NBYTES: _gl.constexpr = a_desc.block_type.nbytes + b_desc.block_type.nbytes
        it = 0
        for tile in range(_gl.program_id(0), GRID_0 * GRID_1 * GRID_2, _gl.num_programs(0)):
            pid_0, pid_1, pid_2 = _linear_kernel_gluon_tile(tile, GRID_0, GRID_1, GRID_2, GROUP)
            pid_m = pid_0
            pid_n = pid_1
            for k0 in range(0, K, BLOCK_K):
                s = it % STAGES
                _mbarrier.wait(empty.index(s), ((it // STAGES) & 1) ^ 1)
                _mbarrier.expect(ready.index(s), NBYTES)
                _tma.async_copy_global_to_shared(a_desc, [pid_m * BLOCK_M, k0], ready.index(s), a_s.index(s))
                if B_KMAJOR:
                    _tma.async_copy_global_to_shared(b_desc, [pid_n * BLOCK_N, k0], ready.index(s), b_s.index(s))
                else:
                    _tma.async_copy_global_to_shared(b_desc, [k0, pid_n * BLOCK_N], ready.index(s), b_s.index(s))
                it += 1

    @_gluon.jit
    def _linear_kernel_gluon_mma(a_s, b_s, ready, empty, GRID_0, GRID_1, GRID_2,
                                 GROUP: _gl.constexpr, B_KMAJOR: _gl.constexpr, x_ptr, w_ptr, y_ptr,
                                 M, N, K, stride_xm, stride_xk, stride_wn, stride_wk, stride_ym,
                                 stride_yn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                                 BLOCK_K: tl.constexpr):
        STAGES: _gl.constexpr = a_s.type.shape[0]
        WARPS: _gl.constexpr = _gl.num_warps()
        ACC: _gl.constexpr = _gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[WARPS, 1],
                                                     instr_shape=[16, BLOCK_N, 256 // a_s.dtype.primitive_bitwidth])
        EPILOGUE: _gl.constexpr = _gl.BlockedLayout([1, 8], [4, 8], [WARPS, 1], [1, 0])
        it = 0
        for tile in range(_gl.program_id(0), GRID_0 * GRID_1 * GRID_2, _gl.num_programs(0)):
            pid_0, pid_1, pid_2 = _linear_kernel_gluon_tile(tile, GRID_0, GRID_1, GRID_2, GROUP)
            pid_m = pid_0
            pid_n = pid_1
            rm = pid_m * BLOCK_M + _gl.arange(0, BLOCK_M)
            rn = pid_n * BLOCK_N + _gl.arange(0, BLOCK_N)
            acc = _gl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32, layout=ACC)
            kt = 0
            for k0 in range(0, K, BLOCK_K):
                s = it % STAGES
                _mbarrier.wait(ready.index(s), (it // STAGES) & 1)
                if B_KMAJOR:
                    acc = _wgmma(a_s.index(s), b_s.index(s).permute((1, 0)), acc, is_async=True)
                else:
                    acc = _wgmma(a_s.index(s), b_s.index(s), acc, is_async=True)
                acc, _, _ = _wgmma_wait(num_outstanding=1, deps=(acc, a_s.index(s), b_s.index(s)))
                # the stage the previous MMA read is free
                _mbarrier.arrive(empty.index((it + STAGES - 1) % STAGES), count=1, pred=kt > 0)
                it += 1
                kt += 1
            acc = _wgmma_wait(num_outstanding=0, deps=(acc,))
            _mbarrier.arrive(empty.index((it + STAGES - 1) % STAGES), count=1, pred=kt > 0)
            acc = _gl.convert_layout(acc, EPILOGUE)
            tl.store(y_ptr + rm[:, None] * stride_ym + rn[None, :] * stride_yn, acc.to(tl.float16),
                     mask=(rm[:, None] < M) & (rn[None, :] < N))

    @_gluon.jit
    def _linear_kernel_gluon(a_desc, b_desc, STAGES: _gl.constexpr, GRID_0, GRID_1, GRID_2,
                             GROUP: _gl.constexpr, B_KMAJOR: _gl.constexpr, x_ptr, w_ptr, y_ptr, M,
                             N, K, stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
        a_s = _gl.allocate_shared_memory(a_desc.dtype, [STAGES, a_desc.block_type.shape[0], a_desc.block_type.shape[1]],
                                          a_desc.layout)
        b_s = _gl.allocate_shared_memory(b_desc.dtype, [STAGES, b_desc.block_type.shape[0], b_desc.block_type.shape[1]],
                                          b_desc.layout)
        ready = _gl.allocate_shared_memory(_gl.int64, [STAGES, 1], _mbarrier.MBarrierLayout())
        empty = _gl.allocate_shared_memory(_gl.int64, [STAGES, 1], _mbarrier.MBarrierLayout())
        for i in _gl.static_range(STAGES):
            _mbarrier.init(ready.index(i), count=1)
            _mbarrier.init(empty.index(i), count=1)
        _gl.warp_specialize([
            (_linear_kernel_gluon_mma, (a_s, b_s, ready, empty, GRID_0, GRID_1, GRID_2, GROUP,
                                        B_KMAJOR, x_ptr, w_ptr, y_ptr, M, N, K, stride_xm,
                                        stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
                                        BLOCK_M, BLOCK_N, BLOCK_K)),
            (_linear_kernel_gluon_load, (a_desc, b_desc, a_s, b_s, ready, empty, GRID_0, GRID_1,
                                         GRID_2, GROUP, B_KMAJOR, x_ptr, w_ptr, y_ptr, M, N, K,
                                         stride_xm, stride_xk, stride_wn, stride_wk, stride_ym,
                                         stride_yn, BLOCK_M, BLOCK_N, BLOCK_K)),
        ], [1], [24])


def _linear_kernel_gluon_types():
    return {
        getattr(torch, "float16", None): _gl.float16,
    } if _gluon is not None else {}


_linear_kernel_GLUON_SMS = {}


def _linear_kernel_gluon_config(bm, bn, bk, es, stages=0, warps=4):
    """Stages of the operand ring (0: as many as fit 160 KiB, 2 to 6) and warps of the MMA partition for these tiles
    (es: bytes per element), or None when wgmma and TMA do not take them (the kernel as written runs)."""
    if not stages:
        stages = max(2, min(6, (160 * 1024) // max(1, (bm + bn) * bk * es)))
    if not warps:
        warps = 8 if bm * bn >= 128 * 256 else 4
    if bm % (16 * warps) or bn % 16 or bn > 256 or bm > 256 or (bk * es) % 32 or bk > 256:
        return None
    return stages, warps


def _linear_kernel_gluon_launch(grid, x_ptr, w_ptr, y_ptr, M, N, K, stride_xm, stride_xk, stride_wn,
                                stride_wk, stride_ym, stride_yn, BLOCK_M: tl.constexpr,
                                BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, **options):
    """Launches the Gluon lowering of linear_kernel and returns the launched kernel, or says False when this call does not fit it
    (no Gluon, not a Hopper GPU, operands TMA or wgmma cannot take): the caller then launches the kernel as written."""
    a, b = x_ptr, w_ptr
    types = _linear_kernel_gluon_types()
    if (not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor) or not a.is_cuda or a.dtype != b.dtype
            or types.get(a.dtype) is None or torch.cuda.get_device_capability(a.device)[0] != 9):
        return False
    es = a.element_size()
    if stride_xk != 1 or (stride_xm * es) % 16 or a.data_ptr() % 16 or b.data_ptr() % 16:
        return False
    if stride_wk == 1 and (stride_wn * es) % 16 == 0:
        b_kmajor = True
    elif es == 2 and stride_wn == 1 and (stride_wk * es) % 16 == 0:
        b_kmajor = False
    else:
        return False
    bm, bn, bk = BLOCK_M, BLOCK_N, BLOCK_K
    config = _linear_kernel_gluon_config(bm, bn, bk, es)
    if config is None:
        return False
    stages, warps = config
    if callable(grid):
        grid = grid(dict(x_ptr=x_ptr, w_ptr=w_ptr, y_ptr=y_ptr, M=M, N=N, K=K, stride_xm=stride_xm,
                         stride_xk=stride_xk, stride_wn=stride_wn, stride_wk=stride_wk,
                         stride_ym=stride_ym, stride_yn=stride_yn, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                         BLOCK_K=BLOCK_K, **options))
    grid = tuple(grid) + (1,) * (3 - len(grid))
    tiles = grid[0] * grid[1] * grid[2]
    if tiles <= 0:
        return False
    dt = types[a.dtype]
    a_desc = _TensorDescriptor(a, [M, K], [stride_xm, 1], [bm, bk],
                               _gl.NVMMASharedLayout.get_default_for([bm, bk], dt))
    if b_kmajor:
        b_desc = _TensorDescriptor(b, [N, K], [stride_wn, 1], [bn, bk],
                                   _gl.NVMMASharedLayout.get_default_for([bn, bk], dt))
    else:
        b_desc = _TensorDescriptor(b, [K, N], [stride_wk, 1], [bk, bn],
                                   _gl.NVMMASharedLayout.get_default_for([bk, bn], dt))
    sms = _linear_kernel_GLUON_SMS.get(a.device.index)
    if sms is None:
        sms = _linear_kernel_GLUON_SMS[a.device.index] = torch.cuda.get_device_properties(a.device).multi_processor_count
    return _linear_kernel_gluon[(min(sms, tiles),)](a_desc, b_desc, stages, grid[0], grid[1],
                                                    grid[2], 4, b_kmajor, x_ptr, w_ptr, y_ptr, M, N,
                                                    K, stride_xm, stride_xk, stride_wn, stride_wk,
                                                    stride_ym, stride_yn, BLOCK_M, BLOCK_N, BLOCK_K,
                                                    num_warps=warps)


class _linear_kernel_GluonRoute:
    """linear_kernel launched through its Gluon lowering where the call fits it, as written otherwise (`.fn` is the kernel)."""

    def __init__(self, fn, launch):
        self.fn = fn
        self._launch = launch

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, warmup=False, **kwargs)

    def run(self, *args, grid, warmup=False, **kwargs):
        launched = False if warmup else self._launch(grid, *args, **kwargs)
        return self.fn.run(*args, grid=grid, warmup=warmup, **kwargs) if launched is False else launched

    def __getattr__(self, name):
        return getattr(self.fn, name)


linear_kernel = _linear_kernel_GluonRoute(linear_kernel, _linear_kernel_gluon_launch)


def linear(x, w):
    M, K = x.shape
    N = w.shape[0]
    y = torch.empty((M, N), device=x.device, dtype=torch.float16)
    grid = (triton.cdiv(M, 64), triton.cdiv(N, 32))
    linear_kernel[grid](x, w, y, M, N, K,
                        x.stride(0), x.stride(1), w.stride(0), w.stride(1), y.stride(0), y.stride(1),
                        BLOCK_M=64, BLOCK_N=32, BLOCK_K=32)
    return y

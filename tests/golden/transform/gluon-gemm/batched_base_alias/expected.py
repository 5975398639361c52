"""Batched scores Q K^T: each program's batch base made once as a name (`q_base = q_ptr +
bh * stride_qb`), K read through its transpose (B is K-major: (batch, N, K) in memory)."""

import torch
import triton
import triton.language as tl


@triton.jit
def scores_kernel(q_ptr, k_ptr, s_ptr, M, N, D,
                  stride_qb, stride_qm, stride_qd,
                  stride_kb, stride_kn, stride_kd,
                  stride_sb, stride_sm, stride_sn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    bh = tl.program_id(2)
    q_base = q_ptr + bh * stride_qb
    k_base = stride_kb * tl.program_id(2) + k_ptr
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for d0 in range(0, D, BLOCK_D):
        ds = d0 + tl.arange(0, BLOCK_D)
        q = tl.load(q_base + rows[:, None] * stride_qm + ds[None, :] * stride_qd,
                    mask=(rows[:, None] < M) & (ds[None, :] < D), other=0.0)
        k = tl.load(k_base + ds[:, None] * stride_kd + cols[None, :] * stride_kn,
                    mask=(ds[:, None] < D) & (cols[None, :] < N), other=0.0)
        acc += tl.dot(q, k)
    s_base = s_ptr + bh * stride_sb
    tl.store(s_base + rows[:, None] * stride_sm + cols[None, :] * stride_sn, acc.to(tl.float16),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


# gluon-gemm: scores_kernel lowered to Gluon for Hopper (persistent programs, a TMA loader warp, an mbarrier ring of stages,
# asynchronous wgmma); _scores_kernel_gluon_launch routes each launch to it or to the kernel as written.
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
    def _scores_kernel_gluon_tile(tile, GRID_0, GRID_1, GRID_2, GROUP: _gl.constexpr):
        # programs along axis 0 taken GROUP at a time (tiles that share operands run together)
        per_plane = GRID_0 * GRID_1
        t = tile % per_plane
        width = GROUP * GRID_1
        first = (t // width) * GROUP
        rows = _gl.minimum(GRID_0 - first, GROUP)
        return first + (t % width) % rows, (t % width) // rows, tile // per_plane

    @_gluon.jit
    def _scores_kernel_gluon_load(a_desc, b_desc, a_s, b_s, ready, empty, GRID_0, GRID_1, GRID_2,
                                  GROUP: _gl.constexpr, B_KMAJOR: _gl.constexpr, q_ptr, k_ptr,
                                  s_ptr, M, N, D, stride_qb, stride_qm, stride_qd, stride_kb,
                                  stride_kn, stride_kd, stride_sb, stride_sm, stride_sn,
                                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                                  BLOCK_D: tl.constexpr):
        STAGES: _gl.constexpr = a_s.type.shape[0]
        NBYTES: _gl.constexpr = a_desc.block_type.nbytes + b_desc.block_type.nbytes
        it = 0
        for tile in range(_gl.program_id(0), GRID_0 * GRID_1 * GRID_2, _gl.num_programs(0)):
            pid_0, pid_1, pid_2 = _scores_kernel_gluon_tile(tile, GRID_0, GRID_1, GRID_2, GROUP)
            pid_m = pid_0
            pid_n = pid_1
            bh = pid_2
            for d0 in range(0, D, BLOCK_D):
                s = it % STAGES
                _mbarrier.wait(empty.index(s), ((it // STAGES) & 1) ^ 1)
                _mbarrier.expect(ready.index(s), NBYTES)
                _tma.async_copy_global_to_shared(a_desc, [bh, pid_m * BLOCK_M, d0], ready.index(s), a_s.index(s))
                if B_KMAJOR:
                    _tma.async_copy_global_to_shared(b_desc, [pid_2, pid_n * BLOCK_N, d0], ready.index(s), b_s.index(s))
                else:
                    _tma.async_copy_global_to_shared(b_desc, [pid_2, d0, pid_n * BLOCK_N], ready.index(s), b_s.index(s))
                it += 1

    @_gluon.jit
    def _scores_kernel_gluon_mma(a_s, b_s, ready, empty, GRID_0, GRID_1, GRID_2,
                                 GROUP: _gl.constexpr, B_KMAJOR: _gl.constexpr, q_ptr, k_ptr, s_ptr,
                                 M, N, D, stride_qb, stride_qm, stride_qd, stride_kb, stride_kn,
                                 stride_kd, stride_sb, stride_sm, stride_sn, BLOCK_M: tl.constexpr,
                                 BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
        STAGES: _gl.constexpr = a_s.type.shape[0]
        WARPS: _gl.constexpr = _gl.num_warps()
        ACC: _gl.constexpr = _gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[WARPS, 1],
                                                     instr_shape=[16, BLOCK_N, 256 // a_s.dtype.primitive_bitwidth])
        EPILOGUE: _gl.constexpr = _gl.BlockedLayout([1, 8], [4, 8], [WARPS, 1], [1, 0])
        it = 0
        for tile in range(_gl.program_id(0), GRID_0 * GRID_1 * GRID_2, _gl.num_programs(0)):
            pid_0, pid_1, pid_2 = _scores_kernel_gluon_tile(tile, GRID_0, GRID_1, GRID_2, GROUP)
            pid_m = pid_0
            pid_n = pid_1
            bh = pid_2
            q_base = q_ptr + bh * stride_qb
            k_base = stride_kb * pid_2 + k_ptr
            rows = pid_m * BLOCK_M + _gl.arange(0, BLOCK_M)
            cols = pid_n * BLOCK_N + _gl.arange(0, BLOCK_N)
            acc = _gl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32, layout=ACC)
            kt = 0
            for d0 in range(0, D, BLOCK_D):
                s = it % STAGES
                _mbarrier.wait(ready.index(s), (it // STAGES) & 1)
                if B_KMAJOR:
                    acc = _wgmma(a_s.index(s).reshape([a_s.type.shape[2], a_s.type.shape[3]]), b_s.index(s).reshape([b_s.type.shape[2], b_s.type.shape[3]]).permute((1, 0)), acc, is_async=True)
                else:
                    acc = _wgmma(a_s.index(s).reshape([a_s.type.shape[2], a_s.type.shape[3]]), b_s.index(s).reshape([b_s.type.shape[2], b_s.type.shape[3]]), acc, is_async=True)
                acc, _, _ = _wgmma_wait(num_outstanding=1, deps=(acc, a_s.index(s), b_s.index(s)))
                # the stage the previous MMA read is free
                _mbarrier.arrive(empty.index((it + STAGES - 1) % STAGES), count=1, pred=kt > 0)
                it += 1
                kt += 1
            acc = _wgmma_wait(num_outstanding=0, deps=(acc,))
            _mbarrier.arrive(empty.index((it + STAGES - 1) % STAGES), count=1, pred=kt > 0)
            acc = _gl.convert_layout(acc, EPILOGUE)
            s_base = s_ptr + bh * stride_sb
            tl.store(s_base + rows[:, None] * stride_sm + cols[None, :] * stride_sn, acc.to(tl.float16),
                     mask=(rows[:, None] < M) & (cols[None, :] < N))

    @_gluon.jit
    def _scores_kernel_gluon(a_desc, b_desc, STAGES: _gl.constexpr, GRID_0, GRID_1, GRID_2,
                             GROUP: _gl.constexpr, B_KMAJOR: _gl.constexpr, q_ptr, k_ptr, s_ptr, M,
                             N, D, stride_qb, stride_qm, stride_qd, stride_kb, stride_kn, stride_kd,
                             stride_sb, stride_sm, stride_sn, BLOCK_M: tl.constexpr,
                             BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
        a_s = _gl.allocate_shared_memory(a_desc.dtype, [STAGES, 1, a_desc.block_type.shape[1], a_desc.block_type.shape[2]],
                                          a_desc.layout)
        b_s = _gl.allocate_shared_memory(b_desc.dtype, [STAGES, 1, b_desc.block_type.shape[1], b_desc.block_type.shape[2]],
                                          b_desc.layout)
        ready = _gl.allocate_shared_memory(_gl.int64, [STAGES, 1], _mbarrier.MBarrierLayout())
        empty = _gl.allocate_shared_memory(_gl.int64, [STAGES, 1], _mbarrier.MBarrierLayout())
        for i in _gl.static_range(STAGES):
            _mbarrier.init(ready.index(i), count=1)
            _mbarrier.init(empty.index(i), count=1)
        _gl.warp_specialize([
            (_scores_kernel_gluon_mma, (a_s, b_s, ready, empty, GRID_0, GRID_1, GRID_2, GROUP,
                                        B_KMAJOR, q_ptr, k_ptr, s_ptr, M, N, D, stride_qb,
                                        stride_qm, stride_qd, stride_kb, stride_kn, stride_kd,
                                        stride_sb, stride_sm, stride_sn, BLOCK_M, BLOCK_N, BLOCK_D)),
            (_scores_kernel_gluon_load, (a_desc, b_desc, a_s, b_s, ready, empty, GRID_0, GRID_1,
                                         GRID_2, GROUP, B_KMAJOR, q_ptr, k_ptr, s_ptr, M, N, D,
                                         stride_qb, stride_qm, stride_qd, stride_kb, stride_kn,
                                         stride_kd, stride_sb, stride_sm, stride_sn, BLOCK_M,
                                         BLOCK_N, BLOCK_D)),
        ], [1], [24])


def _scores_kernel_gluon_types():
    return {
        getattr(torch, "float16", None): _gl.float16,
    } if _gluon is not None else {}


_scores_kernel_GLUON_SMS = {}


def _scores_kernel_gluon_config(bm, bn, bk, es, stages=0, warps=0):
    """Stages of the operand ring (0: as many as fit 160 KiB, 2 to 6) and warps of the MMA partition for these tiles
    (es: bytes per element), or None when wgmma and TMA do not take them (the kernel as written runs)."""
    if not stages:
        stages = max(2, min(6, (160 * 1024) // max(1, (bm + bn) * bk * es)))
    if not warps:
        warps = 8 if bm * bn >= 128 * 256 else 4
    if bm % (16 * warps) or bn % 16 or bn > 256 or bm > 256 or (bk * es) % 32 or bk > 256:
        return None
    return stages, warps


def _scores_kernel_gluon_launch(grid, q_ptr, k_ptr, s_ptr, M, N, D, stride_qb, stride_qm, stride_qd,
                                stride_kb, stride_kn, stride_kd, stride_sb, stride_sm, stride_sn,
                                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
                                **options):
    """Launches the Gluon lowering of scores_kernel and returns the launched kernel, or says False when this call does not fit it
    (no Gluon, not a Hopper GPU, operands TMA or wgmma cannot take): the caller then launches the kernel as written."""
    a, b = q_ptr, k_ptr
    types = _scores_kernel_gluon_types()
    if (not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor) or not a.is_cuda or a.dtype != b.dtype
            or types.get(a.dtype) is None or torch.cuda.get_device_capability(a.device)[0] != 9):
        return False
    es = a.element_size()
    if stride_qd != 1 or (stride_qm * es) % 16 or a.data_ptr() % 16 or b.data_ptr() % 16:
        return False
    if stride_kd == 1 and (stride_kn * es) % 16 == 0:
        b_kmajor = True
    elif es == 2 and stride_kn == 1 and (stride_kd * es) % 16 == 0:
        b_kmajor = False
    else:
        return False
    bm, bn, bk = BLOCK_M, BLOCK_N, BLOCK_D
    config = _scores_kernel_gluon_config(bm, bn, bk, es)
    if config is None:
        return False
    stages, warps = config
    if callable(grid):
        grid = grid(dict(q_ptr=q_ptr, k_ptr=k_ptr, s_ptr=s_ptr, M=M, N=N, D=D, stride_qb=stride_qb,
                         stride_qm=stride_qm, stride_qd=stride_qd, stride_kb=stride_kb,
                         stride_kn=stride_kn, stride_kd=stride_kd, stride_sb=stride_sb,
                         stride_sm=stride_sm, stride_sn=stride_sn, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                         BLOCK_D=BLOCK_D, **options))
    grid = tuple(grid) + (1,) * (3 - len(grid))
    tiles = grid[0] * grid[1] * grid[2]
    if tiles <= 0:
        return False
    if stride_qb <= 0 or (stride_qb * es) % 16:  # TMA's strides: positive, multiples of 16 bytes
        return False
    if stride_kb <= 0 or (stride_kb * es) % 16:  # TMA's strides: positive, multiples of 16 bytes
        return False
    dt = types[a.dtype]
    a_desc = _TensorDescriptor(a, [grid[2], M, D], [stride_qb, stride_qm, 1], [1, bm, bk],
                               _gl.NVMMASharedLayout.get_default_for([1, bm, bk], dt))
    if b_kmajor:
        b_desc = _TensorDescriptor(b, [grid[2], N, D], [stride_kb, stride_kn, 1], [1, bn, bk],
                                   _gl.NVMMASharedLayout.get_default_for([1, bn, bk], dt))
    else:
        b_desc = _TensorDescriptor(b, [grid[2], D, N], [stride_kb, stride_kd, 1], [1, bk, bn],
                                   _gl.NVMMASharedLayout.get_default_for([1, bk, bn], dt))
    sms = _scores_kernel_GLUON_SMS.get(a.device.index)
    if sms is None:
        sms = _scores_kernel_GLUON_SMS[a.device.index] = torch.cuda.get_device_properties(a.device).multi_processor_count
    return _scores_kernel_gluon[(min(sms, tiles),)](a_desc, b_desc, stages, grid[0], grid[1],
                                                    grid[2], 8, b_kmajor, q_ptr, k_ptr, s_ptr, M, N,
                                                    D, stride_qb, stride_qm, stride_qd, stride_kb,
                                                    stride_kn, stride_kd, stride_sb, stride_sm,
                                                    stride_sn, BLOCK_M, BLOCK_N, BLOCK_D,
                                                    num_warps=warps)


class _scores_kernel_GluonRoute:
    """scores_kernel launched through its Gluon lowering where the call fits it, as written otherwise (`.fn` is the kernel)."""

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


scores_kernel = _scores_kernel_GluonRoute(scores_kernel, _scores_kernel_gluon_launch)


def scores(q, k):
    batch, M, D = q.shape
    N = k.shape[1]
    s = torch.empty((batch, M, N), device=q.device, dtype=torch.float16)
    grid = (triton.cdiv(M, 128), triton.cdiv(N, 128), batch)
    scores_kernel[grid](q, k, s, M, N, D,
                        q.stride(0), q.stride(1), q.stride(2),
                        k.stride(0), k.stride(1), k.stride(2),
                        s.stride(0), s.stride(1), s.stride(2),
                        BLOCK_M=128, BLOCK_N=128, BLOCK_D=64)
    return s

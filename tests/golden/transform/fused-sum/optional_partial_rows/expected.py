"""The backward of an optional row scaling y = x * w (w may be None): the partial rows of w's
gradient are allocated only when there is a w (None otherwise), the launch forwards extra
options through **options, and the partial rows are summed inside a branch."""

import torch
import triton
import triton.language as tl


@triton.jit
def _fused_dim_sum_add(base, nbytes, ptr, value, mask):
    # fused-sum along a dimension: the summed dimension of the buffer has stride 0, so what
    # `tl.store(ptr, value, mask=mask)` would write is added to the one row every program writes;
    # an address outside the accumulator's bytes is dropped (written nowhere)
    tl.static_assert(ptr.dtype.element_ty == tl.float32 or ptr.dtype.element_ty == tl.float64,
                     "fused-sum along a dimension: the buffer holds float32 or float64")
    v = tl.cast(value, ptr.dtype.element_ty)
    offset = ptr.to(tl.int64) - base.to(tl.int64)
    inside = (offset >= 0) & (offset < nbytes)
    if mask is not None:
        inside = inside & mask
    if ptr.type.is_block():
        v = tl.broadcast_to(v, ptr.shape)
    tl.atomic_add(ptr, v, mask=inside, sem="relaxed")


@triton.jit
def scale_backward_kernel(dy_ptr, x_ptr, dx_ptr, w_ptr, dw_ptr, dw_row_stride, n_rows, n_cols, rows_per_program,
                          HAS_W: tl.constexpr, BLOCK: tl.constexpr, dw_ptr_bytes):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    if HAS_W:
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    else:
        w = tl.full((BLOCK,), 1.0, tl.float32)
    dw = tl.zeros((BLOCK,), dtype=tl.float32)
    row_start = pid * rows_per_program
    row_end = tl.minimum(row_start + rows_per_program, n_rows)
    for row in range(row_start, row_end):
        dy = tl.load(dy_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(dx_ptr + row * n_cols + cols, (dy * w).to(dx_ptr.dtype.element_ty), mask=mask)
        if HAS_W:
            x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
            dw += dy * x
    if HAS_W:
        _fused_dim_sum_add(dw_ptr, dw_ptr_bytes, dw_ptr + pid * dw_row_stride + cols, dw, mask)


def scale_backward(dy, x, w):
    n_rows, n_cols = x.shape
    programs = torch.cuda.get_device_properties(x.device).multi_processor_count
    rows_per_program = triton.cdiv(n_rows, programs)
    dx = torch.empty_like(x)
    if w is not None:
        _dw = torch.empty((programs, n_cols), dtype=torch.float32, device=x.device)
        _dw = torch.zeros_like(_dw.select(0, 0)).unsqueeze(0).expand_as(_dw)
    else:
        _dw = None
    options = {}
    scale_backward_kernel[(programs,)](
        dy,
        x,
        dx,
        w,
        _dw,
        _dw.stride(0) if w is not None else 0,
        n_rows,
        n_cols,
        rows_per_program,
        HAS_W=w is not None,
        BLOCK=triton.next_power_of_2(n_cols),
        **options,
        dw_ptr_bytes=_dw.select(0, 0).numel() * _dw.element_size() if _dw is not None else 0,
    )
    if w is not None:
        dw = _dw.select(0, 0).to(w.dtype)
    else:
        dw = None
    return dx, dw

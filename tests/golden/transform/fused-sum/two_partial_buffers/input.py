"""The backward of a row scaling with a bias y = x * w + b: dx per row, and the gradients of w and
b as one partial row each per program, both summed by torch along the programs (two buffers
one launch fills)."""

import torch
import triton
import triton.language as tl


@triton.jit
def scale_backward_kernel(dy_ptr, x_ptr, dx_ptr, w_ptr, dw_ptr, dw_row_stride, db_ptr, db_row_stride, n_rows, n_cols,
                          rows_per_program, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    dw = tl.zeros((BLOCK,), dtype=tl.float32)
    db = tl.zeros((BLOCK,), dtype=tl.float32)
    row_start = pid * rows_per_program
    row_end = tl.minimum(row_start + rows_per_program, n_rows)
    for row in range(row_start, row_end):
        dy = tl.load(dy_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(dx_ptr + row * n_cols + cols, (dy * w).to(dx_ptr.dtype.element_ty), mask=mask)
        dw += dy * x
        db += dy
    tl.store(dw_ptr + pid * dw_row_stride + cols, dw, mask=mask)
    tl.store(db_ptr + pid * db_row_stride + cols, db, mask=mask)


def scale_backward(dy, x, w):
    n_rows, n_cols = x.shape
    programs = torch.cuda.get_device_properties(x.device).multi_processor_count
    rows_per_program = triton.cdiv(n_rows, programs)
    dx = torch.empty_like(x)
    _dw = torch.zeros((programs, n_cols), dtype=torch.float32, device=x.device)
    _db = torch.zeros((programs, n_cols), dtype=torch.float32, device=x.device)
    scale_backward_kernel[(programs,)](dy, x, dx, w, _dw, _dw.stride(0), _db, _db.stride(0), n_rows, n_cols,
                                       rows_per_program, BLOCK=triton.next_power_of_2(n_cols))
    dw = _dw.sum(dim=0).to(w.dtype)
    db = _db.sum(0).to(w.dtype)
    return dx, dw, db

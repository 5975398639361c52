"""A squared error per row, one value per program stored into a bf16 buffer, then its mean."""

import torch
import triton
import triton.language as tl


@triton.jit
def _fused_sum_into(total, ptr, value, mask):
    # fused-sum: what `tl.store(ptr, value, mask=mask)` would write, added to one of the 1024 slots
    # of total (spread over programs: one address taking every program's atomics serializes them)
    tl.static_assert(ptr.dtype.element_ty.is_floating(), "fused-sum: the summed buffer holds floats")
    v = tl.cast(value, ptr.dtype.element_ty)
    slot = (tl.program_id(0) + tl.program_id(1) * 61 + tl.program_id(2) * 127) % 1024
    if ptr.type.is_block():
        v = tl.broadcast_to(v, ptr.shape)
        if mask is not None:
            v = tl.where(mask, v, 0)
        tl.atomic_add(total + slot, tl.sum(v.to(total.dtype.element_ty)), sem="relaxed")
    else:
        tl.atomic_add(total + slot, v.to(total.dtype.element_ty), mask=mask, sem="relaxed")


@triton.jit
def row_error_kernel(a_ptr, b_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr, out_ptr_total):
    row = tl.program_id(0)
    if row >= n_rows:
        return
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    a = tl.load(a_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    err = tl.sum((a - b) * (a - b), axis=0)
    _fused_sum_into(out_ptr_total, out_ptr + row, err, None)


def row_error(a, b):
    n_rows, n_cols = a.shape
    errors = a.new_empty(n_rows, dtype=torch.bfloat16)
    errors_total = torch.zeros(1024, dtype=torch.promote_types(errors.dtype, torch.float32), device=errors.device)
    row_error_kernel[(n_rows + 1,)](a, b, errors, n_rows, n_cols, BLOCK=triton.next_power_of_2(n_cols),
                                    out_ptr_total=errors_total)
    return (errors_total.sum() / errors.numel()).to(errors.dtype)

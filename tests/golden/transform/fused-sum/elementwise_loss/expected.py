"""A generalized Jensen-Shannon-style loss: one term per element written into a float32 buffer
that the launcher sums with torch afterwards, and the gradient beside it."""

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
def jsd_kernel(X_ptr, X_stride, Y_ptr, Y_stride, loss_ptr, loss_stride, dX_ptr, dX_stride, beta, n_cols,
               BLOCK_SIZE: tl.constexpr, loss_ptr_total):
    pid = tl.program_id(0).to(tl.int64)
    X_ptr += pid * X_stride
    Y_ptr += pid * Y_stride
    dX_ptr += pid * dX_stride
    loss_ptr += pid * loss_stride
    for i in range(0, n_cols, BLOCK_SIZE):
        offsets = i + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n_cols
        X = tl.load(X_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        Y = tl.load(Y_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        Q = tl.exp(X)
        P = tl.exp(Y)
        M = beta * P + (1 - beta) * Q
        log_M = tl.log(M)
        loss = beta * P * Y + (1 - beta) * Q * X - M * log_M
        _fused_sum_into(loss_ptr_total, loss_ptr + offsets, loss, mask)
        tl.store(dX_ptr + offsets, (1 - beta) * Q * (X - log_M), mask=mask)


def jsd(x, y, beta=0.5):
    n_rows, n_cols = x.shape
    loss = torch.empty(x.shape, dtype=torch.float32, device=x.device)
    loss_total = torch.zeros(1024, dtype=torch.promote_types(loss.dtype, torch.float32), device=loss.device)
    dX = torch.empty_like(x)
    jsd_kernel[(n_rows,)](x, x.stride(0), y, y.stride(0), loss, loss.stride(0), dX, dX.stride(0), beta, n_cols,
                          BLOCK_SIZE=256, loss_ptr_total=loss_total)
    loss = loss_total.sum().to(loss.dtype)
    return loss.to(x.dtype), dX

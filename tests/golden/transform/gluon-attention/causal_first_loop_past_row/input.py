# The stage-mode attention whose first key loop (unmasked) runs one key tile past the program's
# first query row before the masked loop takes over: rows at the start of the tile see keys after
# them unmasked, which is not causal attention. Read statically like the stage-mode kernel (the
# two loops continue one softmax); the route refuses every launch where a program's unmasked
# keys pass its first row, so the kernel as written runs.
import torch
import triton
import triton.language as tl


@triton.jit
def _key_steps(o_acc, row_sum, row_max, q_tile, k_blocks, v_blocks, tile_m, scale2, offs_rows, offs_keys,
               SEQ, ROWS: tl.constexpr, KEYS: tl.constexpr, PHASE: tl.constexpr):
    if PHASE == 1:
        first, last = 0, tile_m * ROWS + KEYS
    elif PHASE == 2:
        first, last = tile_m * ROWS + KEYS, (tile_m + 1) * ROWS
        first = tl.multiple_of(first, KEYS)
    else:
        first, last = 0, SEQ
    k_blocks = tl.advance(k_blocks, (0, first))
    v_blocks = tl.advance(v_blocks, (first, 0))
    for key0 in range(first, last, KEYS):
        key0 = tl.multiple_of(key0, KEYS)
        kt = tl.load(k_blocks)
        s = tl.dot(q_tile, kt)
        if PHASE == 2:
            keep = offs_rows[:, None] >= (key0 + offs_keys[None, :])
            s = s * scale2 + tl.where(keep, 0, -1.0e6)
            new_max = tl.maximum(row_max, tl.max(s, 1))
            s -= new_max[:, None]
        else:
            new_max = tl.maximum(row_max, tl.max(s, 1) * scale2)
            s = s * scale2 - new_max[:, None]
        p = tl.math.exp2(s)
        corr = tl.math.exp2(row_max - new_max)
        row_sum = row_sum * corr + tl.sum(p, 1)
        o_acc = o_acc * corr[:, None]
        vt = tl.load(v_blocks)
        o_acc = tl.dot(p.to(tl.float16), vt, o_acc)
        row_max = new_max
        k_blocks = tl.advance(k_blocks, (0, KEYS))
        v_blocks = tl.advance(v_blocks, (KEYS, 0))
    return o_acc, row_sum, row_max


@triton.jit
def staged_attention(Q, K, V, scale, LSE, O, s_qb, s_qh, s_qs, s_qd, s_kb, s_kh, s_ks, s_kd, s_vb, s_vh, s_vs,
                     s_vd, s_ob, s_oh, s_os, s_od, HEADS, SEQ,
                     DIM: tl.constexpr, ROWS: tl.constexpr, KEYS: tl.constexpr, MODE: tl.constexpr):
    tile_m = tl.program_id(0)
    pair = tl.program_id(1)
    b = pair // HEADS
    h = pair % HEADS
    base = b.to(tl.int64) * s_qb + h.to(tl.int64) * s_qh
    q_blocks = tl.make_block_ptr(base=Q + base, shape=(SEQ, DIM), strides=(s_qs, s_qd),
                                 offsets=(tile_m * ROWS, 0), block_shape=(ROWS, DIM), order=(1, 0))
    k_blocks = tl.make_block_ptr(base=K + base, shape=(DIM, SEQ), strides=(s_kd, s_ks),
                                 offsets=(0, 0), block_shape=(DIM, KEYS), order=(0, 1))
    v_blocks = tl.make_block_ptr(base=V + base, shape=(SEQ, DIM), strides=(s_vs, s_vd),
                                 offsets=(0, 0), block_shape=(KEYS, DIM), order=(1, 0))
    o_blocks = tl.make_block_ptr(base=O + base, shape=(SEQ, DIM), strides=(s_os, s_od),
                                 offsets=(tile_m * ROWS, 0), block_shape=(ROWS, DIM), order=(1, 0))
    offs_rows = tile_m * ROWS + tl.arange(0, ROWS)
    offs_keys = tl.arange(0, KEYS)
    row_max = tl.zeros([ROWS], dtype=tl.float32) - float("inf")
    row_sum = tl.zeros([ROWS], dtype=tl.float32) + 1.0
    o_acc = tl.zeros([ROWS, DIM], dtype=tl.float32)
    scale2 = scale
    scale2 *= 1.4426950408889634
    q_tile = tl.load(q_blocks)
    if MODE & 1:
        o_acc, row_sum, row_max = _key_steps(o_acc, row_sum, row_max, q_tile, k_blocks, v_blocks, tile_m, scale2,
                                             offs_rows, offs_keys, SEQ, ROWS, KEYS, 4 - MODE)
    if MODE & 2:
        o_acc, row_sum, row_max = _key_steps(o_acc, row_sum, row_max, q_tile, k_blocks, v_blocks, tile_m, scale2,
                                             offs_rows, offs_keys, SEQ, ROWS, KEYS, 2)
    row_max += tl.math.log2(row_sum)
    o_acc = o_acc / row_sum[:, None]
    tl.store(LSE + pair * SEQ + offs_rows, row_max)
    tl.store(o_blocks, o_acc.to(O.type.element_ty))


def attention(q, k, v, causal, scale):
    B, H, S, D = q.shape
    o = torch.empty_like(q)
    lse = torch.empty((B, H, S), device=q.device, dtype=torch.float32)
    grid = (triton.cdiv(S, 128), B * H, 1)
    staged_attention[grid](q, k, v, scale, lse, o, *q.stride(), *k.stride(), *v.stride(), *o.stride(), H, S,
                           DIM=D, ROWS=128, KEYS=64, MODE=3 if causal else 1, num_warps=8, num_stages=3)
    return o, lse

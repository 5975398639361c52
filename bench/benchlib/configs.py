"""The standard @triton.autotune config lists the suite compares tritonforge with.

One list per kernel family, written once for the whole suite (not tuned per kernel, not
taken from tritonforge's search): the configurations an engineer who knows Triton would put
in an autotune decorator for an H100/H200-class GPU. Each kernel's autotuned variant
(kernels/NAME/NAME_autotune.py) wraps the kernel as written, unchanged, with
triton.autotune(configs=<one of these>, key=<its shape arguments>).

  tiles(elem_bytes)   matmul-like kernels with BLOCK_M / BLOCK_N / BLOCK_K (12 configs)
  attention()         flash-attention-like kernels with BLOCK_M / BLOCK_N (8 configs)
  row_loop(param)     one program per row, a loop over the row in blocks of `param` (13 configs)
  whole_row()         one program per row, the block spans the row: only num_warps (6 configs)
  flat(param)         1-D element-wise kernels with one block size (12 configs)
  tiles_2d()          2-D tiled copies (transpose) with BLOCK_M / BLOCK_N (9 configs)
"""

import triton


def _cfg(kwargs, warps, stages=None):
    if stages is None:
        return triton.Config(dict(kwargs), num_warps=warps)
    return triton.Config(dict(kwargs), num_warps=warps, num_stages=stages)


def tiles(elem_bytes=2):
    """(BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages). The K step is halved for 4-byte
    elements so that every config fits the 227 KiB of shared memory of sm_90."""
    k_big, k_small = (64, 32) if elem_bytes <= 2 else (32, 16)
    rows = [
        (128, 256, k_big, 8, 3),
        (256, 128, k_big, 8, 3),
        (128, 128, k_big, 8, 3),
        (128, 128, k_big, 4, 4),
        (128, 64, k_big, 4, 4),
        (64, 128, k_big, 4, 4),
        (64, 64, k_big, 4, 4),
        (128, 128, k_small, 4, 4),
        (64, 256, k_small, 4, 4),
        (256, 64, k_small, 4, 4),
        (64, 32, k_small, 2, 5),
        (32, 64, k_small, 2, 5),
    ]
    return [_cfg({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k}, w, s) for m, n, k, w, s in rows]


def attention():
    """(BLOCK_M query rows, BLOCK_N keys per step, num_warps, num_stages)."""
    rows = [
        (64, 32, 4, 3),
        (64, 64, 4, 3),
        (64, 128, 4, 2),
        (128, 32, 8, 3),
        (128, 64, 8, 3),
        (128, 64, 4, 3),
        (128, 128, 8, 2),
        (64, 64, 8, 2),
    ]
    return [_cfg({"BLOCK_M": m, "BLOCK_N": n}, w, s) for m, n, w, s in rows]


def row_loop(param="BLOCK_SIZE"):
    """Block sizes of a loop over a row, each with 4, 8 and 16 warps (and 512 with 4)."""
    out = [_cfg({param: 512}, 4)]
    for block in (1024, 2048, 4096, 8192):
        for warps in (4, 8, 16):
            out.append(_cfg({param: block}, warps))
    return out


def whole_row():
    """The block is the row (computed from the shape by the launcher): only the warps vary."""
    return [triton.Config({}, num_warps=w) for w in (1, 2, 4, 8, 16, 32)]


def flat(param="BLOCK_SIZE"):
    out = []
    for block in (1024, 2048, 4096, 8192):
        for warps in (4, 8, 16):
            out.append(_cfg({param: block}, warps))
    return out


def tiles_2d():
    rows = [(32, 32, 4), (64, 64, 4), (64, 64, 8), (128, 64, 8), (64, 128, 8), (128, 128, 8),
            (128, 128, 16), (32, 128, 4), (128, 32, 4)]
    return [_cfg({"BLOCK_M": m, "BLOCK_N": n}, w) for m, n, w in rows]

#!/usr/bin/env python3
"""Writes SYNTHETIC matmul sweeps for the replay tests until sweeps recorded on the H200
(scripts/gpu/record_sweeps.sh) replace them.

    python3 scripts/make_synthetic_sweeps.py tests/data/sweeps

The times come from a made-up analytic model of the example matmul (examples/matmul) on a
Hopper GPU, NOT from a measurement: tensor-core efficiency by tile shape and warps, tile
arithmetic intensity, latency hiding by pipeline stages, occupancy from registers and
shared memory, wave quantization over 132 SMs, register spills, 1% log-normal noise, and
compile failures where the real shared-memory need (epilogue included) exceeds what the
static pruning estimates. The space and the static pruning are those of
src/search/space.cpp for that kernel, so the rows are what `optimize --strategy
exhaustive` would try. Seeded: the same files every time.
"""

import itertools
import math
import os
import random
import sys

SMS = 132
SMEM = 232448          # bytes per block (sm_90: 227 KiB)
SM_SMEM = 233472       # per SM
PEAK = 800e12          # fp16 dense FLOP/s this kernel could ever reach


def valid(bm, bn, bk, w, s):
    """src/search/space.cpp's pruning for a dot kernel with fp16 operands."""
    if s * (bm * bk + bk * bn) * 2 > SMEM:
        return False
    if bm * bn / (32 * w) > 256:
        return False
    if bm * bn < 32 * w * 4:
        return False
    return True


def model_ms(M, N, K, bm, bn, bk, w, s, rng):
    """Returns the time in ms, or None for a configuration that fails to compile."""
    smem = s * (bm + bn) * bk * 2 + (bm * bn * 2 if bm * bn >= 128 * 128 else 0)
    if smem > SMEM:
        return None                                   # out of shared memory at compile time
    wgmma = w % 4 == 0 and bm >= 64 and bn >= 32
    if wgmma:
        e_mma = 0.9 if bm >= 128 and bn >= 128 else 0.75 if bm * bn >= 128 * 64 else 0.6
    else:
        e_mma = 0.45 if w >= 4 else 0.3
    intensity = bm * bn / (bm + bn)
    e_tile = intensity / (intensity + 20.0)
    acc = bm * bn / (32 * w)
    regs = acc + 40 + (bm + bn) * bk / (32 * w) / 2
    e_spill = 1.0 if regs <= 255 else 0.35
    regs = min(regs, 255)
    occ = max(1, min(SM_SMEM // max(smem, 1), 65536 // int(32 * w * regs), 64 // w))
    inflight = (s - 1) * (bm + bn) * bk * 2 * occ
    e_pipe = min(1.0, (inflight / 65536.0) ** 0.35)
    e_iter = 1.0 / (1.0 + 6.0 / bk)                  # per-iteration overhead of the K loop
    programs = math.ceil(M / bm) * math.ceil(N / bn)
    slots = SMS * occ
    waves = programs / slots
    e_wave = waves / math.ceil(waves)
    if programs < SMS:
        e_wave = programs / SMS                       # idle SMs
    e_occ = 0.8 + 0.2 * min(1.0, occ * w / 16.0)
    eff = e_mma * e_tile * e_pipe * e_iter * e_wave * e_spill * e_occ
    flops = 2.0 * M * N * K
    t = flops / (PEAK * eff) * 1e3 + 0.004
    return t * math.exp(rng.gauss(0.0, 0.01))


# The domains scripts/gpu/record_sweeps.sh records (optimize --only ...): the example's
# space without 16-wide tiles and 2 warps, a few hundred configurations.
TILES = [32, 64, 128, 256]
TILES_K = [32, 64, 128]
WARPS = [4, 8]
STAGES = [2, 3, 4, 5]


def sweep(path, M, N, K, seed):
    rng = random.Random(seed)
    rows = []
    for bm, bn, bk, w, s in itertools.product(TILES, TILES, TILES_K, WARPS, STAGES):
        if not valid(bm, bn, bk, w, s):
            continue
        rows.append((bm, bn, bk, w, s, model_ms(M, N, K, bm, bn, bk, w, s, rng)))
    with open(path, "w") as f:
        f.write("# tritonforge-sweep/1\n")
        f.write(f'# kernel=matmul_kernel elem_bytes=2 dots=1 case="M={M},N={N},K={K}" '
                f'baseline="32,32,32,4,3" synthetic=1 source="scripts/make_synthetic_sweeps.py (a model, not a '
                f'measurement)"\n')
        f.write("BLOCK_M,BLOCK_N,BLOCK_K,num_warps,num_stages,time_ms,status\n")
        for bm, bn, bk, w, s, t in rows:
            f.write(f"{bm},{bn},{bk},{w},{s},{'' if t is None else f'{t:.5f}'},"
                    f"{'ok' if t is not None else 'out-of-resources'}\n")
    ok = [r for r in rows if r[5] is not None]
    best = min(ok, key=lambda r: r[5])
    print(f"{path}: {len(rows)} rows, {len(rows) - len(ok)} failed, best {best}")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/data/sweeps"
    os.makedirs(out, exist_ok=True)
    sweep(os.path.join(out, "synthetic_matmul_4096x4096x4096.csv"), 4096, 4096, 4096, 1)
    sweep(os.path.join(out, "synthetic_matmul_512x512x16384.csv"), 512, 512, 16384, 2)


if __name__ == "__main__":
    main()

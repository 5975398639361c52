"""An @triton.autotune kernel compiled by a compile worker: each configuration once, no benchmark.

A compile worker runs the launcher with launches turned into compiles (runner.py's warm
mode). An autotuner reached that way would still run its benchmark around each configuration:
Triton's do_bench sizes its loop from an estimate of the kernel's time, and with nothing
launched that estimate is the cache flush alone, so it calls the launcher about 1,500 times per
configuration, each time clearing a 256 MB buffer on the GPU beside the measurement worker's
timings. Its pick would be meaningless too, and with `cache_results` it would be written to
Triton's disk cache for the measurement to load. Inside `compile_only`, each autotuner reached
compiles each of its configurations once and keeps nothing of it.

`part=(i, n)` compiles the i-th of n interleaved shares of each autotuner's (pruned) list, so
that n compile workers together compile the whole list in about one share's time: a binary does
not depend on the list it came from (Triton's cache key is the kernel's source, its
specialization and the configuration's options), so the measurement worker then loads them all.
"""

import contextlib

from .modules import autotuners

_ZERO = [0.0, 0.0, 0.0]


def share(items, part):
    """The part-th of `part[1]` interleaved shares of `items`; never empty for a non-empty list
    (a share past its end takes one item again: the launcher still needs a configuration)."""
    if part is None or len(items) <= 1:
        return list(items)
    i, n = part
    got = list(items)[i::n]
    return got if got else [items[i % len(items)]]


def _compile_once(kernel_call, quantiles=None):
    kernel_call()
    return list(_ZERO) if quantiles else 0.0


@contextlib.contextmanager
def compile_only(roots, module, part=None):
    """Within the block, every autotuner of `module` (and of the modules under `roots`) runs
    its configurations (its `part` share of them) once each, from an empty choice cache, and
    writes nothing to disk; afterwards it is as it was."""
    saved = []
    for at in autotuners(roots, module):
        # Triton 3.6 keeps the benchmark in `_do_bench`; older 3.x in `do_bench` itself.
        bench_attrs = [a for a in ("_do_bench", "do_bench") if a in at.__dict__]
        saved.append((at, {"cache": dict(getattr(at, "cache", None) or {}),
                           "cache_results": getattr(at, "cache_results", False),
                           "bench": {a: at.__dict__[a] for a in bench_attrs},
                           "had_prune": "prune_configs" in at.__dict__}))
        at.cache = {}
        at.cache_results = False
        for a in bench_attrs:
            setattr(at, a, _compile_once)
        prune = type(at).prune_configs

        def pruned_share(kwargs, _at=at, _prune=prune):
            return share(_prune(_at, kwargs), part)

        at.prune_configs = pruned_share
    try:
        yield [at for at, _ in saved]
    finally:
        for at, state in saved:
            at.cache = state["cache"]
            at.cache_results = state["cache_results"]
            for a, value in state["bench"].items():
                setattr(at, a, value)
            if not state["had_prune"]:
                at.__dict__.pop("prune_configs", None)

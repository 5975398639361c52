"""What an @triton.autotune kernel chooses at run time, measured robustly before it is timed.

An autotuner picks the configuration its own short benchmark found fastest. That pick swings
between processes: on the H200 one int4 GEMM ran 1.82 ms after one process's pick and 3.50 ms
after another's (a compile worker loading the CPU, a clock ramping up during the benchmark).
A baseline timed after a bad pick makes any candidate look faster; a candidate timed after a
bad pick looks slower than it is. So before a launcher that autotunes is timed, each
autotuner it used gets its best: the configuration it picked and the next ones by its own
benchmark are timed again here, each pinned in turn, with the same timing as the
measurement, and the fastest is pinned in the autotuner's cache. The kernel as written is
then timed at the best its own list offers, which is what a user gets from it on a good
day: the honest baseline, and the same treatment for every candidate that still autotunes.

Entry point: pin_best(roots, module, time_fn, top) -> list of notes (one per autotuner).
Only an autotuner that ran one shape in the call is pinned (several keys would need each
pinned on its own share of the time); the notes say so.
"""

from .modules import autotuners


def _autotuners(roots, module):
    """Autotuner objects defined in `module` or in a module loaded from under `roots`, with a
    choice made (a cache entry), each once."""
    return [at for at in autotuners(roots, module) if getattr(at, "cache", None)]


def _rank(timings):
    """The configurations of an autotuner's benchmark, fastest first (failed ones left out)."""
    def key(item):
        t = item[1]
        t = t[0] if isinstance(t, (list, tuple)) else t
        return float(t)

    ranked = sorted(timings.items(), key=key)
    return [cfg for cfg, t in ranked if key((cfg, t)) != float("inf")]


def _name(at):
    fn = getattr(at, "base_fn", None) or getattr(at, "fn", None)
    return getattr(fn, "__name__", "kernel")


def pin_best(roots, module, time_fn, top=3):
    """Pins each autotuner used by the last call to the fastest of its pick and its next
    `top` configurations by its own benchmark, timed by time_fn() (median ms, the launcher's
    whole call). Returns one note per autotuner: {"kernel", "picked", "pinned", "tried",
    "picked_ms", "pinned_ms"} or {"kernel", "skipped": why}."""
    notes = []
    for at in _autotuners(roots, module):
        name = _name(at)
        if len(at.cache) != 1:
            notes.append({"kernel": name, "skipped": f"it ran {len(at.cache)} shapes in one call"})
            continue
        key, picked = next(iter(at.cache.items()))
        pinned_before = getattr(at, "_tritonforge_pinned", None)
        if pinned_before is not None and pinned_before.get(key) is picked:
            continue  # pinned by an earlier measurement of this process
        timings = getattr(at, "configs_timings", None) or {}
        candidates = [picked] + [c for c in _rank(timings) if c is not picked][:top]
        if len(candidates) < 2:
            continue
        times = {}
        for cfg in candidates:
            at.cache[key] = cfg
            try:
                times[cfg] = time_fn()
            except Exception:  # noqa: BLE001 -- a configuration that fails here is not pinned
                continue
        if not times:
            at.cache[key] = picked
            continue
        best = min(times, key=times.get)
        at.cache[key] = best
        if pinned_before is None:
            pinned_before = {}
            at._tritonforge_pinned = pinned_before
        pinned_before[key] = best
        notes.append({"kernel": name, "picked": str(picked), "pinned": str(best), "tried": len(times),
                      "picked_ms": times.get(picked), "pinned_ms": times[best]})
    return notes

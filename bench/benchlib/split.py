"""The real corpus's two halves (issue 35, "Train and test"): every kernel of bench/real/ is in
the tuning half or in the evaluation half, fixed by a hash of its source file and its name.

  half_of(name, blob)   -> "tuning" | "evaluation"
  halves(manifest)      -> {kernel name: half}, in manifest order
  names_in(manifest, half) -> the kernel names of one half, in manifest order

The rule: sha256 of "tritonforge.real-split/1\\n" + BLOB + "\\n" + NAME, where BLOB is the git
blob id of the kernel's source file at its pinned commit (the manifest's `blob`) and NAME the
task's name; the kernel is in the tuning half when the digest's last byte is even, in the
evaluation half when it is odd. Nobody picks a kernel's half: it follows from the file, and it
changes only when the kernel is pinned to another version of its file (a new blob). Two tasks
on one file (a forward and its backward) are hashed apart by their names.

Rules, priors and passes are developed and tuned on the tuning half only; the evaluation half
is run to report, never to decide what tritonforge does. A kernel that lands in the evaluation
half is not moved to balance the halves: the corpus grows instead.

Pure Python, no torch: bench/run, bench/real/status.py, bench/merge_real.py and the CPU tests
use it.
"""

import hashlib

TUNING = "tuning"
EVALUATION = "evaluation"
HALVES = (TUNING, EVALUATION)
SALT = "tritonforge.real-split/1"


def half_of(name, blob):
    """The half of the kernel NAME whose source file is the git blob BLOB."""
    digest = hashlib.sha256(f"{SALT}\n{blob}\n{name}".encode()).digest()
    return TUNING if digest[-1] % 2 == 0 else EVALUATION


def halves(manifest):
    """{kernel name: half} for every kernel of the manifest, in its order."""
    return {k.name: half_of(k.name, k.blob) for k in manifest.kernels}


def names_in(manifest, half):
    if half not in HALVES:
        raise ValueError(f"no half '{half}' (expected {' or '.join(HALVES)})")
    return [n for n, h in halves(manifest).items() if h == half]

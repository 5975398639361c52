#!/usr/bin/env python3
"""bench/census/layout.py: lays out the census corpus's files (bench/census/manifest.toml).

For every repository of the manifest: finds a git directory holding the pinned commit (a
local one, or a clone made here) and copies the listed files at that commit into
DEST/REPO/PATH (default bench/census/src/, ignored by git), checking each file's git blob id,
then writes DEST/LAYOUT.json. The work is bench/real/layout.py's (imported): the same
sources of git directories, the same checks.

  python3 bench/census/layout.py [--mirror DIR] [--git-dir REPO=PATH ...] [--clone-dir DIR]
                                 [--dest DIR] [--only REPO,...] [--no-clone]

Where each repository comes from, first match wins: --git-dir REPO=PATH; then
$TRITONFORGE_REAL_GIT_<REPO>; then --mirror DIR / $TRITONFORGE_REAL_MIRROR (DIR/OWNER+NAME/repo,
DIR/OWNER+NAME, DIR/OWNER/NAME(.git)); otherwise a clone of the url into --clone-dir (default
bench/census/.clones/, ignored), fetching only the pinned commit where the server allows it.
Exit codes: 0 done; 1 git or a clone failed, or a file's id differs from the manifest; 2 a bad
manifest or flag.
"""

import importlib.util
import os
import sys

CENSUS_DIR = os.path.dirname(os.path.abspath(__file__))
BENCH_DIR = os.path.dirname(CENSUS_DIR)
sys.path.insert(0, BENCH_DIR)

from benchlib import census, real  # noqa: E402


def _real_layout():
    spec = importlib.util.spec_from_file_location("real_layout", os.path.join(BENCH_DIR, "real", "layout.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    p = _real_layout().argument_parser("bench/census/layout.py", __doc__, census.MANIFEST, census.SRC_DIR,
                                       "where to lay the files out (default bench/census/src)",
                                       os.path.join(CENSUS_DIR, ".clones"))
    args = p.parse_args()
    try:
        repos = census.load_manifest(args.manifest)
    except real.ManifestError as exc:
        print(f"layout: {exc}", file=sys.stderr)
        return 2
    return _real_layout().lay_out([(r.key, r) for r in repos], args)


if __name__ == "__main__":
    sys.exit(main())

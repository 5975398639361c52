#!/usr/bin/env python3
"""bench/census/make_manifest.py: picks the census corpus and writes bench/census/manifest.toml.

For each project of PROJECTS: lists the Python files under its chosen folders that hold a
`@triton.jit` (or `@jit` from triton) kernel at the pinned commit of a local git directory
(a `fetch` mirror, a clone), drops tests, benchmarks, other back-ends' ports and files whose
header names another license than the project's, and takes COUNT of them spread evenly over the sorted paths (the
same every time). Writes each file's git blob id, so that bench/census/layout.py can check
what it lays out.

  python3 bench/census/make_manifest.py --mirror DIR [--out bench/census/manifest.toml]

DIR holds OWNER+NAME/repo (or OWNER+NAME, OWNER/NAME) git directories; the commit taken is
that directory's HEAD unless PROJECTS pins one. Exit codes: 0 written; 1 git failed or a
project has no git directory; 2 bad flags.
"""

import argparse
import os
import re
import subprocess
import sys

CENSUS_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(CENSUS_DIR))

from benchlib import real  # noqa: E402

# key, OWNER/NAME, SPDX license, folders to take files from, how many files.
PROJECTS = [
    ("liger", "linkedin/Liger-Kernel", "BSD-2-Clause", ["src/liger_kernel/ops"], 30),
    ("fla", "fla-org/flash-linear-attention", "MIT", ["fla/ops", "fla/modules"], 35),
    ("flaggems", "FlagOpen/FlagGems", "Apache-2.0", ["src/flag_gems/ops", "src/flag_gems/fused"], 35),
    ("lightllm", "ModelTC/lightllm", "Apache-2.0", ["lightllm"], 30),
    ("lmdeploy", "InternLM/lmdeploy", "Apache-2.0", ["lmdeploy/pytorch/kernels"], 20),
    ("linghe", "inclusionAI/linghe", "MIT", ["linghe"], 15),
    ("mamba", "state-spaces/mamba", "Apache-2.0", ["mamba_ssm/ops/triton"], 12),
    ("attorch", "BobMcDear/attorch", "MIT", ["attorch"], 12),
    ("kernl", "ELS-RD/kernl", "Apache-2.0", ["src/kernl", "experimental"], 12),
    ("unsloth", "unslothai/unsloth", "Apache-2.0", ["unsloth/kernels"], 8),
    ("xformers", "facebookresearch/xformers", "BSD-3-Clause", ["xformers"], 5),
    ("triton_kernels", "triton-lang/kernels", "MIT", ["kernels"], 5),
]

KERNEL = re.compile(rb"^\s*@(triton\.)?jit\b", re.M)
# Tests, benchmarks, and ports to other back-ends (Liger's and fla's `backends/` hold Ascend NPU
# versions of their CUDA kernels): the corpus is what runs on NVIDIA GPUs.
SKIP_PARTS = {"test", "tests", "benchmark", "benchmarks", "bench", "examples", "docs", "backends"}
# A file's own header naming a copyleft license: not for this corpus (unsloth's MoE kernels are AGPL).
OTHER_LICENSE = re.compile(rb"GNU|GPL", re.I)


def git(git_dir, *args, binary=False):
    r = subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True)
    if r.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} in {git_dir}: {r.stderr.decode(errors='replace').strip()[:300]}")
    return r.stdout if binary else r.stdout.decode()


def find_git_dir(mirrors, owner_name):
    owner, name = owner_name.split("/")
    for m in mirrors:
        for sub in (f"{owner}+{name}/repo", f"{owner}+{name}", f"{owner}/{name}", f"{owner}/{name}.git"):
            p = os.path.join(m, sub)
            if os.path.isdir(os.path.join(p, "objects")) or os.path.isdir(os.path.join(p, ".git")):
                return p if os.path.isdir(os.path.join(p, "objects")) else os.path.join(p, ".git")
    return None


def spread(items, count):
    """`count` of `items`, evenly spaced (all of them when there are fewer)."""
    if len(items) <= count:
        return list(items)
    return [items[(i * len(items)) // count] for i in range(count)]


def candidates(git_dir, commit, folders):
    out = []
    for line in git(git_dir, "ls-tree", "-r", commit, "--", *folders).splitlines():
        meta, path = line.split("\t", 1)
        mode, kind, blob = meta.split()
        if kind != "blob" or mode == "120000" or not path.endswith(".py"):
            continue
        parts = path.split("/")
        if SKIP_PARTS & set(parts[:-1]) or parts[-1].startswith("test_") or parts[-1] == "__init__.py":
            continue
        data = git(git_dir, "cat-file", "blob", blob, binary=True)
        if not KERNEL.search(data) or b"triton" not in data:
            continue
        if OTHER_LICENSE.search(b"\n".join(data.splitlines()[:40])):
            continue
        out.append((path, blob, len(KERNEL.findall(data))))
    return sorted(out)


FROM_IMPORT = re.compile(rb"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+\(?([\w, \t]+)", re.M)
PLAIN_IMPORT = re.compile(rb"^[ \t]*import[ \t]+([\w.]+)", re.M)


def support_files(git_dir, commit, chosen):
    """The files laid out beside the chosen ones, not censused: the `__init__.py` of each chosen
    file's package folders, and the modules of its package it imports that define @triton.jit
    functions (helpers such as FlagGems' `tle.program_id`), with their folders' `__init__.py`.
    `tritonforge census` then follows those imports as it would in an installed package."""
    tree = {}
    for line in git(git_dir, "ls-tree", "-r", commit).splitlines():
        meta, path = line.split("\t", 1)
        mode, kind, blob = meta.split()
        if kind == "blob" and mode != "120000":
            tree[path] = blob

    def package_dirs(path):
        """The folders above `path` that are packages, innermost first."""
        out, d = [], os.path.dirname(path)
        while d and f"{d}/__init__.py" in tree:
            out.append(d)
            d = os.path.dirname(d)
        return out

    have = {p for p, _, _ in chosen}
    extra = {}

    def add_inits(path):
        for d in package_dirs(path):
            init = f"{d}/__init__.py"
            if init not in have:
                extra[init] = tree[init]

    for path, blob, _ in chosen:
        add_inits(path)
        dirs = package_dirs(path)
        if not dirs:
            continue
        root = os.path.dirname(dirs[-1])  # the folder that holds the top package
        data = git(git_dir, "cat-file", "blob", blob, binary=True)
        modules = []
        for dots, mod, names in FROM_IMPORT.findall(data):
            mod, dots = mod.decode(), len(dots)
            if dots:
                base = os.path.dirname(path)
                for _ in range(dots - 1):
                    base = os.path.dirname(base)
                prefix = os.path.join(base, *mod.split(".")) if mod else base
            else:
                prefix = os.path.join(root, *mod.split("."))
            modules.append(prefix)
            modules += [os.path.join(prefix, n.strip()) for n in names.decode().split(",") if n.strip()]
        modules += [os.path.join(root, *m.decode().split(".")) for m in PLAIN_IMPORT.findall(data)]
        for m in modules:
            f = m.replace(os.sep, "/") + ".py"
            if f in tree and f not in have and f not in extra:
                if KERNEL.search(git(git_dir, "cat-file", "blob", tree[f], binary=True)):
                    extra[f] = tree[f]
                    add_inits(f)
    return sorted(extra.items())


def toml_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main():
    p = argparse.ArgumentParser(prog="bench/census/make_manifest.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--mirror", action="append", default=[], required=True, help="a folder of git directories")
    p.add_argument("--out", default=os.path.join(CENSUS_DIR, "manifest.toml"))
    args = p.parse_args()
    lines = [
        "# The census corpus (docs/census.md): Python files with @triton.jit kernels from public projects,",
        "# on which `tritonforge census` tries every transformation pass. Written by",
        "# bench/census/make_manifest.py (which files, and why); laid out by bench/census/layout.py into",
        "# bench/census/src/KEY/PATH (ignored by git), each file checked against its git blob id.",
        "# Nothing of these projects is committed here. thunlp/TritonBench is never part of it.",
        "#",
        "# [repos.KEY]  url, commit (pinned), license (SPDX, the project's), files = [{path, blob}],",
        "#              support = [{path, blob}] (laid out beside the files, not censused: their",
        "#              packages' __init__.py and the modules of @triton.jit helpers they import)",
        "",
        'schema = "tritonforge.census-manifest/1"',
    ]
    total = 0
    for key, owner_name, lic, folders, count in PROJECTS:
        if owner_name.lower() in real.EXCLUDED_REPOS:
            print(f"make_manifest: {owner_name} may not be part of the corpus", file=sys.stderr)
            return 2
        git_dir = find_git_dir(args.mirror, owner_name)
        if git_dir is None:
            print(f"make_manifest: no git directory of {owner_name} under {', '.join(args.mirror)}", file=sys.stderr)
            return 1
        commit = git(git_dir, "rev-parse", "HEAD").strip()
        found = candidates(git_dir, commit, folders)
        chosen = spread(found, count)
        total += len(chosen)
        kernels = sum(k for _, _, k in chosen)
        print(f"{key}: {len(chosen)} of {len(found)} files, {kernels} decorated kernels, at {commit[:12]}")
        lines += ["", f"[repos.{key}]", f"url = {toml_str('https://github.com/' + owner_name)}",
                  f"commit = {toml_str(commit)}", f"license = {toml_str(lic)}", "files = ["]
        lines += [f"  {{ path = {toml_str(path)}, blob = {toml_str(blob)} }}," for path, blob, _ in chosen]
        lines.append("]")
        support = support_files(git_dir, commit, chosen)
        if support:
            print(f"{key}: {len(support)} support files (package __init__.py, modules of imported @triton.jit helpers)")
            lines.append("support = [")
            lines += [f"  {{ path = {toml_str(path)}, blob = {toml_str(blob)} }}," for path, blob in support]
            lines.append("]")
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{total} files from {len(PROJECTS)} projects -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

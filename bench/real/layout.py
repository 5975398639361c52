#!/usr/bin/env python3
"""bench/real/layout.py: lays out the real-kernel corpus's third-party sources.

For every repository of bench/real/manifest.toml: finds a git directory holding the pinned
commit (a local one, or a clone made here), and copies the listed files and package folders
at that commit into DEST/REPO/PATH (default bench/real/src/, ignored by git), checking each
file's git blob id (and each folder's tree id) against the manifest, then writes the shims
(empty package markers of ours, where the project's __init__.py would import the whole
project) and DEST/LAYOUT.json (what was laid out, from where).

  python3 bench/real/layout.py [--mirror DIR] [--git-dir REPO=PATH ...] [--clone-dir DIR]
                               [--dest DIR] [--only REPO,...] [--pythonpath]

Where each repository comes from, first match wins:
  --git-dir REPO=PATH                    a git directory (bare or not) of that repository
  $TRITONFORGE_REAL_GIT_<REPO>           the same, from the environment (REPO upper-case)
  --mirror DIR / $TRITONFORGE_REAL_MIRROR  DIR/OWNER+NAME/repo, DIR/OWNER+NAME, DIR/OWNER/NAME(.git)
  otherwise                              git clone of the manifest's url into --clone-dir
                                         (default bench/real/.clones/, ignored), fetching only
                                         the pinned commit where the server allows it

--pythonpath prints the laid-out package roots, ':'-joined (for PYTHONPATH), and lays out nothing.
Exit codes: 0 done; 1 git or a clone failed, or a file's id differs from the manifest;
2 a bad manifest or flag.
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH_DIR)

from benchlib import real  # noqa: E402

SHIM_TEXT = "# Package marker written by tritonforge's bench/real/layout.py in place of the project's own.\n"


class LayoutError(Exception):
    """A repository could not be laid out as the manifest says (exit 1)."""


def git(git_dir, *args, binary=False):
    r = subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True)
    if r.returncode != 0:
        raise LayoutError(f"git {' '.join(args)} in {git_dir}: {r.stderr.decode(errors='replace').strip()[:300]}")
    return r.stdout if binary else r.stdout.decode().strip()


def blob_id(data):
    """git's id of a blob with these bytes (git hash-object)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def resolve_git_dir(path):
    """The git directory of a bare repository or of a work tree, or None."""
    if not os.path.isdir(path):
        return None
    if os.path.isdir(os.path.join(path, ".git")):
        return os.path.join(path, ".git")
    if os.path.exists(os.path.join(path, "HEAD")) and os.path.isdir(os.path.join(path, "objects")):
        return path
    return None


def has_commit(git_dir, commit):
    r = subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "-e", f"{commit}^{{commit}}"],
                       capture_output=True)
    return r.returncode == 0


def candidates(repo, args):
    owner, name = repo.owner_name
    explicit = dict(args.git_dir)
    if repo.key in explicit:
        yield explicit[repo.key], "--git-dir"
    env = os.environ.get(f"TRITONFORGE_REAL_GIT_{repo.key.upper()}")
    if env:
        yield env, f"$TRITONFORGE_REAL_GIT_{repo.key.upper()}"
    for mirror in args.mirror:
        for sub in (f"{owner}+{name}/repo", f"{owner}+{name}", f"{owner}/{name}", f"{owner}/{name}.git"):
            yield os.path.join(mirror, sub), f"mirror {mirror}"


def clone(repo, clone_dir):
    """A bare clone holding the pinned commit: fetch that commit alone when the server allows
    it (GitHub does), else the whole history."""
    git_dir = os.path.join(clone_dir, f"{repo.key}.git")
    if not resolve_git_dir(git_dir):
        os.makedirs(clone_dir, exist_ok=True)
        r = subprocess.run(["git", "init", "--bare", "-q", git_dir], capture_output=True, text=True)
        if r.returncode != 0:
            raise LayoutError(f"git init {git_dir}: {r.stderr.strip()}")
    if has_commit(git_dir, repo.commit):
        return git_dir
    for fetch in (["fetch", "-q", "--depth", "1", repo.url, repo.commit], ["fetch", "-q", repo.url]):
        r = subprocess.run(["git", f"--git-dir={git_dir}", *fetch], capture_output=True, text=True)
        if r.returncode == 0 and has_commit(git_dir, repo.commit):
            return git_dir
    raise LayoutError(f"{repo.key}: could not fetch {repo.commit} from {repo.url}: "
                      f"{(r.stderr or 'the commit is not in the fetched history').strip()[:300]}")


def find_git_dir(repo, args):
    tried = []
    for path, how in candidates(repo, args):
        git_dir = resolve_git_dir(path)
        if git_dir is None:
            continue
        if has_commit(git_dir, repo.commit):
            return git_dir, how
        tried.append(f"{path} ({how}) lacks {repo.commit[:12]}")
    if args.no_clone:
        raise LayoutError(f"{repo.key}: no local git directory holds {repo.commit[:12]}"
                          + (f" ({'; '.join(tried)})" if tried else "") + " and --no-clone was given")
    return clone(repo, args.clone_dir), f"clone of {repo.url}"


def write_file(dest, rel, data):
    path = os.path.join(dest, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def layout_repo(repo, args):
    git_dir, how = find_git_dir(repo, args)
    dest = os.path.join(args.dest, repo.key)
    if os.path.isdir(dest):
        shutil.rmtree(dest)
    written = []
    for path, blob in repo.files:
        try:
            actual = git(git_dir, "rev-parse", f"{repo.commit}:{path}")
        except LayoutError:
            raise LayoutError(f"{repo.key}: {path} does not exist at {repo.commit[:12]}") from None
        if actual != blob:
            raise LayoutError(f"{repo.key}: {path} at {repo.commit[:12]} is blob {actual}, the manifest says {blob}")
        data = git(git_dir, "cat-file", "blob", blob, binary=True)
        if blob_id(data) != blob:
            raise LayoutError(f"{repo.key}: the bytes read for {path} do not hash to {blob}")
        write_file(dest, path, data)
        written.append(path)
    for path, tree in repo.folders:
        actual = git(git_dir, "rev-parse", f"{repo.commit}:{path}")
        if actual != tree:
            raise LayoutError(f"{repo.key}: {path}/ at {repo.commit[:12]} is tree {actual}, the manifest says {tree}")
        for line in git(git_dir, "ls-tree", "-r", "--full-tree", tree).splitlines():
            meta, name = line.split("\t", 1)
            mode, kind, blob = meta.split()
            if kind != "blob" or mode == "120000":
                continue  # submodules and symbolic links are not laid out
            data = git(git_dir, "cat-file", "blob", blob, binary=True)
            if blob_id(data) != blob:
                raise LayoutError(f"{repo.key}: the bytes read for {path}/{name} do not hash to {blob}")
            write_file(dest, f"{path}/{name}", data)
            written.append(f"{path}/{name}")
    for path, _why in repo.shims:
        if path in written:
            raise LayoutError(f"{repo.key}: {path} is both laid out and a shim")
        write_file(dest, path, SHIM_TEXT.encode())
    size = sum(os.path.getsize(os.path.join(dest, p)) for p in written)
    return {"url": repo.url, "commit": repo.commit, "license": repo.license, "from": how,
            "files": sorted(written), "shims": [p for p, _ in repo.shims], "bytes": size}


def lay_out(repos, args):
    """Lays out `repos` ((key, repo) pairs) as the command line `args` ask (--git-dir, --mirror,
    --only, --dest, --manifest) and writes LAYOUT.json; the exit code. Shared with the census
    corpus's layout (bench/census/layout.py)."""
    keys = [k for k, _ in repos]
    pairs = []
    for item in args.git_dir:
        key, sep, path = item.partition("=")
        if not sep or key not in keys or not path:
            print(f"layout: --git-dir {item!r}: expected REPO=PATH with REPO one of {', '.join(keys)}",
                  file=sys.stderr)
            return 2
        pairs.append((key, path))
    args.git_dir = pairs
    env_mirror = os.environ.get("TRITONFORGE_REAL_MIRROR")
    if env_mirror:
        args.mirror.append(env_mirror)
    only = [k for k in args.only.split(",") if k]
    unknown = [k for k in only if k not in keys]
    if unknown:
        print(f"layout: --only: no repository '{unknown[0]}' (known: {', '.join(keys)})", file=sys.stderr)
        return 2
    if shutil.which("git") is None:
        print("layout: git is not installed", file=sys.stderr)
        return 1
    args.dest = os.path.abspath(args.dest)
    stamp_path = os.path.join(args.dest, "LAYOUT.json")
    stamp = {"manifest_sha256": None, "repos": {}}
    if only and os.path.exists(stamp_path):
        with open(stamp_path) as f:
            stamp = json.load(f)
    with open(args.manifest, "rb") as f:
        stamp["manifest_sha256"] = hashlib.sha256(f.read()).hexdigest()
    os.makedirs(args.dest, exist_ok=True)
    failed = False
    for key, repo in repos:
        if only and key not in only:
            continue
        try:
            info = layout_repo(repo, args)
        except LayoutError as exc:
            print(f"layout: {exc}", file=sys.stderr)
            stamp["repos"].pop(key, None)
            failed = True
            continue
        stamp["repos"][key] = info
        print(f"{key}: {len(info['files'])} files, {info['bytes'] / 1024:.0f} KiB at {repo.commit[:12]} "
              f"({info['from']})")
    with open(stamp_path, "w") as f:
        json.dump(stamp, f, indent=1, sort_keys=True)
        f.write("\n")
    return 1 if failed else 0


def argument_parser(prog, doc, manifest, dest, dest_help, clone_dir):
    """The options lay_out reads (shared with bench/census/layout.py)."""
    p = argparse.ArgumentParser(prog=prog, description=doc.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--manifest", default=manifest)
    p.add_argument("--dest", default=dest, help=dest_help)
    p.add_argument("--mirror", action="append", default=[],
                   help="a folder of local git directories (OWNER+NAME/repo, OWNER/NAME); repeatable")
    p.add_argument("--git-dir", action="append", default=[], metavar="REPO=PATH",
                   help="the git directory of one repository of the manifest; repeatable")
    p.add_argument("--clone-dir", default=clone_dir,
                   help="where clones are made when no local git directory has the commit")
    p.add_argument("--no-clone", action="store_true", help="never clone: fail when no local directory has it")
    p.add_argument("--only", default="", help="comma-separated repository keys (default: all)")
    return p


def main():
    p = argument_parser("bench/real/layout.py", __doc__, real.MANIFEST, real.SRC_DIR,
                        "where to lay the sources out (default bench/real/src)", os.path.join(real.REAL_DIR, ".clones"))
    p.add_argument("--pythonpath", action="store_true", help="print the package roots for PYTHONPATH and exit")
    args = p.parse_args()
    try:
        manifest = real.load_manifest(args.manifest)
    except real.ManifestError as exc:
        print(f"layout: {exc}", file=sys.stderr)
        return 2
    args.dest = os.path.abspath(args.dest)
    if args.pythonpath:
        print(os.pathsep.join(manifest.pythonpath(args.dest)))
        return 0
    return lay_out(list(manifest.repos.items()), args)

if __name__ == "__main__":
    sys.exit(main())

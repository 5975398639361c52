"""bench/real/layout.py on a small git repository made here: it copies the listed files and
folders at the pinned commit, checks every blob id, writes our shims and LAYOUT.json, and fails
with one line when a file's id differs, a commit is missing or the manifest is bad."""

import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest

from benchlib import real

LAYOUT = os.path.join(real.REAL_DIR, "layout.py")
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(cwd, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True, env=env).stdout.strip()


@pytest.fixture
def project(tmp_path):
    """A repository with a kernel file, a support file and a package folder; a second commit
    changes the kernel so that the pinned (first) commit is not the newest."""
    repo = tmp_path / "proj"
    (repo / "pkg" / "ops").mkdir(parents=True)
    (repo / "pkg" / "__init__.py").write_text("import everything_heavy\n")
    (repo / "pkg" / "ops" / "kern.py").write_text("VERSION = 1\n")
    (repo / "pkg" / "util.py").write_text("X = 2\n")
    (repo / "lib").mkdir()
    (repo / "lib" / "a.py").write_text("A = 1\n")
    (repo / "lib" / "b.py").write_text("B = 1\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "one")
    pinned = _git(repo, "rev-parse", "HEAD")
    blobs = {p: _git(repo, "rev-parse", f"HEAD:{p}") for p in ("pkg/ops/kern.py", "pkg/util.py")}
    tree = _git(repo, "rev-parse", "HEAD:lib")
    (repo / "pkg" / "ops" / "kern.py").write_text("VERSION = 2\n")
    _git(repo, "commit", "-q", "-am", "two")
    return repo, pinned, blobs, tree


def _manifest(tmp_path, pinned, blobs, tree, kernel_blob=None):
    text = f'''schema = "tritonforge.real-manifest/1"
[repos.proj]
url = "https://github.com/someone/proj"
commit = "{pinned}"
license = "MIT"
python_root = "."
files = [ {{ path = "pkg/util.py", blob = "{blobs['pkg/util.py']}" }} ]
folders = [ {{ path = "lib", tree = "{tree}" }} ]
shims = [ {{ path = "pkg/__init__.py", why = "imports the whole project" }} ]

[[kernels]]
name = "k"
repo = "proj"
path = "pkg/ops/kern.py"
blob = "{kernel_blob or blobs['pkg/ops/kern.py']}"
launcher = "f"
jit = ["kern"]
category = "softmax"
pattern = "plain function"
description = "test"
'''
    p = tmp_path / "manifest.toml"
    p.write_text(text)
    return str(p)


def _layout(manifest, dest, *extra):
    return subprocess.run([sys.executable, LAYOUT, "--manifest", manifest, "--dest", str(dest), "--no-clone", *extra],
                          capture_output=True, text=True, timeout=120)


def test_lays_out_the_pinned_files_and_shims(tmp_path, project):
    repo, pinned, blobs, tree = project
    manifest = _manifest(tmp_path, pinned, blobs, tree)
    dest = tmp_path / "src"
    r = _layout(manifest, dest, "--git-dir", f"proj={repo}")
    assert r.returncode == 0, r.stderr
    assert (dest / "proj" / "pkg" / "ops" / "kern.py").read_text() == "VERSION = 1\n"   # the pinned commit's
    assert (dest / "proj" / "pkg" / "util.py").read_text() == "X = 2\n"
    assert (dest / "proj" / "lib" / "b.py").read_text() == "B = 1\n"
    shim = (dest / "proj" / "pkg" / "__init__.py").read_text()
    assert "everything_heavy" not in shim and shim.startswith("#")
    stamp = json.loads((dest / "LAYOUT.json").read_text())
    assert stamp["repos"]["proj"]["commit"] == pinned
    assert stamp["repos"]["proj"]["files"] == ["lib/a.py", "lib/b.py", "pkg/ops/kern.py", "pkg/util.py"]
    with open(manifest, "rb") as f:
        assert stamp["manifest_sha256"] == hashlib.sha256(f.read()).hexdigest()


def test_finds_a_mirror_by_owner_and_name(tmp_path, project):
    repo, pinned, blobs, tree = project
    mirror = tmp_path / "mirror"
    (mirror / "someone+proj").mkdir(parents=True)
    shutil.copytree(repo / ".git", mirror / "someone+proj" / "repo")
    r = _layout(_manifest(tmp_path, pinned, blobs, tree), tmp_path / "src", "--mirror", str(mirror))
    assert r.returncode == 0, r.stderr
    assert "mirror" in r.stdout


def test_a_blob_that_differs_fails_with_one_line(tmp_path, project):
    repo, pinned, blobs, tree = project
    manifest = _manifest(tmp_path, pinned, blobs, tree, kernel_blob="0" * 40)
    r = _layout(manifest, tmp_path / "src", "--git-dir", f"proj={repo}")
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "pkg/ops/kern.py" in lines[0] and "the manifest says " + "0" * 40 in lines[0]


def test_no_local_commit_and_no_clone_fails(tmp_path, project):
    repo, pinned, blobs, tree = project
    r = _layout(_manifest(tmp_path, "f" * 40, blobs, tree), tmp_path / "src", "--git-dir", f"proj={repo}")
    assert r.returncode == 1
    assert "no local git directory holds ffffffffffff" in r.stderr


def test_bad_manifest_and_flags_exit_2(tmp_path, project):
    repo, pinned, blobs, tree = project
    bad = tmp_path / "bad.toml"
    bad.write_text('schema = "tritonforge.real-manifest/1"\nrepos = 3\nkernels = []\n')
    r = _layout(str(bad), tmp_path / "src")
    assert r.returncode == 2 and "key 'repos' must be a dict" in r.stderr
    r = _layout(_manifest(tmp_path, pinned, blobs, tree), tmp_path / "src", "--git-dir", "nosuch=/x")
    assert r.returncode == 2 and "--git-dir 'nosuch=/x'" in r.stderr


def test_pythonpath_lists_the_package_roots(tmp_path, project):
    repo, pinned, blobs, tree = project
    r = _layout(_manifest(tmp_path, pinned, blobs, tree), tmp_path / "src", "--pythonpath")
    assert r.returncode == 0
    assert r.stdout.strip() == str(tmp_path / "src" / "proj")

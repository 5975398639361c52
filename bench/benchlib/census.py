"""The census corpus (bench/census/, docs/census.md): its manifest and where its files are laid
out. Pure Python, no torch: bench/census/layout.py, bench/census/run.py and the CPU tests use it.

  load_manifest(path) -> [real.Repo] (validated; real.ManifestError names the file and the key)
  source_path(repo, path, dest) where a listed file is laid out

The manifest's repositories have the shape of the real-kernel corpus's (bench/benchlib/real.py),
so bench/real/layout.py lays them out; the census lists files only (no tasks, no packages).
A repository's `files` are censused; its `support` files (the `__init__.py` of their package's
folders, the package modules of @triton.jit helpers they import) are laid out beside them, so
that `tritonforge census` follows those imports as it does in an installed package, and are not
censused themselves. Repo.files holds both, Repo.censused the first.
"""

import os
import tomllib

from benchlib import real

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CENSUS_DIR = os.path.join(BENCH_DIR, "census")
MANIFEST = os.path.join(CENSUS_DIR, "manifest.toml")
SRC_DIR = os.path.join(CENSUS_DIR, "src")

SCHEMA = "tritonforge.census-manifest/1"


def _fail(path, msg):
    raise real.ManifestError(f"{path}: {msg}")


def load_manifest(path=MANIFEST):
    """The repositories of a census manifest, in file order."""
    try:
        with open(path, "rb") as f:
            doc = tomllib.load(f)
    except FileNotFoundError:
        raise real.ManifestError(f"{path}: no such file") from None
    except tomllib.TOMLDecodeError as exc:
        raise real.ManifestError(f"{path}: not valid TOML: {exc}") from None
    real._unknown(doc, {"schema", "repos"}, path, "")
    if doc.get("schema") != SCHEMA:
        _fail(path, f"key 'schema' must be '{SCHEMA}', not {doc.get('schema')!r}")
    repos = []
    for key, t in real._req(doc, "repos", dict, path, "").items():
        where = f"repos.{key}."
        if not real._KEY.match(key):
            _fail(path, f"repository key '{key}' must be lower-case letters, digits and '_'")
        if not isinstance(t, dict):
            _fail(path, f"key 'repos.{key}' must be a table")
        real._unknown(t, {"url", "commit", "license", "files", "support"}, path, where)
        url = real._req(t, "url", str, path, where)
        m = real._URL.match(url)
        if not m:
            _fail(path, f"key '{where}url' must be https://github.com/OWNER/NAME, not '{url}'")
        if f"{m.group(1)}/{m.group(2)}".lower() in real.EXCLUDED_REPOS:
            _fail(path, f"key '{where}url': {m.group(1)}/{m.group(2)} is kept apart for independent "
                        "evaluation and may not be part of this corpus")
        commit = real._req(t, "commit", str, path, where)
        if not real._SHA1.match(commit):
            _fail(path, f"key '{where}commit' must be a full 40-digit commit id, not '{commit}'")
        lic = real._req(t, "license", str, path, where)
        if lic not in real.LICENSES:
            _fail(path, f"key '{where}license': '{lic}' is not one of {', '.join(sorted(real.LICENSES))}")
        files, seen = [], set()
        listed = [("files", i, e) for i, e in enumerate(real._req(t, "files", list, path, where))]
        support = t.get("support", [])
        if not isinstance(support, list):
            _fail(path, f"key '{where}support' must be an array")
        listed += [("support", i, e) for i, e in enumerate(support)]
        censused = []
        for field, i, e in listed:
            fw = f"{where}{field}[{i}]."
            if not isinstance(e, dict):
                _fail(path, f"key '{where}{field}[{i}]' must be a table")
            real._unknown(e, {"path", "blob"}, path, fw)
            p = real._rel_path(real._req(e, "path", str, path, fw), path, fw + "path")
            b = real._req(e, "blob", str, path, fw)
            if not real._SHA1.match(b):
                _fail(path, f"key '{fw}blob' must be a 40-digit git blob id, not '{b}'")
            if p in seen:
                _fail(path, f"key '{fw}path': '{p}' is listed twice")
            seen.add(p)
            files.append((p, b))
            if field == "files":
                censused.append((p, b))
        repo = real.Repo(key, url, commit, lic, None, files, [], [])
        repo.censused = censused  # the files the census runs on; the others are laid out beside them
        repos.append(repo)
    return repos


def source_path(repo, path, dest=SRC_DIR):
    return os.path.join(dest, repo.key, path)

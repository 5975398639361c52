"""The real-kernel corpus (bench/real/): its manifest, where its sources are laid out, and its
tasks. Pure Python, no torch: bench/run, bench/real/layout.py and the CPU tests use it.

  load_manifest(path)   -> Manifest (validated; ManifestError names the file and the key)
  Manifest.pythonpath(dest) the folders to put on PYTHONPATH once the sources are laid out
  load_real_spec(name)  -> RealSpec (a task of bench/real/tasks/NAME/)

Third-party code is never part of the repository: only the manifest says where each kernel
lives. The sources are laid out by bench/real/layout.py into bench/real/src/ (ignored by git).
"""

import os
import re
import tomllib

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REAL_DIR = os.path.join(BENCH_DIR, "real")
MANIFEST = os.path.join(REAL_DIR, "manifest.toml")
TASKS_DIR = os.path.join(REAL_DIR, "tasks")
SRC_DIR = os.path.join(REAL_DIR, "src")

SCHEMA = "tritonforge.real-manifest/1"
# Licenses that allow running (and studying) the code; anything else is refused.
LICENSES = {"MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause"}
# Kept apart for independent evaluation: never part of this corpus.
EXCLUDED_REPOS = ("thunlp/tritonbench",)
CATEGORIES = {
    "layer-norm", "rms-norm", "group-norm", "softmax", "cross-entropy", "rotary", "swiglu", "geglu",
    "linear-activation", "attention", "convolution", "quantized-matmul", "embedding", "gather", "topk",
    "argmax", "transpose", "reduction",
    # Added with the tuning / evaluation split (issue 35 item 6): the rest of an LLM's kernels.
    "matmul", "kv-cache", "moe-routing", "moe", "quantization", "scan", "sampling", "loss", "activation",
    "batch-norm",
}
_SHA1 = re.compile(r"^[0-9a-f]{40}$")
_KEY = re.compile(r"^[a-z][a-z0-9_]*$")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_URL = re.compile(r"^https://github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(\.git)?$")


class ManifestError(ValueError):
    """Bad manifest: one line naming the file and the key."""


class Repo:
    def __init__(self, key, url, commit, license, python_root, files, folders, shims):
        self.key = key
        self.url = url
        self.commit = commit
        self.license = license
        self.python_root = python_root
        self.files = files        # [(path, blob)]: support files and every kernel's source
        self.folders = folders    # [(path, tree)]
        self.shims = shims        # [(path, why)]

    @property
    def owner_name(self):
        m = _URL.match(self.url)
        return m.group(1), m.group(2)


class Kernel:
    def __init__(self, entry):
        self.name = entry["name"]
        self.repo = entry["repo"]
        self.path = entry["path"]
        self.blob = entry["blob"]
        self.launcher = entry["launcher"]
        self.jit = list(entry["jit"])
        self.category = entry["category"]
        self.pattern = entry["pattern"]
        self.description = entry["description"]


class Manifest:
    def __init__(self, path, repos, kernels):
        self.path = path
        self.repos = repos          # {key: Repo}
        self.kernels = kernels      # [Kernel], in manifest order

    def kernel(self, name):
        for k in self.kernels:
            if k.name == name:
                return k
        raise LookupError(f"{self.path}: no kernel '{name}'")

    def pythonpath(self, dest=SRC_DIR):
        """The laid-out package roots, as an installed package would put them on sys.path."""
        out = []
        for repo in self.repos.values():
            if repo.python_root is not None:
                out.append(os.path.normpath(os.path.join(dest, repo.key, repo.python_root)))
        return out

    def source_path(self, kernel, dest=SRC_DIR):
        return os.path.join(dest, kernel.repo, kernel.path)

    def module_name(self, kernel):
        """The import name real code uses for the kernel's file, or None where the file stands
        alone (its repository has no python_root)."""
        root = self.repos[kernel.repo].python_root
        if root is None:
            return None
        rel = kernel.path if root == "." else os.path.relpath(kernel.path, root)
        if rel.startswith(".."):
            return None
        return os.path.splitext(rel)[0].replace(os.sep, ".").replace("/", ".")


def _fail(path, msg):
    raise ManifestError(f"{path}: {msg}")


def _req(table, key, kind, path, where):
    if key not in table:
        _fail(path, f"missing key '{where}{key}'")
    v = table[key]
    if not isinstance(v, kind):
        _fail(path, f"key '{where}{key}' must be a {kind.__name__}, not {type(v).__name__}")
    return v


def _rel_path(p, path, where):
    if not p or p.startswith("/") or ".." in p.split("/") or "\\" in p:
        _fail(path, f"key '{where}' must be a relative path inside the repository, not '{p}'")
    return p


def _unknown(table, known, path, where):
    extra = sorted(set(table) - set(known))
    if extra:
        _fail(path, f"unknown key '{where}{extra[0]}' (known: {', '.join(sorted(known))})")


def load_manifest(path=MANIFEST):
    try:
        with open(path, "rb") as f:
            doc = tomllib.load(f)
    except FileNotFoundError:
        raise ManifestError(f"{path}: no such file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"{path}: not valid TOML: {exc}") from None
    _unknown(doc, {"schema", "repos", "kernels"}, path, "")
    if doc.get("schema") != SCHEMA:
        _fail(path, f"key 'schema' must be '{SCHEMA}', not {doc.get('schema')!r}")
    repos = {}
    for key, t in _req(doc, "repos", dict, path, "").items():
        where = f"repos.{key}."
        if not _KEY.match(key):
            _fail(path, f"repository key '{key}' must be lower-case letters, digits and '_'")
        if not isinstance(t, dict):
            _fail(path, f"key 'repos.{key}' must be a table")
        _unknown(t, {"url", "commit", "license", "python_root", "files", "folders", "shims"}, path, where)
        url = _req(t, "url", str, path, where)
        m = _URL.match(url)
        if not m:
            _fail(path, f"key '{where}url' must be https://github.com/OWNER/NAME, not '{url}'")
        if f"{m.group(1)}/{m.group(2)}".lower() in EXCLUDED_REPOS:
            _fail(path, f"key '{where}url': {m.group(1)}/{m.group(2)} is kept apart for independent "
                        "evaluation and may not be part of this corpus")
        commit = _req(t, "commit", str, path, where)
        if not _SHA1.match(commit):
            _fail(path, f"key '{where}commit' must be a full 40-digit commit id, not '{commit}'")
        lic = _req(t, "license", str, path, where)
        if lic not in LICENSES:
            _fail(path, f"key '{where}license': '{lic}' is not one of {', '.join(sorted(LICENSES))}")
        root = t.get("python_root")
        if root is not None:
            if not isinstance(root, str):
                _fail(path, f"key '{where}python_root' must be a string")
            if root != ".":
                _rel_path(root, path, where + "python_root")
        files = []
        for i, e in enumerate(t.get("files", [])):
            if not isinstance(e, dict):
                _fail(path, f"key '{where}files[{i}]' must be a table")
            _unknown(e, {"path", "blob"}, path, f"{where}files[{i}].")
            p = _rel_path(_req(e, "path", str, path, f"{where}files[{i}]."), path, f"{where}files[{i}].path")
            b = _req(e, "blob", str, path, f"{where}files[{i}].")
            if not _SHA1.match(b):
                _fail(path, f"key '{where}files[{i}].blob' must be a 40-digit git blob id, not '{b}'")
            files.append((p, b))
        folders = []
        for i, e in enumerate(t.get("folders", [])):
            if not isinstance(e, dict):
                _fail(path, f"key '{where}folders[{i}]' must be a table")
            _unknown(e, {"path", "tree"}, path, f"{where}folders[{i}].")
            p = _rel_path(_req(e, "path", str, path, f"{where}folders[{i}]."), path, f"{where}folders[{i}].path")
            tr = _req(e, "tree", str, path, f"{where}folders[{i}].")
            if not _SHA1.match(tr):
                _fail(path, f"key '{where}folders[{i}].tree' must be a 40-digit git tree id, not '{tr}'")
            folders.append((p, tr))
        shims = []
        for i, e in enumerate(t.get("shims", [])):
            if not isinstance(e, dict):
                _fail(path, f"key '{where}shims[{i}]' must be a table")
            _unknown(e, {"path", "why"}, path, f"{where}shims[{i}].")
            p = _rel_path(_req(e, "path", str, path, f"{where}shims[{i}]."), path, f"{where}shims[{i}].path")
            if os.path.basename(p) != "__init__.py":
                _fail(path, f"key '{where}shims[{i}].path': a shim is a package marker (__init__.py), not '{p}'")
            shims.append((p, _req(e, "why", str, path, f"{where}shims[{i}].")))
        repos[key] = Repo(key, url, commit, lic, root, files, folders, shims)
    kernels = []
    seen = set()
    for i, e in enumerate(_req(doc, "kernels", list, path, "")):
        where = f"kernels[{i}]."
        if not isinstance(e, dict):
            _fail(path, f"key 'kernels[{i}]' must be a table")
        _unknown(e, {"name", "repo", "path", "blob", "launcher", "jit", "category", "pattern", "description"},
                 path, where)
        for key in ("name", "repo", "path", "blob", "launcher", "category", "pattern", "description"):
            _req(e, key, str, path, where)
        _req(e, "jit", list, path, where)
        if not _NAME.match(e["name"]):
            _fail(path, f"key '{where}name' must be lower-case letters, digits and '_', not '{e['name']}'")
        if e["name"] in seen:
            _fail(path, f"key '{where}name': '{e['name']}' appears twice")
        seen.add(e["name"])
        if e["repo"] not in repos:
            _fail(path, f"key '{where}repo': no repository '{e['repo']}' in [repos]")
        _rel_path(e["path"], path, where + "path")
        if not _SHA1.match(e["blob"]):
            _fail(path, f"key '{where}blob' must be a 40-digit git blob id, not '{e['blob']}'")
        if e["category"] not in CATEGORIES:
            _fail(path, f"key '{where}category': '{e['category']}' is not one of {', '.join(sorted(CATEGORIES))}")
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$", e["launcher"]):
            _fail(path, f"key '{where}launcher' must be NAME or Class.method, not '{e['launcher']}'")
        kernels.append(Kernel(e))
        repo = repos[e["repo"]]
        if (e["path"], e["blob"]) not in repo.files:
            repo.files.append((e["path"], e["blob"]))
    # One path, one blob: two entries that disagree cannot both be laid out.
    for repo in repos.values():
        blobs = {}
        for p, b in repo.files:
            if blobs.setdefault(p, b) != b:
                _fail(path, f"repository '{repo.key}': '{p}' is listed with two blob ids")
    return Manifest(path, repos, kernels)


# ---------------------------------------------------------------------------------------
# Tasks


class RealSpec:
    """A real-corpus task, in the shape bench/run's measurement process expects."""

    def __init__(self, name, directory, task, kernel, manifest):
        self.name = name
        self.dir = directory
        self.task = task
        self.task_path = os.path.join(directory, "task.toml")
        self.source = os.path.normpath(os.path.join(directory, task["source"]))
        self.harness = os.path.join(directory, task["harness"])
        self.launcher = task["launcher"]
        self.cases = task["cases"]
        check = task.get("check", {})
        self.rtol = float(check.get("rtol", 1e-3))
        self.atol = float(check.get("atol", 1e-3))
        self.reference_precision = check.get("reference_precision", "float64")
        self.in_place = list(check.get("in_place", []))
        self.direction = task.get("direction", "forward")
        self.kernel = kernel
        self.module = manifest.module_name(kernel)
        self.pythonpath = manifest.pythonpath()

    def to_request(self):
        return {"name": self.name, "dir": self.dir, "source": self.source, "harness": self.harness,
                "launcher": self.launcher, "cases": self.cases, "rtol": self.rtol, "atol": self.atol,
                "reference_precision": self.reference_precision, "in_place": self.in_place,
                "direction": self.direction, "module": self.module, "pythonpath": self.pythonpath, "real": True}


def all_real_names(manifest=None):
    manifest = manifest or load_manifest()
    return [k.name for k in manifest.kernels]


def load_real_spec(name, manifest=None):
    manifest = manifest or load_manifest()
    kernel = manifest.kernel(name)
    directory = os.path.join(TASKS_DIR, name)
    path = os.path.join(directory, "task.toml")
    if not os.path.exists(path):
        raise LookupError(f"no real task '{name}' (no {path})")
    with open(path, "rb") as f:
        task = tomllib.load(f)
    if task.get("name") != name:
        raise ValueError(f"{path}: name is '{task.get('name')}', expected '{name}' (the folder's name)")
    expected = os.path.normpath(manifest.source_path(kernel))
    got = os.path.normpath(os.path.join(directory, task.get("source", "")))
    if got != expected:
        raise ValueError(f"{path}: source is {task.get('source')!r}, expected the laid-out file "
                         f"{os.path.relpath(expected, directory)}")
    if task.get("launcher") != kernel.launcher:
        raise ValueError(f"{path}: launcher is {task.get('launcher')!r}, the manifest says {kernel.launcher!r}")
    return RealSpec(name, directory, task, kernel, manifest)

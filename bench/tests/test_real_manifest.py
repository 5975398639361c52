"""The real-kernel corpus's manifest and tasks, checked without torch or a GPU: the corpus covers
the issue's categories with public kernels under licenses that allow running them, never from
thunlp/TritonBench; every manifest entry has its task (ours) pointing at the laid-out file;
bad manifests are refused with one line naming the file and the key."""

import ast
import os
import subprocess
import tomllib

import pytest

from benchlib import real

REPO = os.path.dirname(real.BENCH_DIR)
MANIFEST = real.load_manifest()
NAMES = [k.name for k in MANIFEST.kernels]


def test_corpus_size_and_coverage():
    assert len(NAMES) >= 62   # two halves of at least 30 (test_real_split.py)
    cats = {k.category for k in MANIFEST.kernels}
    # The list: norms (layer, RMS, group), softmax, cross-entropy, rotary, SwiGLU/GeGLU,
    # fused linear + activation, attention, convolution, quantized matmul, embedding or gather,
    # top-k or argmax, transpose, reductions.
    for needed in ("layer-norm", "rms-norm", "group-norm", "softmax", "cross-entropy", "rotary",
                   "linear-activation", "attention", "convolution", "quantized-matmul", "transpose", "reduction"):
        assert needed in cats, needed
    assert cats & {"swiglu", "geglu"} == {"swiglu", "geglu"}
    assert cats & {"embedding", "gather"}
    assert cats & {"topk", "argmax"}
    assert len(MANIFEST.repos) >= 6


def test_cross_entropy_and_softmax_span_llm_vocabularies():
    vocab = []
    for k in MANIFEST.kernels:
        if k.category in ("cross-entropy", "softmax"):
            # attorch's log-softmax runs over features (F), not a vocabulary.
            vocab += [c["V"] for c in real.load_real_spec(k.name, MANIFEST).cases if "V" in c]
    assert min(vocab) == 32000 and max(vocab) == 256000
    assert 128256 in vocab


def test_licenses_allow_running_and_tritonbench_is_absent():
    for repo in MANIFEST.repos.values():
        assert repo.license in real.LICENSES
        assert "tritonbench" not in repo.url.lower()
    with open(real.MANIFEST) as f:
        assert "github.com/thunlp" not in f.read().lower()


@pytest.mark.parametrize("name", NAMES)
def test_task_matches_the_manifest(name):
    spec = real.load_real_spec(name, MANIFEST)   # raises if source or launcher disagree
    assert spec.source == os.path.normpath(os.path.join(real.SRC_DIR, spec.kernel.repo, spec.kernel.path))
    assert len(spec.cases) >= 2, "at least two realistic cases"
    assert spec.launcher == spec.kernel.launcher
    tree = ast.parse(open(spec.harness).read())
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert {"make_inputs", "reference", "flops", "bytes"} <= defined
    assigned = {t.id: n.value for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
                if isinstance(t, ast.Name)}
    assert {"DEVICE", "PEAK", "SMALL_CASE"} <= set(assigned)
    assert ast.literal_eval(assigned["PEAK"]) in (None, "fp16", "bf16", "tf32", "int8", "fp8")
    assert set(ast.literal_eval(assigned["SMALL_CASE"])) == set(spec.cases[0])
    if "vendor" in defined:
        assert "VENDOR" in assigned, "a vendor op needs its name"
    check = spec.task.get("check", {})
    assert "rtol" in check and "atol" in check, "tolerances are reasoned in the task file"


def test_every_task_folder_is_in_the_manifest():
    folders = sorted(d for d in os.listdir(real.TASKS_DIR) if os.path.isdir(os.path.join(real.TASKS_DIR, d)))
    assert folders == sorted(NAMES)


def test_third_party_sources_are_ignored_by_git():
    r = subprocess.run(["git", "check-ignore", "-q", "bench/real/src/liger/LICENSE"], cwd=REPO)
    assert r.returncode == 0
    r = subprocess.run(["git", "ls-files", "bench/real/src"], cwd=REPO, capture_output=True, text=True)
    assert r.stdout == ""


def test_module_names_follow_the_python_root():
    assert MANIFEST.module_name(MANIFEST.kernel("liger_rms_norm")) == "liger_kernel.ops.rms_norm"
    assert MANIFEST.module_name(MANIFEST.kernel("attorch_conv2d")) == "attorch.conv_layer"
    assert MANIFEST.module_name(MANIFEST.kernel("tlk_cross_entropy")) is None
    roots = MANIFEST.pythonpath("/x")
    assert "/x/liger/src" in roots and "/x/attorch" in roots
    assert not any(r.startswith("/x/xformers") for r in roots)


# ---------------------------------------------------------------------------------------
# Bad manifests

GOOD_REPO = '''schema = "tritonforge.real-manifest/1"
[repos.a]
url = "https://github.com/o/a"
commit = "{commit}"
license = "{license}"
'''
GOOD_KERNEL = '''[[kernels]]
name = "k1"
repo = "a"
path = "k.py"
blob = "0123456789012345678901234567890123456789"
launcher = "f"
jit = ["kern"]
category = "softmax"
pattern = "plain function"
description = "one line"
'''


def _write(tmp_path, text):
    p = tmp_path / "m.toml"
    p.write_text(text)
    return str(p)


def _manifest(commit="a" * 40, license="MIT", kernel=GOOD_KERNEL, url=None):
    text = GOOD_REPO.format(commit=commit, license=license) + kernel
    if url:
        text = text.replace("https://github.com/o/a", url)
    return text


def test_a_good_manifest_loads(tmp_path):
    m = real.load_manifest(_write(tmp_path, _manifest()))
    assert [k.name for k in m.kernels] == ["k1"]
    assert m.repos["a"].files == [("k.py", "0123456789012345678901234567890123456789")]


@pytest.mark.parametrize("text, expected", [
    (_manifest(url="https://github.com/thunlp/TritonBench"), "kept apart for independent evaluation"),
    (_manifest(license="GPL-3.0"), "key 'repos.a.license': 'GPL-3.0' is not one of"),
    (_manifest(commit="abc"), "key 'repos.a.commit' must be a full 40-digit commit id"),
    (_manifest(kernel=GOOD_KERNEL.replace('category = "softmax"', 'category = "magic"')), "key 'kernels[0].category'"),
    (_manifest(kernel=GOOD_KERNEL.replace('repo = "a"', 'repo = "b"')), "no repository 'b'"),
    (_manifest(kernel=GOOD_KERNEL.replace('path = "k.py"', 'path = "../k.py"')), "key 'kernels[0].path' must be a relative path"),
    (_manifest(kernel=GOOD_KERNEL + 'colour = "red"\n'), "unknown key 'kernels[0].colour'"),
    (_manifest(kernel=GOOD_KERNEL.replace('launcher = "f"', 'launcher = "a.b.c"')), "key 'kernels[0].launcher'"),
    (_manifest(kernel=GOOD_KERNEL + GOOD_KERNEL), "'k1' appears twice"),
])
def test_bad_manifests_are_refused_naming_the_key(tmp_path, text, expected):
    path = _write(tmp_path, text)
    with pytest.raises(real.ManifestError) as err:
        real.load_manifest(path)
    assert str(err.value).startswith(path + ": ")
    assert expected in str(err.value)
    assert "\n" not in str(err.value)


def test_the_shipped_manifest_parses_as_toml():
    with open(real.MANIFEST, "rb") as f:
        doc = tomllib.load(f)
    assert doc["schema"] == real.SCHEMA

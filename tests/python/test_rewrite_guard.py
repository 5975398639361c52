"""The rewrite guard (python/tritonforge_worker/rewrite_guard.py): what a rewrite of the
module may do, and each way of cheating it refuses with a reason."""

import os

from tritonforge_worker.rewrite_guard import check_rewrite

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# An elementwise add with its launcher `add` (BLOCK=1024 at the launch).
with open(os.path.join(ROOT, "tests", "corpus", "vector_add.py")) as _f:
    ORIGINAL = _f.read()


def variant(old, new):
    assert old in ORIGINAL
    return ORIGINAL.replace(old, new)


def reasons(source):
    return check_rewrite(source, ORIGINAL, "add")


def test_an_honest_rewrite_passes():
    honest = variant("BLOCK=1024)", "BLOCK=512, num_warps=8)").replace(
        "triton.cdiv(n, 1024)", "triton.cdiv(n, 512)")
    assert reasons(honest) == []
    assert reasons(ORIGINAL) == []


def test_the_launcher_keeps_its_name_and_parameters():
    assert any("launcher 'add' is missing" in r for r in reasons(ORIGINAL.replace("def add(x, y)", "def add2(x, y)")))
    assert any("takes (x, y, z)" in r for r in reasons(ORIGINAL.replace("def add(x, y)", "def add(x, y, z)")))


def test_the_launcher_must_launch_a_jit_kernel():
    r = reasons(variant("    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)\n", ""))
    assert any("launches no @triton.jit kernel" in x for x in r)


def test_torch_computing_the_output_is_refused():
    cases = {
        "    return out\n": ("    return torch.add(x, y)\n", "torch.add"),
    }
    for old, (new, word) in cases.items():
        assert any(word in r for r in reasons(variant(old, new))), word
    assert any(".sum()" in r for r in reasons(variant("    return out\n", "    return (x + y).sum() * 0 + x + y\n")))
    assert any("torch.matmul" in r for r in reasons(variant("    return out\n", "    return torch.matmul(x, y)\n")))
    with_f = "import torch.nn.functional as F\n" + variant("    return out\n", "    return F.relu(x) + y\n")
    assert any("F.relu" in r for r in reasons(with_f))
    assert any("@ operator" in r for r in reasons(variant("    return out\n", "    return x @ y\n")))
    assert any(".copy_()" in r for r in reasons(variant("    return out\n", "    out.copy_(x)\n    return out\n")))


def test_tensor_arithmetic_outside_kernels_is_refused():
    for body, word in (("    return x + y\n", "arithmetic on the tensor x"),
                       ("    out += x\n    return out\n", "arithmetic on the tensor out, x"),
                       ("    return -x\n", "arithmetic on the tensor x"),
                       ("    out[:] = x\n    return out\n", "writes into a tensor outside a kernel"),
                       ("    z = x.view(-1)\n    return z * 2\n", "arithmetic on the tensor z")):
        r = reasons(variant("    return out\n", body))
        assert any(word in x for x in r), (body, r)
    # Integer arithmetic on shapes and sizes stays allowed.
    ok = variant("    n = x.numel()\n", "    n = x.numel()\n    rows = x.shape[0] * 2 - n // x.shape[-1]\n")
    assert reasons(ok) == []


def test_state_across_calls_is_refused():
    cache = "_CACHE = {}\n\n\n" + variant("    return out\n", "    _CACHE[n] = out\n    return out\n")
    assert any("module-level mutable container" in r for r in reasons(cache))
    glob = variant("    out = torch.empty_like(x)\n", "    global LAST\n    out = torch.empty_like(x)\n")
    assert any("global LAST" in r for r in reasons(glob))
    memo = "import functools\n" + ORIGINAL.replace("def add(x, y)", "@functools.lru_cache\ndef add(x, y)")
    r = reasons(memo)
    assert any("lru_cache" in x for x in r) and any("functools" in x for x in r)


def test_the_harness_files_network_and_processes_are_refused():
    assert any("imports 'add_harness'" in r for r in reasons("import add_harness\n" + ORIGINAL))
    assert any("reference" in r for r in reasons(variant("    return out\n", "    return reference(x, y)\n")))
    assert any("imports 'os'" in r for r in reasons("import os\n" + ORIGINAL))
    assert any("open" in r for r in reasons(variant("    return out\n", "    open('/tmp/x').read()\n    return out\n")))
    for mod in ("subprocess", "socket", "importlib", "pathlib"):
        assert any(f"imports '{mod}'" in r for r in reasons(f"import {mod}\n" + ORIGINAL)), mod
    assert any("eval" in r for r in reasons(variant("    return out\n", "    return eval('x + y')\n")))
    assert any("exec" in r for r in reasons(variant("    return out\n", "    exec('pass')\n    return out\n")))


def test_a_syntax_error_is_a_reason():
    r = reasons("def add(x, y:\n")
    assert len(r) == 1 and "not valid Python" in r[0]

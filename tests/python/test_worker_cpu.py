"""The worker's parse and compile ops, on a machine without a GPU (Triton from PyPI)."""

import json
import os
import subprocess
import sys

import pytest

from tritonforge_worker import errors
from worker_client import ROOT, Worker


@pytest.fixture(scope="module")
def worker():
    w = Worker()
    yield w
    w.close()


def test_hello_reports_versions(worker):
    r = worker.call("hello", probe_torch=False)
    assert r["ok"]
    info = r["result"]
    assert info["protocol"] == 1
    assert info["triton"] == __import__("triton").__version__
    assert info["gpu"] is None


def test_parse_gives_byte_positions(worker):
    text = "s = 'é'\nx = foo(1, b=2)\n"
    r = worker.call("parse", text=text)
    assert r["ok"]
    body = r["result"]["ast"]["body"]
    assert body[0]["_t"] == "Assign"
    # 'é' is two bytes in UTF-8: the string constant ends at byte 8 of line 1.
    assert body[0]["value"]["_p"] == [1, 4, 1, 8]
    call = body[1]["value"]
    assert call["_t"] == "Call"
    assert call["args"][0] == {"_t": "Constant", "value": 1, "vt": "int", "_p": [2, 8, 2, 9]}
    kw = call["keywords"][0]
    assert kw["arg"] == "b" and kw["_p"] == [2, 11, 2, 14]


def test_parse_special_constants(worker):
    r = worker.call("parse", text="a = 2**70\nb = float('inf')\nc = 1e400\nd = None\ne = ...\n")
    body = r["result"]["ast"]["body"]
    assert body[0]["value"]["_t"] == "BinOp"
    assert body[2]["value"] == {"_t": "Constant", "value": "inf", "vt": "float_special", "_p": [3, 4, 3, 9]}
    assert body[3]["value"]["vt"] == "None"
    assert body[4]["value"]["vt"] == "Ellipsis"


def test_parse_syntax_error_has_position(worker):
    r = worker.call("parse", text="x = 1\ndef f(:\n    pass\n")
    assert not r["ok"]
    assert r["error"]["data"]["line"] == 2
    assert r["error"]["data"]["col"] >= 7


def test_unknown_op_is_an_error_reply(worker):
    r = worker.call("frobnicate")
    assert not r["ok"] and "unknown op" in r["error"]["message"]
    # The worker keeps serving.
    assert worker.call("echo", x=1)["result"] == {"echo": {"x": 1}}


MATMUL_SIG = {p: "i32" for p in ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn",
                                 "stride_cm", "stride_cn")}
MATMUL_SIG.update(a_ptr="*fp16", b_ptr="*fp16", c_ptr="*fp16")


def compile_matmul(worker, **kw):
    args = dict(path=os.path.join(ROOT, "examples/matmul/matmul.py"), kernel="matmul_kernel",
                signature=MATMUL_SIG, constexprs={"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64},
                options={"num_warps": 8, "num_stages": 3}, target={"backend": "cuda", "arch": 90, "warp_size": 32})
    args.update(kw)
    return worker.call("compile", **args)


def test_compile_matmul_for_sm90_without_a_gpu(worker):
    r = compile_matmul(worker, want=["ptx", "spills"])
    assert r["ok"], r.get("error")
    res = r["result"]
    assert res["num_warps"] == 8 and res["num_stages"] == 3
    assert res["shared_bytes"] > 0
    assert res["sizes"]["cubin"] > 0 and res["sizes"]["ptx"] > 0
    assert "wgmma" in res["ptx"]  # Hopper tensor cores for a 128x128x64 fp16 tile
    assert res["cubin"]["registers"] > 0
    assert res["spills"] == {"spill_store_bytes": 0, "spill_load_bytes": 0}
    assert res["torch_stubbed"] is True or res["torch_stubbed"] is False


def test_compile_error_is_classified(worker):
    # A block of 48 is not a power of two: Triton refuses tl.arange(0, 48).
    r = compile_matmul(worker, constexprs={"BLOCK_M": 48, "BLOCK_N": 128, "BLOCK_K": 64})
    assert not r["ok"]
    assert r["error"]["data"]["status"] == "compile-error"


def test_compile_missing_signature_entry(worker):
    sig = dict(MATMUL_SIG)
    del sig["K"]
    r = compile_matmul(worker, signature=sig)
    assert not r["ok"]
    assert "no type for parameter 'K'" in r["error"]["message"]


def test_compile_unknown_kernel(worker):
    r = compile_matmul(worker, kernel="nope")
    assert not r["ok"] and "no kernel named 'nope'" in r["error"]["message"]


# A request loop whose ops raise what the caller names: the fatal path (reply, then exit 3)
# is checked without a GPU.
_RAISING_SERVER = """
import sys
sys.path.insert(0, sys.argv[1])
from tritonforge_worker import errors, server

def dispatch(op, args):
    if op == "fatal_error":
        raise errors.FatalWorkerError("launch: the kernel did not finish within 1 s (a hang?)")
    raise RuntimeError(args["message"])

server.dispatch = dispatch
server.main()
"""


def _raising_worker(requests):
    proc = subprocess.run([sys.executable, "-c", _RAISING_SERVER, os.path.join(ROOT, "python")],
                          input="".join(json.dumps({"v": 1, "id": i + 1, "op": op, "args": args}) + "\n"
                                        for i, (op, args) in enumerate(requests)),
                          capture_output=True, text=True, timeout=60)
    return proc.returncode, [json.loads(line) for line in proc.stdout.splitlines()], proc.stderr


def test_context_fatal_cuda_error_is_replied_then_the_worker_exits():
    rc, replies, err = _raising_worker([
        ("raise", {"message": "shape mismatch"}),
        ("raise", {"message": "CUDA error: an illegal memory access was encountered"}),
        ("raise", {"message": "never reached"})])
    assert rc == 3, err
    assert [r["id"] for r in replies] == [1, 2]
    assert not replies[0]["ok"] and "fatal" not in replies[0]["error"]
    assert replies[1]["error"]["fatal"] is True
    assert replies[1]["error"]["message"] == "CUDA error: an illegal memory access was encountered"
    assert "CUDA context is no longer usable" in err


def test_fatal_worker_error_ends_the_worker_whatever_its_message():
    rc, replies, _ = _raising_worker([("fatal_error", {}), ("raise", {"message": "never reached"})])
    assert rc == 3
    assert len(replies) == 1
    assert replies[0]["error"]["type"] == "FatalWorkerError" and replies[0]["error"]["fatal"] is True


@pytest.mark.parametrize("text,fatal", [
    ("CUDA error: an illegal memory access was encountered", True),
    ("CUDA error: unspecified launch failure", True),
    ("device-side assert triggered", True),
    ("CUDA error: misaligned address", True),
    ("CUDA out of memory. Tried to allocate 2.00 GiB", False),
    ("CompilationError: at 3:4: unsupported", False),
])
def test_is_context_fatal_only_for_sticky_cuda_errors(text, fatal):
    assert errors.is_context_fatal(RuntimeError(text)) is fatal


def test_a_compile_worker_runs_below_the_measuring_workers_priority():
    # TRITONFORGE_WORKER_NICE (set for compile workers by the core) lowers the worker's CPU
    # priority before it reads a request; without it the priority is left as it was.
    code = ("import os, sys; sys.path.insert(0, {!r}); from tritonforge_worker import server; "
            "before = os.nice(0); server._lower_priority(); print(os.nice(0) - before)").format(
                os.path.join(ROOT, "python"))
    for value, expected in (("10", 10), ("", 0), ("x", 0)):
        env = dict(os.environ, TRITONFORGE_WORKER_NICE=value)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        # A process already at the lowest priority cannot go lower: the kernel caps it at 19.
        assert int(out.stdout.strip()) == min(expected, 19 - os.nice(0)), out.stderr

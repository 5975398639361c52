"""The Gluon attention template (src/transform/passes/templates/gluon_attention.py) on the CPU:
it compiles for sm_90 through ptxas for head sizes 16 to 256 and both masks, with no spill (none
inside a loop with the log-sum-exp output) and without ptxas serializing its asynchronous wgmma
(warning C7514: an instruction reading an accumulator while its wgmma may be in flight makes
every wgmma wait for the previous one, which is how an overlapped loop silently loses its
overlap); and its fit check refuses what TMA and wgmma cannot take."""

import importlib.util
import os
import re
import subprocess

import pytest

pytest.importorskip("triton.experimental.gluon")

TEMPLATE = os.path.join(os.path.dirname(__file__), "..", "..", "src", "transform", "passes", "templates",
                        "gluon_attention.py")


def load():
    spec = importlib.util.spec_from_file_location("tf_gluon_attention_template", TEMPLATE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def spills_in_loops(cubin):
    """Local-memory loads and stores (spills) inside an innermost loop of the compiled code
    (between a conditional backward branch and its target in nvdisasm's listing, Triton's own
    nvdisasm, with no other such loop inside): the key loops, not the loop over a persistent
    program's tiles, where a few values wait in local memory while a tile's key loop runs."""
    import triton

    nvdisasm = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "nvdisasm")
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"tf_attn_{os.getpid()}.cubin")
    with open(path, "wb") as f:
        f.write(cubin)
    try:
        listing = subprocess.run([nvdisasm, "-c", path], capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(path)
    labels, instrs, pending = {}, [], []
    for line in listing.splitlines():
        label = re.match(r"^\s*(\.L_x_\d+):", line)
        if label:
            pending.append(label.group(1))
            continue
        ins = re.search(r"/\*([0-9a-f]{4,})\*/\s+(.*)", line)
        if ins:
            addr = int(ins.group(1), 16)
            labels.update({name: addr for name in pending})
            pending = []
            instrs.append((addr, ins.group(2)))
    loops = []
    for addr, ins in instrs:
        branch = re.search(r"@!?U?P\d+\s+BRA\s+`\((\.L_x_\d+)\)", ins)
        if branch and labels.get(branch.group(1), addr) < addr:
            loops.append((labels[branch.group(1)], addr))
    assert loops, "no loop found in the listing: the check would read nothing"
    loops = [(lo, hi) for lo, hi in loops if not any((lo, hi) != (a, b) and lo <= a and b <= hi for a, b in loops)]
    return [(hex(a), i) for a, i in instrs if re.match(r"(@\S+\s+)?(STL|LDL)", i) and any(lo <= a <= hi for lo, hi in loops)]


def compile_for_sm90(mod, head_dim, causal, even_k, dtype="fp16", lse=0, pingpong=False, own_output=False, groups=2,
                     loop=None):
    import triton
    from triton import knobs
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon._runtime import GluonASTSource

    elem = {"fp16": gl.float16, "bf16": gl.bfloat16}[dtype]
    rows = 64
    loop = own_output if loop is None else loop  # a program's own output buffer is a persistent program's

    def desc(block_rows):
        layout = gl.NVMMASharedLayout.get_default_for([1, 1, block_rows, head_dim], elem)
        return f"tensordesc<{dtype}[1, 1, {block_rows}, {head_dim}],{layout!r}>"

    fn = mod.attention_fwd
    bn = mod.block_n_for(head_dim, groups)
    sig = {"q_desc": desc(rows), "k_desc": desc(bn), "v_desc": desc(bn), "o_desc": desc(rows),
           "seq_q": "i32", "seq_k": "i32", "qk_scale": "fp32", "HQ": "i32", "GROUP": "i32", "n_work": "i32",
           "lse_ptr": "*fp32", "lse_sb": "i32", "lse_sh": "i32", "lse_ss": "i32",
           "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "STAGES": "constexpr", "CAUSAL": "constexpr",
           "EVEN_K": "constexpr", "LSE": "constexpr", "PINGPONG": "constexpr", "HEAVY_FIRST": "constexpr",
           "O_OWN": "constexpr", "GROUPS": "constexpr", "LOOP": "constexpr"}
    consts = {"BLOCK_M": 64 * groups, "BLOCK_N": bn, "STAGES": mod.stages_for(head_dim, groups),
              "CAUSAL": causal, "EVEN_K": even_k, "LSE": lse, "PINGPONG": pingpong, "HEAVY_FIRST": causal,
              "O_OWN": own_output, "GROUPS": groups, "LOOP": loop}
    names = list(fn.arg_names)
    src = GluonASTSource(fn, sig, {(names.index(k),): v for k, v in consts.items()}, {})
    with knobs.nvidia.scope(), knobs.compilation.scope():
        knobs.nvidia.dump_ptxas_log = True
        knobs.compilation.always_compile = True  # ptxas runs (and logs) even when the cache holds the kernel
        return triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})


@pytest.mark.parametrize("head_dim,causal,even_k,dtype,lse,pingpong,own_output,groups", [
    (128, False, True, "fp16", 0, False, False, 2), (128, True, False, "bf16", 2, False, False, 2),
    (64, False, False, "fp16", 1, False, False, 2), (32, True, True, "fp16", 0, False, False, 2),
    (256, True, False, "bf16", 1, False, False, 2), (16, False, True, "fp16", 0, False, False, 2),
    (128, False, True, "fp16", 0, True, True, 2), (128, True, False, "bf16", 2, True, True, 2),
    (64, False, True, "fp16", 0, True, True, 2), (64, False, True, "fp16", 0, True, True, 3),
    (64, True, False, "bf16", 2, True, False, 3), (32, False, True, "fp16", 0, False, True, 3)])
def test_compiles_for_sm90_without_spills_or_serialized_wgmma(head_dim, causal, even_k, dtype, lse, pingpong,
                                                              own_output, groups, capfd):
    mod = load()
    kernel = compile_for_sm90(mod, head_dim, causal, even_k, dtype, lse, pingpong, own_output, groups)
    log = capfd.readouterr()
    text = log.out + log.err
    assert "ptxas info" in text  # the log was printed: the checks below read something
    assert "C7514" not in text, "ptxas serialized the asynchronous wgmma"
    spills = [line for line in text.splitlines() if "spill stores" in line]
    assert spills
    if not lse and not own_output:
        assert all(line.strip().split(",")[1].strip().startswith("0 bytes spill stores") for line in spills), spills
    # With the log-sum-exp output or a persistent program's tile loop, a few values may wait in
    # local memory while a key loop runs (stored before, loaded after): nothing may spill inside one.
    assert spills_in_loops(kernel.asm["cubin"]) == []
    assert kernel.metadata.shared <= 227 * 1024


def test_stages_fit_shared_memory():
    mod = load()
    assert mod.stages_for(128) == 2 and mod.stages_for(64) == 3
    assert mod.stages_for(256) == 2 and mod.block_n_for(256) == 64
    assert mod.own_output_for(128) and mod.own_output_for(64) and not mod.own_output_for(256)
    for d in (16, 32, 64, 128, 256):
        per_stage = 2 * mod.block_n_for(d) * d * 2
        assert mod.BLOCK_M * d * 2 + mod.stages_for(d) * per_stage <= 200 * 1024
        if d <= 64:  # three consumer groups: 192 query rows, 64 keys per tile
            per_stage = 2 * mod.block_n_for(d, 3) * d * 2
            assert 192 * d * 2 + mod.stages_for(d, 3) * per_stage <= 200 * 1024 and mod.stages_for(d, 3) >= 2


def test_fit_check_refuses_what_tma_and_wgmma_cannot_take():
    """Each refusal, judged on CPU tensors (the machine is judged last)."""
    import torch

    mod = load()
    assert mod.launch(None, None, None, None, 1.0, False) is False

    def q(*shape, dtype=torch.float16):
        return torch.zeros(*shape, dtype=dtype)

    a = q(2, 4, 64, 64)
    kv = q(2, 2, 64, 64)
    assert mod.fits(a, kv, kv, a.clone(), False) == "operands are not CUDA tensors on one device"
    assert "dtype" in mod.fits(a.float(), kv.float(), kv.float(), a.float(), False)
    assert "dtype" in mod.fits(a, kv.bfloat16(), kv.bfloat16(), a, False)
    assert "head size" in mod.fits(q(1, 2, 64, 96), q(1, 2, 64, 96), q(1, 2, 64, 96), q(1, 2, 64, 96), False)
    assert "multiple" in mod.fits(q(1, 3, 64, 64), q(1, 2, 64, 64), q(1, 2, 64, 64), q(1, 3, 64, 64), False)
    longer = q(1, 2, 80, 64)
    assert "different lengths" in mod.fits(q(1, 2, 64, 64), longer, longer, q(1, 2, 64, 64), True)
    assert mod.fits(q(1, 2, 64, 64), longer, longer, q(1, 2, 64, 64), False) == "operands are not CUDA tensors on one device"
    assert "shapes" in mod.fits(a, q(2, 2, 64, 32), q(2, 2, 64, 32), a, False)
    assert "contiguous" in mod.fits(a.transpose(2, 3), kv, kv, a, False)
    # rows of 60 halves (120 bytes): TMA's strides are multiples of 16 bytes
    odd = q(1, 2, 64, 60)[..., :32].contiguous()
    odd_view = [(odd, (2 * 64 * 60, 64 * 60, 60))] + [(odd, (2 * 64 * 32, 64 * 32, 32))] * 3
    assert "stride" in mod.refuse_view(torch.float16, 1, 2, 2, 64, 64, 32, False, odd_view)
    broadcast = [(odd, (2 * 64 * 32, 64 * 32, 32)), (odd, (64 * 32, 0, 32))] + [(odd, (2 * 64 * 32, 64 * 32, 32))] * 2
    assert "stride" in mod.refuse_view(torch.float16, 1, 2, 2, 64, 64, 32, False, broadcast)
    single = [(odd, (0, 64 * 32, 32))] * 4  # batch 1: its stride is never stepped
    assert mod.refuse_view(torch.float16, 1, 2, 2, 64, 64, 32, False, single) == \
        "operands are not CUDA tensors on one device"
    assert "empty" in mod.refuse_view(torch.float16, 1, 2, 2, 0, 0, 32, False, single)
    assert "2^31" in mod.refuse_view(torch.float16, 2 ** 20, 2 ** 10, 2 ** 10, 256, 256, 32, False, single)
    assert "2^31" not in mod.refuse_view(torch.float16, 1024, 64, 64, 64, 64, 32, False, single)  # 65536 pairs
    assert mod._tma_strides((0, 0, 0), 7, 64) == (64 * 7, 64 * 7, 64)

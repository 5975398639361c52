"""Writes the compiled texts of kernels.py's kernels for sm_90 (ahead of time, no GPU)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "python"))

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

import kernels  # noqa: E402
from tritonforge_worker.compiled import cubin_facts  # noqa: E402

TARGET = GPUTarget("cuda", 90, 32)
DOT_SIG = {"a_ptr": None, "b_ptr": None, "c_ptr": "*fp32", "BM": "constexpr", "BN": "constexpr",
           "BK": "constexpr", "PREC": "constexpr"}


def compile_one(fn, sig, consts, opts, attrs=None):
    src = ASTSource(fn=fn, signature=sig, constexprs=consts, attrs=attrs or {})
    return triton.compile(src, target=TARGET, options=opts)


def write(name, kernel, keys, sass_filter=None):
    for key in keys:
        if key == "sass":
            text = cubin_facts(kernel.asm["cubin"], want_sass=True).get("sass", "")
            if sass_filter:  # keeps the file small: only the lines the tests count
                text = "".join(line for line in text.splitlines(True)
                               if "Function" in line or any(op in line for op in sass_filter))
        else:
            text = kernel.asm[key]
        with open(os.path.join(HERE, f"{name}.{key}"), "w") as f:
            f.write(text)


def main():
    for name, dtype, shape, prec in [("dot_f16_wgmma", "*fp16", (128, 128, 64), "tf32"),
                                     ("dot_f16_mma", "*fp16", (16, 16, 16), "tf32"),
                                     ("dot_f32_ieee", "*fp32", (64, 64, 32), "ieee"),
                                     ("dot_f32_tf32", "*fp32", (64, 64, 32), "tf32")]:
        sig = dict(DOT_SIG, a_ptr=dtype, b_ptr=dtype)
        k = compile_one(kernels.dot_tile, sig, {"BM": shape[0], "BN": shape[1], "BK": shape[2], "PREC": prec},
                        {"num_warps": 4})
        write(name, k, ["ttgir", "ptx"])
    k = compile_one(kernels.row_softmax, {"out_ptr": "*fp32", "in_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
                    {"BLOCK": 8192}, {"num_warps": 1})
    write("softmax_spills", k, ["sass"], sass_filter=("LDL", "STL", "LDG", "STG"))
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    k = compile_one(kernels.add_vec, sig, {"BLOCK": 1024}, {"num_warps": 4},
                    attrs={(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]],
                           (2,): [["tt.divisibility", 16]], (3,): [["tt.divisibility", 16]]})
    write("add_vec128", k, ["ptx", "sass"])


if __name__ == "__main__":
    main()

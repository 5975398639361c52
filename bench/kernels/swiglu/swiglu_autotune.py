"""swiglu under @triton.autotune: the kernel as written, wrapped with the suite's standard
element-wise list (flat("BLOCK")), keyed on the element count."""

import torch
import triton


def make_launcher(mod, autotune, configs):
    kernel = autotune(configs=configs.flat("BLOCK"), key=["n_elements"])(mod.swiglu_kernel)

    def swiglu(gate, up):
        out = torch.empty_like(gate)
        n = gate.numel()
        grid = lambda META: (triton.cdiv(n, META["BLOCK"]),)
        kernel[grid](gate, up, out, n)
        return out

    return swiglu

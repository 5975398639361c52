"""Two faults of Triton 3.6's CPU interpreter (TRITON_INTERPRET=1) that the checks running
kernels under it work around; call apply() before the first launch. Neither changes what a
correct kernel computes, so the checks assert as much as they would on a right interpreter:

  * tl.dot on bf16: the interpreter keeps bf16 values as their raw 16 bits (numpy uint16)
    and multiplies those bits as integers. bf16 operands are widened to float32 first; the
    widening is exact (bf16 is the top half of a float32), and a GPU's bf16 dot also forms
    exact products and sums them in float32.
  * numpy 2.4 and later: the interpreter turns a scalar (held as a 1-element array) into a
    Python int with int(array), which numpy 2.4 refuses for arrays of one dimension or more
    ("only 0-dimensional arrays can be converted to Python scalars"); `range(tl.program_id(0),
    ...)` is one such place. The scalar's __index__ reads the element with .item() instead.

Applied by benchlib.measure when it runs under the interpreter (bench/run --interpret), and by
the CPU checks tests/python/transform_interpret_check.py and bench/tests/interpret_check.py.
"""


_applied = False


def apply():
    """Patches the interpreter once (a second call does nothing)."""
    global _applied
    if _applied:
        return
    _applied = True
    from triton.runtime import interpreter
    _exact_bf16_dot(interpreter)
    _index_by_item(interpreter)


def _exact_bf16_dot(interpreter):
    import numpy as np
    import triton.language as tl

    builder = interpreter.InterpreterBuilder
    plain_dot = builder.create_dot

    def widened(handle):
        if handle.dtype.scalar != tl.bfloat16:
            return handle
        bits = handle.data.view(np.uint16).astype(np.uint32) << 16
        return interpreter.TensorHandle(bits.view(np.float32), tl.float32)

    def create_dot(self, a, b, *rest):
        return plain_dot(self, widened(a), widened(b), *rest)

    builder.create_dot = create_dot


def _index_by_item(interpreter):
    plain_patch = interpreter._patch_lang_tensor

    def index(self):
        return int(self.handle.data.item())

    # Triton 3.6 patches tl.tensor for the duration of a launch through a scope that restores
    # it afterwards; earlier 3.x releases set the attributes for good.
    def patch_lang_tensor(tensor, *scope):
        plain_patch(tensor, *scope)
        if scope:
            scope[0].set_attr(tensor, "__index__", index)
        else:
            tensor.__index__ = index

    interpreter._patch_lang_tensor = patch_lang_tensor

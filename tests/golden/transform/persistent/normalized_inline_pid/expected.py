import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # persistent: about 4 programs per SM; each loops over tiles, stepping by the grid size
    for pid_0 in range(tl.program_id(0), tl.cdiv(n, BLOCK), tl.num_programs(0)):
        offs = pid_0 * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask)
        if pid_0 == 0:
            x = x + 0.0
        tl.store(out_ptr + offs, x + y, mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    BLOCK = 256
    num_sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    add_kernel[(min(num_sms * 4, triton.cdiv(n, BLOCK)),)](x, y, out, n, BLOCK=BLOCK)
    return out

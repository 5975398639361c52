"""fp16 matrix multiply, written the straightforward way: 32x32 output tiles, a 32-wide
k step, Triton's default warps and stages."""

import torch
import triton
import triton.language as tl


def _tma_scratch(size, alignment, stream):
    # scratch memory for the tensor descriptors the kernel makes (TMA)
    return torch.empty(size, device="cuda", dtype=torch.int8)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr, B_K_MAJOR: tl.constexpr = False):
    # tensor-cores: the dot's tiles and the output tile go through TMA tensor descriptors
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_am, 1],
                                       block_shape=[BLOCK_M, BLOCK_K])
    b_desc = (tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[stride_bn, 1],
                                        block_shape=[BLOCK_N, BLOCK_K]) if B_K_MAJOR else
              tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[stride_bk, 1],
                                        block_shape=[BLOCK_K, BLOCK_N]))
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[stride_cm, 1],
                                       block_shape=[BLOCK_M, BLOCK_N])
    # grouped-order: one program per output tile on a 1-D grid, walked in groups of GROUP_M
    # tile rows so that programs running together share tiles of the inputs in L2
    # persistent: about 2 programs per SM; each loops over tiles, stepping by the grid size
    for pid in tl.range(tl.program_id(0), tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N), tl.num_programs(0), flatten=True):
        num_pid_m = tl.cdiv(M, BLOCK_M)
        num_pid_n = tl.cdiv(N, BLOCK_N)
        num_pid_in_group = GROUP_M * num_pid_n
        group_id = pid // num_pid_in_group
        first_pid_m = group_id * GROUP_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
        pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
        pid_n = (pid % num_pid_in_group) // group_size_m
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            a = a_desc.load([pid_m * BLOCK_M, k0])
            b = (b_desc.load([pid_n * BLOCK_N, k0]).T if B_K_MAJOR else b_desc.load([k0, pid_n * BLOCK_N]))
            acc += tl.dot(a, b)
        c = acc.to(tl.float16)
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], c)


def matmul(a, b):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    num_sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    # TMA descriptors need contiguous rows, 16-byte aligned
    assert a.stride(1) == 1 and a.stride(0) * a.element_size() % 16 == 0 and a.data_ptr() % 16 == 0
    assert (b.stride(1) == 1 and b.stride(0) * b.element_size() % 16 == 0 or
            b.stride(0) == 1 and b.stride(1) * b.element_size() % 16 == 0) and b.data_ptr() % 16 == 0
    assert c.stride(1) == 1 and c.stride(0) * c.element_size() % 16 == 0 and c.data_ptr() % 16 == 0
    triton.set_allocator(_tma_scratch)
    grid = lambda META: (min(num_sms * 2, triton.cdiv(M, META['BLOCK_M']) * triton.cdiv(N, META['BLOCK_N'])),)
    matmul_kernel[grid](a, b, c, M, N, K,
                        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                        BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, GROUP_M=8, B_K_MAJOR=b.stride(1) != 1)
    return c

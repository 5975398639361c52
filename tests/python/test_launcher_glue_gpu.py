"""What the launcher-glue pass relies on, checked on CUDA: the infinity norm equals the absolute
maximum bit for bit (fp16, bf16, fp32; whole tensor and along a dimension; upcast to float32),
NaN where the values hold a NaN, inf where they hold an infinity. Skipped visibly without a
CUDA GPU (torch 2.11's CPU kernels pass the same checks in the CPU suite's interpreter run)."""

import pytest

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_infinity_norm_is_the_absolute_maximum_on_cuda(dtype):
    import torch

    dt = getattr(torch, dtype)
    g = torch.Generator(device="cuda").manual_seed(0)
    x = (torch.randn(513, 4099, device="cuda", generator=g) * 7).to(dt)
    inf = float("inf")
    assert torch.equal(torch.linalg.vector_norm(x, inf), x.abs().max())
    assert torch.equal(torch.linalg.vector_norm(x, inf, dim=-1, keepdim=True), x.abs().amax(dim=-1, keepdim=True))
    assert torch.equal(torch.linalg.vector_norm(x, inf, dim=0), x.abs().amax(dim=0))
    assert torch.equal(torch.linalg.vector_norm(x, inf, dtype=torch.float32), x.float().abs().max())
    y = x.clone()
    y[17, 1234] = float("nan")
    assert torch.isnan(torch.linalg.vector_norm(y, inf)) and torch.isnan(y.abs().max())
    rows = torch.linalg.vector_norm(y, inf, dim=-1)
    assert torch.isnan(rows[17]) and torch.equal(rows[:17], y[:17].abs().amax(dim=-1))
    y[17, 1234] = -inf
    assert torch.linalg.vector_norm(y, inf).item() == inf

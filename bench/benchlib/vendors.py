"""Vendor implementations the suite's harnesses list in vendors() (measure.py times each and
compares the fastest verified one). Imported only when vendors() is called, by the bench's
measurement: a harness stays loadable on its own (tritonforge loads it as a task's harness)."""

# SDPA's GPU backends, each forced with torch.nn.attention.sdpa_kernel: (name, SDPBackend member).
SDPA_BACKENDS = (("SDPA cuDNN attention", "CUDNN_ATTENTION"),
                 ("SDPA FlashAttention-2", "FLASH_ATTENTION"),
                 ("SDPA memory-efficient", "EFFICIENT_ATTENTION"))


def _forced(sdpa_kernel, backend, vendor):
    def run(*inputs):
        with sdpa_kernel([backend]):
            return vendor(*inputs)
    return run


def sdpa_backends(vendor, device, default_name):
    """{name: callable}: `vendor` (an SDPA call) under each SDPA GPU backend this torch has,
    forced, in SDPA_BACKENDS' order. One that cannot run the case (head size, GQA, this GPU)
    fails its own measurement and the others go on. Off the GPU (interpreter runs), or on a
    torch without torch.nn.attention, only {default_name: vendor}."""
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:
        return {default_name: vendor}
    if device != "cuda":
        return {default_name: vendor}
    return {name: _forced(sdpa_kernel, getattr(SDPBackend, member), vendor)
            for name, member in SDPA_BACKENDS if hasattr(SDPBackend, member)}

import torch


def make_inputs(case, seed):
    M, K = case["M"], case["K"]
    a = torch.randn((M, K), device="cuda", dtype=torch.float16)
    x = torch.randn(K, device="cuda").half()
    return a, x


def reference(a, x):
    return a.float() @ x.float()

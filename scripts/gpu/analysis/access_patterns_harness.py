import torch


def make_inputs(case, seed):
    n = case["N"]
    x = torch.randn(n, device="cuda", dtype=torch.float32)
    big = torch.randn(n * 32, device="cuda", dtype=torch.float32)
    y = torch.empty(n, device="cuda", dtype=torch.float32)
    square = torch.randn(case["S"], case["S"], device="cuda", dtype=torch.float32)
    square_t = torch.empty(case["S"], case["S"], device="cuda", dtype=torch.float32)
    return (x, big, y, square, square_t)


def reference(x, big, y, square, square_t):
    return x

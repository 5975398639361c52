"""A DeltaNet (linear attention) training step with flash-linear-attention's Triton kernels:
four blocks of RMSNorm, short causal convolutions, chunk_delta_rule, a gated RMSNorm and an
MLP, random weights and inputs, forward and backward. Prints, per step, the loss and the
gradients' norm. (The gated form, chunk_gated_delta_rule, refuses its backward on Hopper with
Triton 3.4-3.7.0: fla reports wrong results there, its issue #640.)

Usage: python deltanet_step.py [STEPS (default 3)]. Needs a GPU, torch and fla-core
(bench/capture_programs.sh carries the wheel)."""

import sys

import torch
import torch.nn.functional as F
from fla.modules import FusedRMSNormGated, RMSNorm, ShortConvolution
from fla.ops.delta_rule import chunk_delta_rule

HIDDEN, HEADS, HEAD_DIM, LAYERS = 1024, 8, 128, 4


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        inner = HEADS * HEAD_DIM
        self.norm = RMSNorm(HIDDEN)
        self.q = torch.nn.Linear(HIDDEN, inner, bias=False)
        self.k = torch.nn.Linear(HIDDEN, inner, bias=False)
        self.v = torch.nn.Linear(HIDDEN, inner, bias=False)
        self.conv_q = ShortConvolution(inner, 4, activation="silu")
        self.conv_k = ShortConvolution(inner, 4, activation="silu")
        self.conv_v = ShortConvolution(inner, 4, activation="silu")
        self.b = torch.nn.Linear(HIDDEN, HEADS, bias=False)
        self.gate = torch.nn.Linear(HIDDEN, inner, bias=False)
        self.o_norm = FusedRMSNormGated(HEAD_DIM)
        self.o = torch.nn.Linear(inner, HIDDEN, bias=False)
        self.mlp_norm = RMSNorm(HIDDEN)
        self.up = torch.nn.Linear(HIDDEN, 4 * HIDDEN, bias=False)
        self.down = torch.nn.Linear(4 * HIDDEN, HIDDEN, bias=False)

    def forward(self, x):
        B, T, _ = x.shape
        h = self.norm(x)
        q = self.conv_q(self.q(h))[0].view(B, T, HEADS, HEAD_DIM)
        k = self.conv_k(self.k(h))[0].view(B, T, HEADS, HEAD_DIM)
        v = self.conv_v(self.v(h))[0].view(B, T, HEADS, HEAD_DIM)
        beta = self.b(h).sigmoid()
        o, _ = chunk_delta_rule(q, k, v, beta, use_qk_l2norm_in_kernel=True)
        o = self.o_norm(o, self.gate(h).view(B, T, HEADS, HEAD_DIM)).reshape(B, T, -1)
        x = x + self.o(o)
        return x + self.down(F.silu(self.up(self.mlp_norm(x))))


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[Block() for _ in range(LAYERS)]).to("cuda", torch.bfloat16)
    x = torch.randn(4, 2048, HIDDEN, device="cuda", dtype=torch.bfloat16, generator=torch.Generator("cuda").manual_seed(1))
    for step in range(steps):
        loss = model(x).float().pow(2).mean()
        loss.backward()
        grad_norm = torch.sqrt(sum(p.grad.float().pow(2).sum() for p in model.parameters() if p.grad is not None))
        print(f"step {step} loss {loss.item():.6f} grad_norm {grad_norm.item():.6f}", flush=True)
        model.zero_grad(set_to_none=True)


if __name__ == "__main__":
    main()

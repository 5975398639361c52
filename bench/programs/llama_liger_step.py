"""A LLaMA-architecture training step with Liger-Kernel's Triton kernels: the model is built
from a config with random weights (nothing downloaded), patched with
liger_kernel.transformers.apply_liger_kernel_to_llama (RoPE, RMSNorm, SwiGLU, fused linear
cross-entropy), and runs forward and backward on random tokens. Prints, per step, the loss and
the gradients' norm (what `tritonforge run --overlay --compare` compares).

Usage: python llama_liger_step.py [STEPS (default 3)]. Needs a GPU, torch, transformers and
liger-kernel (bench/capture_programs.sh carries the wheel)."""

import sys

import torch
from liger_kernel.transformers import apply_liger_kernel_to_llama
from transformers import LlamaConfig, LlamaForCausalLM


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    apply_liger_kernel_to_llama(rope=True, rms_norm=True, swiglu=True, cross_entropy=False,
                                fused_linear_cross_entropy=True)
    torch.manual_seed(0)
    config = LlamaConfig(hidden_size=2048, intermediate_size=5632, num_hidden_layers=4, num_attention_heads=16,
                         num_key_value_heads=4, vocab_size=32000, max_position_embeddings=4096)
    model = LlamaForCausalLM(config).to("cuda", torch.bfloat16)
    ids = torch.randint(0, config.vocab_size, (4, 1024), device="cuda", generator=torch.Generator("cuda").manual_seed(1))
    for step in range(steps):
        out = model(input_ids=ids, labels=ids)
        out.loss.backward()
        grad_norm = torch.sqrt(sum(p.grad.float().pow(2).sum() for p in model.parameters() if p.grad is not None))
        print(f"step {step} loss {out.loss.item():.6f} grad_norm {grad_norm.item():.6f}", flush=True)
        model.zero_grad(set_to_none=True)


if __name__ == "__main__":
    main()

"""softmax_decode under @triton.autotune: the kernel as written, wrapped with the suite's
standard list for loops over a row (row_loop("BLOCK_SIZE")), keyed on the vocabulary size."""

import torch


def make_launcher(mod, autotune, configs):
    kernel = autotune(configs=configs.row_loop("BLOCK_SIZE"), key=["n_cols"])(mod.softmax_decode_kernel)

    def softmax_decode(logits):
        n_rows, n_cols = logits.shape
        probs = torch.empty_like(logits)
        kernel[(n_rows,)](logits, probs, n_cols, logits.stride(0))
        return probs

    return softmax_decode

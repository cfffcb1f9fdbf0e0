# /// script
# dependencies = ["transformers"]
# ///
"""Mamba state-space causal LM from transformers (tiny config, random weights): one forward to logits.

Without the CUDA kernels transformers runs the selective scan as a Python loop over the
sequence. Batch and sequence are dynamic.
"""

import torch
import transformers

torch.manual_seed(0)


class Logits(torch.nn.Module):
    """Returns the logits only; use_cache=False so no recurrent state cache is built or returned."""

    def __init__(self):
        super().__init__()
        config = transformers.MambaConfig(
            vocab_size=128,
            hidden_size=32,
            state_size=8,
            num_hidden_layers=2,
            expand=2,
            conv_kernel=4,
        )
        self.lm = transformers.MambaForCausalLM(config)

    def forward(self, input_ids):
        return self.lm(input_ids=input_ids, use_cache=False).logits


def dynamic_shapes():
    from torch.export import Dim

    return {"input_ids": {0: Dim("batch", min=1, max=8), 1: Dim("seq", min=2, max=32)}}


model = Logits().eval()
example_args = (torch.randint(0, 128, (2, 8)),)
extra_args = [(torch.randint(0, 128, (3, 5)),)]
tags = {"torch.model", "torch.dynamic-shape"}
requires = ["dim", "export.dynamic_shapes"]

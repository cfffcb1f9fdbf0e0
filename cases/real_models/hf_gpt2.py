# /// script
# dependencies = ["transformers"]
# ///
"""GPT-2 language model from transformers (tiny config, random weights): one forward to logits, dynamic shapes."""

import torch
import transformers

torch.manual_seed(0)


class Logits(torch.nn.Module):
    """Returns the logits only; use_cache=False so no key/value cache object is built or returned."""

    def __init__(self):
        super().__init__()
        config = transformers.GPT2Config(vocab_size=100, n_positions=64, n_embd=32, n_layer=2, n_head=2)
        self.lm = transformers.GPT2LMHeadModel(config)

    def forward(self, input_ids, attention_mask):
        return self.lm(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits


def dynamic_shapes():
    from torch.export import Dim

    batch, seq = Dim("batch", min=1, max=8), Dim("seq", min=2, max=32)
    return {"input_ids": {0: batch, 1: seq}, "attention_mask": {0: batch, 1: seq}}


model = Logits().eval()
example_args = (torch.randint(0, 100, (2, 8)), torch.ones(2, 8, dtype=torch.long))
# Another batch and length, the first row left-padded as for batched generation.
mask = torch.ones(3, 5, dtype=torch.long)
mask[0, :2] = 0
extra_args = [(torch.randint(0, 100, (3, 5)), mask)]
tags = {"torch.model", "torch.dynamic-shape"}
requires = ["dim", "export.dynamic_shapes"]

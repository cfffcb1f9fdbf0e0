# /// script
# dependencies = ["transformers"]
# ///
"""Mixtral mixture-of-experts causal LM from transformers (tiny config, random weights): one forward to logits.

Each token is routed to its top 2 of 4 experts; the experts' token sets depend on the router's
output, so the routing is data-dependent. Batch and sequence are dynamic.
"""

import torch
import transformers

torch.manual_seed(0)


class Logits(torch.nn.Module):
    """Returns the logits only; use_cache=False so no key/value cache object is built or returned."""

    def __init__(self):
        super().__init__()
        config = transformers.MixtralConfig(
            vocab_size=128,
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            num_local_experts=4,
            num_experts_per_tok=2,
            max_position_embeddings=64,
        )
        self.lm = transformers.MixtralForCausalLM(config)

    def forward(self, input_ids, attention_mask):
        return self.lm(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits


def dynamic_shapes():
    from torch.export import Dim

    batch, seq = Dim("batch", min=1, max=8), Dim("seq", min=2, max=32)
    return {"input_ids": {0: batch, 1: seq}, "attention_mask": {0: batch, 1: seq}}


model = Logits().eval()
example_args = (torch.randint(0, 128, (2, 8)), torch.ones(2, 8, dtype=torch.long))
mask = torch.ones(3, 5, dtype=torch.long)
mask[0, :2] = 0
extra_args = [(torch.randint(0, 128, (3, 5)), mask)]
tags = {"torch.model", "torch.dynamic-shape", "torch.dynamic-value"}
requires = ["dim", "export.dynamic_shapes"]

# /// script
# dependencies = ["transformers"]
# ///
"""GPT-2 language model from transformers (tiny config, random weights): one forward to logits, dynamic shapes."""

import torch
import transformers
from _transformers_heads import CausalLogits, causal_dynamic_shapes, causal_example, causal_extra

torch.manual_seed(0)

config = transformers.GPT2Config(vocab_size=100, n_positions=64, n_embd=32, n_layer=2, n_head=2)

model = CausalLogits(transformers.GPT2LMHeadModel(config)).eval()
dynamic_shapes = causal_dynamic_shapes
example_args = causal_example(100)
extra_args = causal_extra(100)
tags = {"torch.model", "torch.dynamic-shape"}
requires = ["dim", "export.dynamic_shapes"]

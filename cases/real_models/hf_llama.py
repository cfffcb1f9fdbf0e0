# /// script
# dependencies = ["transformers"]
# ///
"""Llama causal LM from transformers (tiny config, random weights): one forward to logits, dynamic batch and sequence.

RMSNorm, rotary position embeddings, grouped-query attention (4 query heads, 2 key/value heads), SwiGLU MLP.
"""

import torch
import transformers
from _transformers_heads import CausalLogits, causal_dynamic_shapes, causal_example, causal_extra

torch.manual_seed(0)

config = transformers.LlamaConfig(
    vocab_size=128,
    hidden_size=32,
    intermediate_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=64,
)

model = CausalLogits(transformers.LlamaForCausalLM(config)).eval()
dynamic_shapes = causal_dynamic_shapes
example_args = causal_example(128)
extra_args = causal_extra(128)
tags = {"torch.model", "torch.dynamic-shape"}
requires = ["dim", "export.dynamic_shapes"]

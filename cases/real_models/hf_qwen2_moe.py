# /// script
# dependencies = ["transformers"]
# ///
"""Qwen2-MoE causal LM from transformers (tiny config, random weights): one forward to logits.

Top-2 of 4 routed experts plus a gated shared expert in every layer; the routing is
data-dependent. Batch and sequence are dynamic.
"""

import torch
import transformers
from _transformers_heads import CausalLogits, causal_dynamic_shapes, causal_example, causal_extra

torch.manual_seed(0)

config = transformers.Qwen2MoeConfig(
    vocab_size=128,
    hidden_size=32,
    intermediate_size=64,
    moe_intermediate_size=32,
    shared_expert_intermediate_size=64,
    num_experts=4,
    num_experts_per_tok=2,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=64,
)

model = CausalLogits(transformers.Qwen2MoeForCausalLM(config)).eval()
dynamic_shapes = causal_dynamic_shapes
example_args = causal_example(128)
extra_args = causal_extra(128)
tags = {"torch.model", "torch.dynamic-shape", "torch.dynamic-value"}
requires = ["dim", "export.dynamic_shapes"]

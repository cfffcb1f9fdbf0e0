# /// script
# dependencies = ["transformers"]
# ///
"""BART encoder-decoder from transformers (tiny config, random weights): one forward with decoder_input_ids to logits.

Learned positions, encoder padding mask; batch, source length and target length are dynamic.
"""

import torch
import transformers
from _transformers_heads import Seq2SeqLogits, seq2seq_dynamic_shapes, seq2seq_example, seq2seq_extra

torch.manual_seed(0)

config = transformers.BartConfig(
    vocab_size=100,
    d_model=32,
    encoder_layers=2,
    decoder_layers=2,
    encoder_attention_heads=2,
    decoder_attention_heads=2,
    encoder_ffn_dim=64,
    decoder_ffn_dim=64,
    max_position_embeddings=64,
)

model = Seq2SeqLogits(transformers.BartForConditionalGeneration(config)).eval()
dynamic_shapes = seq2seq_dynamic_shapes
example_args = seq2seq_example(100)
extra_args = seq2seq_extra(100)
tags = {"torch.model", "torch.dynamic-shape"}
requires = ["dim", "export.dynamic_shapes"]

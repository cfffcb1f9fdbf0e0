# /// script
# dependencies = ["transformers"]
# ///
"""T5 encoder-decoder from transformers (tiny config, random weights): one forward with decoder_input_ids to logits.

Relative position buckets, encoder padding mask; batch, source length and target length are dynamic.
"""

import torch
import transformers
from _transformers_heads import Seq2SeqLogits, seq2seq_dynamic_shapes, seq2seq_example, seq2seq_extra

torch.manual_seed(0)

config = transformers.T5Config(
    vocab_size=100,
    d_model=32,
    d_kv=16,
    d_ff=64,
    num_layers=2,
    num_decoder_layers=2,
    num_heads=2,
    relative_attention_num_buckets=8,
    relative_attention_max_distance=16,
    decoder_start_token_id=0,
)

model = Seq2SeqLogits(transformers.T5ForConditionalGeneration(config)).eval()
dynamic_shapes = seq2seq_dynamic_shapes
example_args = seq2seq_example(100)
extra_args = seq2seq_extra(100)
tags = {"torch.model", "torch.dynamic-shape"}
requires = ["dim", "export.dynamic_shapes"]

# /// script
# dependencies = ["transformers"]
# ///
"""T5 encoder-decoder from transformers (tiny config, random weights): one forward with decoder_input_ids to logits.

Relative position buckets, encoder padding mask; batch, source length and target length are dynamic.
"""

import torch
import transformers

torch.manual_seed(0)


class Seq2SeqLogits(torch.nn.Module):
    """Returns the logits only; use_cache=False so no key/value cache object is built or returned."""

    def __init__(self):
        super().__init__()
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
        self.t5 = transformers.T5ForConditionalGeneration(config)

    def forward(self, input_ids, attention_mask, decoder_input_ids):
        out = self.t5(
            input_ids=input_ids,
            attention_mask=attention_mask,
            decoder_input_ids=decoder_input_ids,
            use_cache=False,
        )
        return out.logits


def dynamic_shapes():
    from torch.export import Dim

    batch = Dim("batch", min=1, max=8)
    src, tgt = Dim("src_len", min=2, max=32), Dim("tgt_len", min=2, max=32)
    return {
        "input_ids": {0: batch, 1: src},
        "attention_mask": {0: batch, 1: src},
        "decoder_input_ids": {0: batch, 1: tgt},
    }


model = Seq2SeqLogits().eval()
example_args = (torch.randint(0, 100, (2, 8)), torch.ones(2, 8, dtype=torch.long), torch.randint(0, 100, (2, 4)))
mask = torch.ones(3, 6, dtype=torch.long)
mask[0, 4:] = 0
extra_args = [(torch.randint(0, 100, (3, 6)), mask, torch.randint(0, 100, (3, 5)))]
tags = {"torch.model", "torch.dynamic-shape"}
requires = ["dim", "export.dynamic_shapes"]

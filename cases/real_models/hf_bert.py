# /// script
# dependencies = ["transformers"]
# ///
"""BERT encoder from transformers (tiny config, random weights) with a padding mask, dynamic batch and sequence."""

import torch
import transformers

torch.manual_seed(0)


class Encoder(torch.nn.Module):
    """Tensors in, tensors out: the hidden states and the pooled [CLS] vector instead of a ModelOutput."""

    def __init__(self):
        super().__init__()
        config = transformers.BertConfig(
            vocab_size=100,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=64,
        )
        self.bert = transformers.BertModel(config)

    def forward(self, input_ids, attention_mask):
        out = self.bert(input_ids=input_ids, attention_mask=attention_mask)
        return out.last_hidden_state, out.pooler_output


def dynamic_shapes():
    from torch.export import Dim

    batch, seq = Dim("batch", min=1, max=8), Dim("seq", min=2, max=32)
    return {"input_ids": {0: batch, 1: seq}, "attention_mask": {0: batch, 1: seq}}


model = Encoder().eval()
example_args = (torch.randint(0, 100, (2, 8)), torch.ones(2, 8, dtype=torch.long))
# Another batch and length, with right padding in the first row.
mask = torch.ones(3, 5, dtype=torch.long)
mask[0, 3:] = 0
extra_args = [(torch.randint(0, 100, (3, 5)), mask)]
tags = {"torch.model", "torch.dynamic-shape"}
requires = ["dim", "export.dynamic_shapes"]

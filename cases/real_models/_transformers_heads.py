"""What the transformers cases share: heads that return plain tensors, their dynamic shapes and inputs.

Not a case (its name starts with ``_``): the cases next to it import it, as a user's code
imports a helper beside it. It needs nothing but torch.
"""

import torch


class CausalLogits(torch.nn.Module):
    """A causal LM's logits only; use_cache=False so no key/value cache object is built or returned."""

    def __init__(self, lm):
        super().__init__()
        self.lm = lm

    def forward(self, input_ids, attention_mask):
        return self.lm(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits


def causal_dynamic_shapes():
    from torch.export import Dim

    batch, seq = Dim("batch", min=1, max=8), Dim("seq", min=2, max=32)
    return {"input_ids": {0: batch, 1: seq}, "attention_mask": {0: batch, 1: seq}}


def causal_example(vocab):
    return (torch.randint(0, vocab, (2, 8)), torch.ones(2, 8, dtype=torch.long))


def causal_extra(vocab):
    """Another batch and length, the first row left-padded as for batched generation."""
    mask = torch.ones(3, 5, dtype=torch.long)
    mask[0, :2] = 0
    return [(torch.randint(0, vocab, (3, 5)), mask)]


class Seq2SeqLogits(torch.nn.Module):
    """An encoder-decoder's logits only; use_cache=False so no key/value cache object is built or returned."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, decoder_input_ids):
        out = self.model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            decoder_input_ids=decoder_input_ids,
            use_cache=False,
        )
        return out.logits


def seq2seq_dynamic_shapes():
    from torch.export import Dim

    batch = Dim("batch", min=1, max=8)
    src, tgt = Dim("src_len", min=2, max=32), Dim("tgt_len", min=2, max=32)
    return {
        "input_ids": {0: batch, 1: src},
        "attention_mask": {0: batch, 1: src},
        "decoder_input_ids": {0: batch, 1: tgt},
    }


def seq2seq_example(vocab):
    return (torch.randint(0, vocab, (2, 8)), torch.ones(2, 8, dtype=torch.long), torch.randint(0, vocab, (2, 4)))


def seq2seq_extra(vocab):
    """Another batch, source and target length, the first source right-padded."""
    mask = torch.ones(3, 6, dtype=torch.long)
    mask[0, 4:] = 0
    return [(torch.randint(0, vocab, (3, 6)), mask, torch.randint(0, vocab, (3, 5)))]

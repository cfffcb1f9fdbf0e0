"""Self-attention with a dynamic sequence length shared by the input and its padding mask."""

import torch
import torch.nn.functional as F

torch.manual_seed(0)


class SeqAttention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(8, 24)

    def forward(self, x, keep):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=keep[:, None, :])


def dynamic_shapes():
    from torch.export import Dim

    seq = Dim("seq", min=2, max=128)
    return {"x": {1: seq}, "keep": {1: seq}}


model = SeqAttention()
example_args = (torch.randn(2, 6, 8), torch.ones(2, 6, dtype=torch.bool))
extra_args = [(torch.randn(2, 11, 8), torch.ones(2, 11, dtype=torch.bool))]
tags = {"torch.model", "torch.dynamic-shape"}
requires = ["dim", "export.dynamic_shapes", "sdpa"]

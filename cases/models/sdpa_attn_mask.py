"""`scaled_dot_product_attention` with a boolean padding mask and an explicit scale-free call."""

import torch
import torch.nn.functional as F

torch.manual_seed(0)


class MaskedAttention(torch.nn.Module):
    def forward(self, q, k, v, keep):
        mask = keep[:, None, None, :]
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


model = MaskedAttention()
example_args = (
    torch.randn(2, 3, 5, 4),
    torch.randn(2, 3, 5, 4),
    torch.randn(2, 3, 5, 4),
    torch.tensor([[True, True, True, False, False], [True, True, True, True, True]]),
)
tags = {"torch.model"}
requires = ["sdpa"]

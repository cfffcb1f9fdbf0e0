"""`scaled_dot_product_attention` with a causal mask over multi-head queries, keys and values."""

import torch
import torch.nn.functional as F

torch.manual_seed(0)


class CausalAttention(torch.nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


model = CausalAttention()
example_args = (torch.randn(2, 2, 6, 4), torch.randn(2, 2, 6, 4), torch.randn(2, 2, 6, 4))
tags = {"torch.model"}
requires = ["sdpa"]

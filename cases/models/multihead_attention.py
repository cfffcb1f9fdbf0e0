"""`nn.MultiheadAttention` (batch first, eval) with a key padding mask, returning averaged attention weights."""

import torch

torch.manual_seed(0)


class SelfAttention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = torch.nn.MultiheadAttention(8, 2, batch_first=True)

    def forward(self, x, pad):
        out, weights = self.attn(x, x, x, key_padding_mask=pad)
        return out, weights


model = SelfAttention().eval()
example_args = (torch.randn(2, 4, 8), torch.tensor([[False, False, False, True], [False, False, False, False]]))
tags = {"torch.model"}

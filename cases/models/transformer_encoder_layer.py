"""`nn.TransformerEncoderLayer` (batch first, no dropout, eval) with a source key padding mask."""

import torch

torch.manual_seed(0)


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.0, batch_first=True)

    def forward(self, x, pad):
        return self.layer(x, src_key_padding_mask=pad)


model = Encoder().eval()
example_args = (torch.randn(2, 5, 16), torch.tensor([[False] * 5, [False, False, False, True, True]]))
tags = {"torch.model"}

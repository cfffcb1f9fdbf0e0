"""A bidirectional GRU with an explicit initial hidden state."""

import torch

torch.manual_seed(0)


class BiGRU(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.GRU(4, 5, bidirectional=True)

    def forward(self, x, h0):
        out, h = self.rnn(x, h0)
        return out.sum(-1), h


model = BiGRU().eval()
example_args = (torch.randn(7, 3, 4), torch.zeros(2, 3, 5))
tags = {"torch.model"}

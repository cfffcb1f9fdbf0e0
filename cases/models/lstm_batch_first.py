"""A two-layer batch-first LSTM returning its outputs and final hidden and cell states."""

import torch

torch.manual_seed(0)


class SequenceEncoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.LSTM(6, 8, num_layers=2, batch_first=True)

    def forward(self, x):
        out, (h, c) = self.rnn(x)
        return out, h, c


model = SequenceEncoder().eval()
example_args = (torch.randn(2, 5, 6),)
tags = {"torch.model"}

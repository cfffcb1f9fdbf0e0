"""`torch.split` with uneven sizes and `chunk` return tuples of views as outputs."""

import torch

torch.manual_seed(0)


class Pieces(torch.nn.Module):
    def forward(self, x):
        a, b, c = torch.split(x, [1, 2, 3], dim=1)
        left, right = x.chunk(2, dim=0)
        return a, b * 2, c.sum(1), left, right


model = Pieces()
example_args = (torch.randn(4, 6),)
tags = {"torch.operator"}

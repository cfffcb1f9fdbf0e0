"""Scan-like and reordering ops: `cumsum`, `cumprod`, `flip` and `roll`."""

import torch

torch.manual_seed(0)


class Reorder(torch.nn.Module):
    def forward(self, x):
        return x.cumsum(1), x.cumprod(0), x.flip(-1), torch.roll(x, shifts=2, dims=1)


model = Reorder()
example_args = (torch.randn(3, 5),)
tags = {"torch.operator"}

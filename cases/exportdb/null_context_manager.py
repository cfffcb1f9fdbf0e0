"""A `contextlib.nullcontext` block is traced out of the graph."""

import contextlib

import torch

torch.manual_seed(0)


class InsideNullContext(torch.nn.Module):
    def forward(self, x):
        with contextlib.nullcontext():
            y = x.exp()
        return y - x


model = InsideNullContext()
example_args = (torch.randn(4, 2),)
tags = {"python.context-manager"}
expected = "supported"

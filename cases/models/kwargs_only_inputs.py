"""Keyword-only tensor inputs, one of them optional, passed through `example_kwargs`."""

import torch

torch.manual_seed(0)


class ScaleShift(torch.nn.Module):
    def forward(self, x, *, scale, shift=None):
        out = x * scale
        if shift is not None:
            out = out + shift
        return out


model = ScaleShift()
example_args = (torch.randn(2, 5),)
example_kwargs = {"scale": torch.randn(5), "shift": torch.randn(2, 5)}
tags = {"torch.model", "python.data-structure"}

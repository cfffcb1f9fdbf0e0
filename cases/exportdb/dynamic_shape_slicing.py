"""Slices whose bounds and steps come from input shapes are captured rather than baked in."""

import torch

torch.manual_seed(0)


class ShapeSlices(torch.nn.Module):
    def forward(self, x):
        return x[1 : x.shape[0] - 1, x.shape[1] - 3 :: 2]


model = ShapeSlices()
example_args = (torch.randn(5, 6),)
tags = {"torch.dynamic-shape"}
expected = "supported"

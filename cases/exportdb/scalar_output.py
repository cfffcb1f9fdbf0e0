"""A Python int computed from a dynamic dimension is returned as a symbolic scalar output."""

import torch

torch.manual_seed(0)


class WidthPlusTwo(torch.nn.Module):
    def forward(self, x):
        return x.shape[1] + 2


def dynamic_shapes():
    from torch.export import Dim

    return {"x": {1: Dim("width")}}


model = WidthPlusTwo()
example_args = (torch.randn(2, 5),)
extra_args = [(torch.randn(2, 9),)]
tags = {"torch.dynamic-shape"}
requires = ["dim", "export.dynamic_shapes"]
expected = "supported"

"""Named `Dim`s with bounds and a derived dimension (`2 * rows`) relating two inputs."""

import torch

torch.manual_seed(0)


class StackTwice(torch.nn.Module):
    def forward(self, x, y):
        doubled = torch.cat([x, x], dim=0)
        return doubled[:, :1] * y


def dynamic_shapes():
    from torch.export import Dim

    rows = Dim("rows", min=4, max=256)
    width = Dim("width", max=512)
    return {"x": (rows, None), "y": (2 * rows, width)}


model = StackTwice()
example_args = (torch.randn(5, 3), torch.randn(10, 6))
extra_args = [(torch.randn(8, 3), torch.randn(16, 3))]
tags = {"torch.dynamic-shape"}
requires = ["dim", "dim.derived"]
expected = "supported"

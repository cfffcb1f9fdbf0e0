"""Two dimensions the model makes equal, one marked `Dim.STATIC` and the other `Dim.DYNAMIC`: an error."""

import torch

torch.manual_seed(0)


class BroadcastRows(torch.nn.Module):
    def forward(self, x, y):
        return (x + y).sum(0)


def dynamic_shapes():
    from torch.export import Dim

    return {"x": (Dim.STATIC,), "y": (Dim.AUTO, Dim.DYNAMIC)}


model = BroadcastRows()
example_args = (torch.randn(4), torch.randn(8, 4))
tags = {"torch.dynamic-shape"}
requires = ["dim.auto", "dim.dynamic", "dim.static"]
expected = "fails"

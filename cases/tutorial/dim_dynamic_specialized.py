"""`Dim.DYNAMIC` on a dimension the model forces to a constant (a linear layer's input width) is an error."""

import torch

torch.manual_seed(0)


class WidthFixedByLinear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(5, 3)

    def forward(self, w, x):
        return self.fc(w), x * 2


def dynamic_shapes():
    from torch.export import Dim

    return {"w": (Dim.AUTO, Dim.DYNAMIC), "x": (Dim.AUTO,)}


model = WidthFixedByLinear()
example_args = (torch.randn(6, 5), torch.randn(4))
tags = {"torch.dynamic-shape"}
requires = ["dim.auto", "dim.dynamic"]
expected = "fails"

"""`Dim.AUTO` on every dimension: export discovers the relations (`x` matches `y`'s columns, `z` is their product)."""

import torch

torch.manual_seed(0)


class FourInputsAuto(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(5, 3)

    def forward(self, w, x, y, z):
        h = (x + y).flatten() + z
        return self.fc(w), h


def dynamic_shapes():
    from torch.export import Dim

    return {"w": (Dim.AUTO, Dim.AUTO), "x": (Dim.AUTO,), "y": (Dim.AUTO, Dim.AUTO), "z": (Dim.AUTO,)}


model = FourInputsAuto()
example_args = (torch.randn(6, 5), torch.randn(4), torch.randn(8, 4), torch.randn(32))
extra_args = [(torch.randn(3, 5), torch.randn(3), torch.randn(5, 3), torch.randn(15))]
tags = {"torch.dynamic-shape"}
requires = ["dim.auto"]
expected = "supported"

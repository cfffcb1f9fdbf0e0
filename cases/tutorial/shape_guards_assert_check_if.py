"""An `assert`, a `torch._check` and an `if` on shapes add guards that refine `Dim.AUTO` symbols.

The `if` relates two dimensions (`w` has two more rows than `x` has elements); the check and
the assert put bounds on them, which show up in the range constraints.
"""

import torch

torch.manual_seed(0)


class GuardedShapes(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(5, 3)

    def forward(self, w, x, y, z):
        assert w.shape[0] <= 512
        torch._check(x.shape[0] >= 4)
        if w.shape[0] == x.shape[0] + 2:
            return self.fc(w), (x + y).flatten() + z
        return w, x


def dynamic_shapes():
    from torch.export import Dim

    return {"w": (Dim.AUTO, Dim.AUTO), "x": (Dim.AUTO,), "y": (Dim.AUTO, Dim.AUTO), "z": (Dim.AUTO,)}


model = GuardedShapes()
example_args = (torch.randn(6, 5), torch.randn(4), torch.randn(8, 4), torch.randn(32))
extra_args = [(torch.randn(7, 5), torch.randn(5), torch.randn(3, 5), torch.randn(15))]
tags = {"torch.dynamic-shape", "python.assert"}
requires = ["dim.auto", "check"]
expected = "supported"

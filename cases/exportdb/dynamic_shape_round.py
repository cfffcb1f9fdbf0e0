"""Python `round()` on an expression over a dynamic dimension (ExportDB: not supported yet)."""

import torch

torch.manual_seed(0)


class RoundedHalf(torch.nn.Module):
    def forward(self, x):
        return x[: round(x.shape[0] / 3)]


def dynamic_shapes():
    from torch.export import Dim

    return {"x": {0: Dim("rows")}}


model = RoundedHalf()
example_args = (torch.randn(7, 2),)
extra_args = [(torch.randn(11, 2),)]
tags = {"torch.dynamic-shape", "python.builtin"}
requires = ["dim", "export.dynamic_shapes"]
expected = "not-supported-yet"

"""Independent named dims where the model forces equality and a constant: a violation with suggested fixes."""

import torch

torch.manual_seed(0)


class AddThenConstant(torch.nn.Module):
    def forward(self, x, y):
        return x + y + torch.ones(4, device=x.device)


def dynamic_shapes():
    from torch.export import Dim

    rows_x, rows_y, cols = Dim("rows_x"), Dim("rows_y"), Dim("cols")
    return {"x": (rows_x, cols), "y": (rows_y, cols)}


model = AddThenConstant()
example_args = (torch.randn(6, 4), torch.randn(6, 4))
tags = {"torch.dynamic-shape"}
requires = ["dim"]
expected = "fails"

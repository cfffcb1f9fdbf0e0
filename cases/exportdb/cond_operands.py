"""`cond` operands are a list of tensors matching the branch signatures; the predicate is on a dynamic dim.

Exported with a dynamic first dimension, both branches stay in the graph and the program
generalises to a shorter input that takes the other branch.
"""

import torch
from _exportdb_ops import cond

torch.manual_seed(0)


class OperandList(torch.nn.Module):
    def forward(self, x, y):
        def add(x, y):
            return x + y

        def sub(x, y):
            return x - y

        return cond(x.shape[0] > 3, add, sub, [x, y])


def dynamic_shapes():
    from torch.export import Dim

    return {"x": {0: Dim("rows")}, "y": None}


model = OperandList()
example_args = (torch.randn(5, 3), torch.randn(3))
extra_args = [(torch.randn(2, 3), torch.randn(3))]
tags = {"torch.cond", "torch.dynamic-shape"}
requires = ["dim", "export.dynamic_shapes"]
expected = "supported"

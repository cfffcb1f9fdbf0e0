"""`map` applies a body over the first dimension of a tensor, with extra arguments passed through."""

import torch
from _exportdb_ops import map

torch.manual_seed(0)


class RowwiseBody(torch.nn.Module):
    def forward(self, rows, w):
        def body(row, w):
            return row * w + 1

        return map(body, rows, w)


model = RowwiseBody()
example_args = (torch.randn(4, 3), torch.randn(3))
tags = {"torch.dynamic-shape", "torch.map"}
expected = "supported"

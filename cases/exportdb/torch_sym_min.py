"""`torch.sym_min` of a dimension and a constant (ExportDB: not supported yet)."""

import torch

torch.manual_seed(0)


class ClampedLength(torch.nn.Module):
    def forward(self, x):
        return x.mean() * torch.sym_min(x.size(1), 64)


model = ClampedLength()
example_args = (torch.randn(2, 3),)
tags = {"torch.operator"}
expected = "not-supported-yet"

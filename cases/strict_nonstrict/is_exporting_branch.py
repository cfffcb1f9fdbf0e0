"""A branch on `torch.compiler.is_exporting()` that keeps an untraceable eager path out of both export modes."""

import torch

torch.manual_seed(0)


class ExportOnlyPath(torch.nn.Module):
    def forward(self, x):
        if torch.compiler.is_exporting():
            return torch.where(x > 0, x, torch.zeros_like(x)).sum(0)
        return torch.stack([row.clamp(min=0) for row in x.unbind(0) if bool(row.sum() != 12345)]).sum(0)


model = ExportOnlyPath()
example_args = (torch.randn(4, 3),)
tags = {"python.control-flow"}
requires = ["compiler.is_exporting"]

"""`None` among the outputs, at top level and inside a dict."""

import torch

torch.manual_seed(0)


class SometimesNothing(torch.nn.Module):
    def forward(self, x):
        return x * 2, None, {"aux": None, "sum": x.sum()}


model = SometimesNothing()
example_args = (torch.randn(2, 2),)
tags = {"torch.model", "torch.pytree"}

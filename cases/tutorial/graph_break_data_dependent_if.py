"""A Python `if` on a tensor's value: a graph break that export cannot take in either mode."""

import torch

torch.manual_seed(0)


class ValueBranch(torch.nn.Module):
    def forward(self, x):
        if x.mean() > 0:
            return x.sin()
        return x.cos()


model = ValueBranch()
example_args = (torch.randn(3, 3),)
tags = {"torch.graph-break", "python.control-flow"}
expected = "fails"

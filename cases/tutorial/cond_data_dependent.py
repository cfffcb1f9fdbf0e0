"""The data-dependent `if` rewritten with `torch.cond`: both branches stay in the graph."""

import torch

torch.manual_seed(0)


class ValueBranchWithCond(torch.nn.Module):
    def forward(self, x):
        def positive(x):
            return x.sin()

        def negative(x):
            return x.cos()

        return torch.cond(x.mean() > 0, positive, negative, [x])


model = ValueBranchWithCond()
example_args = (torch.ones(3, 3),)
extra_args = [(-torch.ones(3, 3),), (torch.randn(3, 3),)]
tags = {"torch.cond", "torch.dynamic-value"}
requires = ["cond"]
expected = "supported"

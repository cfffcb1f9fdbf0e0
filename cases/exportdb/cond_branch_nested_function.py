"""`cond` branches may be nested functions that themselves call inner nested functions."""

import torch
from _exportdb_ops import cond

torch.manual_seed(0)


class NestedBranches(torch.nn.Module):
    def forward(self, x):
        def small(x):
            def helper(y):
                return x * y

            return helper(x)

        def large(x):
            def helper(y):
                return x + y

            return helper(x)

        return cond(x.shape[0] < 8, small, large, [x])


model = NestedBranches()
example_args = (torch.randn(4),)
tags = {"torch.cond", "torch.dynamic-shape"}
expected = "supported"

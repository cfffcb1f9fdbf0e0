"""`cond` branches may read variables of the enclosing function (closures), with a tensor predicate."""

import torch
from _exportdb_ops import cond

torch.manual_seed(0)


class ClosureBranches(torch.nn.Module):
    def forward(self, flag, x):
        bias = x.mean()

        def when_true(v):
            return v * 3 + bias

        def when_false(v):
            return v - bias

        return cond(flag, when_true, when_false, [x - 1])


model = ClosureBranches()
example_args = (torch.tensor(False), torch.randn(2, 3))
extra_args = [(torch.tensor(True), torch.randn(2, 3))]
tags = {"torch.cond", "python.closure"}
expected = "supported"

"""A `cond` predicate may be a Python boolean expression over shapes, not only a one-element tensor."""

import torch
from _exportdb_ops import cond

torch.manual_seed(0)


class BooleanPredicate(torch.nn.Module):
    def forward(self, x):
        wide = x.dim() == 3 and x.shape[1] > 2
        return cond(wide, lambda t: t.exp(), lambda t: t.neg(), [x])


model = BooleanPredicate()
example_args = (torch.randn(2, 5, 4),)
tags = {"torch.cond", "torch.dynamic-shape"}
expected = "supported"

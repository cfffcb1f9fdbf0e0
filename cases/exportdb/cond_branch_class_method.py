"""`cond` branches may be methods of a submodule or of the module itself.

The predicate is a shape comparison; with static shapes only one branch survives export.
"""

import torch
from _exportdb_ops import cond

torch.manual_seed(0)


class TanhBlock(torch.nn.Module):
    def squash(self, x):
        return torch.tanh(x)

    def forward(self, x):
        return self.squash(x)


class BranchOnLength(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = TanhBlock()

    def doubled(self, x):
        return x * 2

    def forward(self, x):
        return cond(x.shape[0] > 4, self.block.forward, self.doubled, [x])


model = BranchOnLength()
example_args = (torch.randn(3),)
tags = {"torch.cond", "torch.dynamic-shape"}
expected = "supported"

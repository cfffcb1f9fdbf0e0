"""Values a `cond` branch needs are passed as operands instead of being captured as nonlocals.

Tensors computed in `forward` and Python numbers (wrapped in a tensor) travel through the
operand list, which is the rewrite ExportDB recommends for closure variables.
"""

import torch
from _exportdb_ops import cond

torch.manual_seed(0)


class OperandsInsteadOfClosure(torch.nn.Module):
    def forward(self, x):
        offset = x * 0.5 + 10
        scale = 2.5

        def big(x, offset, scale):
            return x * scale + offset

        def small(x, offset, scale):
            return x / scale - offset

        return cond(x.shape[0] > 4, big, small, [x, offset, torch.tensor(scale)])


model = OperandsInsteadOfClosure()
example_args = (torch.randn(5),)
tags = {"torch.cond", "torch.dynamic-shape"}
expected = "supported"

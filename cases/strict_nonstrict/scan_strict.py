"""`scan` with a combine function returning a list `[carry, output]`, the signature noted as fragile under strict.

The output is a copy of the carry: returning the same tensor twice is rejected as aliasing
by releases that check it, even in eager mode.
"""

import torch

torch.manual_seed(0)


class ColumnTotals(torch.nn.Module):
    def forward(self, x):
        from torch._higher_order_ops.scan import scan

        def accumulate(carry, row):
            carry = carry + row
            return [carry, carry.clone()]

        total, _ = scan(accumulate, torch.zeros_like(x[0]), x)
        return total


model = ColumnTotals()
example_args = (torch.arange(12, dtype=torch.float32).reshape(4, 3),)
tags = {"torch.higher-order-op"}
requires = ["scan"]

"""`scan` carrying a running sum over the rows of an input and stacking every partial sum."""

import torch

torch.manual_seed(0)


class RunningSum(torch.nn.Module):
    def forward(self, xs):
        from torch._higher_order_ops.scan import scan

        def step(total, row):
            total = total + row
            return total, total * 2

        last, partials = scan(step, torch.zeros_like(xs[0]), xs)
        return last, partials


model = RunningSum()
example_args = (torch.randn(4, 3),)
tags = {"torch.higher-order-op"}
requires = ["scan"]
expected = "supported"

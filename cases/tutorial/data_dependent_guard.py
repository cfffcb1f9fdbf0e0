"""A Python `if` on an `.item()` value with nothing known about it: could not guard on a data-dependent expression."""

import torch

torch.manual_seed(0)


class UnhintedBranch(torch.nn.Module):
    def forward(self, k, y):
        v = k.item()
        if v // 3 >= 4:
            return y * 2
        return y + 5


model = UnhintedBranch()
example_args = (torch.tensor(20), torch.randn(4))
tags = {"torch.unbacked", "torch.dynamic-value", "python.control-flow"}
expected = "fails"

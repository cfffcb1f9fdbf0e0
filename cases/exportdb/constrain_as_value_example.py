"""`torch._check` bounds on a value read with `.item()` let export decide a Python `if` on it."""

import torch

torch.manual_seed(0)


class BoundedValueBranch(torch.nn.Module):
    def forward(self, k, x):
        v = k.item()
        torch._check(v >= 1)
        torch._check(v <= 9)
        if v < 10:
            return x.cos() * 2
        return x.sin()


model = BoundedValueBranch()
example_args = (torch.tensor(3), torch.randn(4, 4))
extra_args = [(torch.tensor(9), torch.randn(4, 4))]
tags = {"torch.dynamic-value", "torch.escape-hatch"}
requires = ["check"]
expected = "supported"

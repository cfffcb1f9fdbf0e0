"""A value read with `.item()` becomes a tensor size once `torch._check_is_size` and `torch._check` bound it."""

import torch

torch.manual_seed(0)


class SizeFromValue(torch.nn.Module):
    def forward(self, n):
        rows = n.item()
        torch._check_is_size(rows)
        torch._check(rows <= 8)
        return torch.ones((rows, 3)) * 2


model = SizeFromValue()
example_args = (torch.tensor(5),)
extra_args = [(torch.tensor(2),)]
tags = {"torch.dynamic-value", "torch.escape-hatch"}
requires = ["check", "check_is_size"]
expected = "supported"

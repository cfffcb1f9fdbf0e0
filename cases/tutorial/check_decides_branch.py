"""`torch._check` bounds on an `.item()` value let export decide the `if` that failed without them."""

import torch

torch.manual_seed(0)


class CheckedBranch(torch.nn.Module):
    def forward(self, k, y):
        v = k.item()
        torch._check(v >= 12)
        torch._check(v <= 60)
        if v // 3 >= 4:
            return y * 2
        return y + 5


model = CheckedBranch()
example_args = (torch.tensor(20), torch.randn(4))
extra_args = [(torch.tensor(59), torch.randn(4))]
tags = {"torch.unbacked", "torch.dynamic-value", "torch.escape-hatch"}
requires = ["check"]
expected = "supported"

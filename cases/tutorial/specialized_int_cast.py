"""`range()` and `int()` on an `.item()` value need a concrete integer: could not extract a specialised value."""

import torch

torch.manual_seed(0)


class RepeatByLoop(torch.nn.Module):
    def forward(self, n, row):
        k = n.item()
        stacked = torch.cat([row for _ in range(k)], dim=0)
        return stacked + int(k)


model = RepeatByLoop()
example_args = (torch.tensor(6), torch.randn(10))
tags = {"torch.unbacked", "torch.dynamic-value"}
expected = "fails"

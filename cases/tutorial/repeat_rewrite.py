"""The loop-and-cast program rewritten with `repeat`, which takes the unbacked value without casting it."""

import torch

torch.manual_seed(0)


class RepeatByOp(torch.nn.Module):
    def forward(self, n, row):
        k = n.item()
        return row.unsqueeze(0).repeat(k, 1) + k


model = RepeatByOp()
example_args = (torch.tensor(6), torch.randn(10))
extra_args = [(torch.tensor(3), torch.randn(10))]
tags = {"torch.unbacked", "torch.dynamic-value"}

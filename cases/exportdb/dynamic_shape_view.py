"""A view whose target shape is computed from `x.size()` keeps the computation, then permutes."""

import torch

torch.manual_seed(0)


class SplitLastDim(torch.nn.Module):
    def forward(self, x):
        shape = x.size()[:-1] + (3, 4)
        return x.view(*shape).transpose(1, 2)


model = SplitLastDim()
example_args = (torch.randn(5, 12),)
tags = {"torch.dynamic-shape"}
expected = "supported"

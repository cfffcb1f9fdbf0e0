"""A tensor constructor sized from an input's shape is captured with the shape expression."""

import torch

torch.manual_seed(0)


class SizedFromInput(torch.nn.Module):
    def forward(self, x):
        return torch.ones(x.shape[0] + 1, 2, device=x.device) * x.sum()


model = SizedFromInput()
example_args = (torch.randn(4, 2),)
tags = {"torch.dynamic-shape"}
expected = "supported"

"""Assignment through a boolean mask (`x[mask] = value`) on a copy of the input."""

import torch

torch.manual_seed(0)


class ZeroNegatives(torch.nn.Module):
    def forward(self, x):
        y = x.clone()
        y[y < 0] = 0.0
        return y


model = ZeroNegatives()
example_args = (torch.randn(4, 4),)
extra_args = [(torch.randn(4, 4),)]
tags = {"torch.mutation"}

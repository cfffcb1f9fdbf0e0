"""`torch.nonzero` returns a data-dependent number of rows: an unbacked output size."""

import torch

torch.manual_seed(0)


class PositivePositions(torch.nn.Module):
    def forward(self, x):
        return torch.nonzero(x > 0)


model = PositivePositions()
example_args = (torch.randn(4, 3),)
extra_args = [(torch.randn(4, 3),), (-torch.ones(4, 3),)]
tags = {"torch.unbacked", "torch.dynamic-value"}

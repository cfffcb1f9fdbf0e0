"""An in-place op on a view of a user input mutates the input itself."""

import torch

torch.manual_seed(0)


class MutateInputRow(torch.nn.Module):
    def forward(self, x):
        x[0].add_(10)
        return x.sum(0)


model = MutateInputRow()
example_args = (torch.randn(3, 2),)
tags = {"torch.mutation"}

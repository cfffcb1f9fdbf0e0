"""An in-place op on a user input is captured as an input mutation of the exported program."""

import torch

torch.manual_seed(0)


class MutateInput(torch.nn.Module):
    def forward(self, x):
        x.add_(1)
        return x.sin()


model = MutateInput()
example_args = (torch.randn(3, 2),)
tags = {"torch.mutation"}
expected = "supported"

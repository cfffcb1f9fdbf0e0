"""A Python `if` on a shape is specialised to the branch the example takes, with a guard."""

import torch

torch.manual_seed(0)


class ShapeBranch(torch.nn.Module):
    def forward(self, x):
        if x.shape[1] == 4:
            return x.relu() + 1
        return x.abs()


model = ShapeBranch()
example_args = (torch.randn(2, 4, 3),)
tags = {"torch.dynamic-shape", "python.control-flow"}
expected = "supported"

"""`forward` increments a plain int attribute of the module: a Python side effect on module state."""

import torch

torch.manual_seed(0)


class CountsCalls(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return x * 3


model = CountsCalls()
example_args = (torch.randn(2, 3),)
tags = {"python.object-model"}

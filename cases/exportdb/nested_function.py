"""A nested function that rebinds a `nonlocal` tensor is traced through."""

import torch

torch.manual_seed(0)


class NonlocalUpdate(torch.nn.Module):
    def forward(self, a, b):
        acc = a * b
        other = a + b

        def step(t):
            nonlocal acc
            acc = acc - 1
            return acc * t - other

        return step(other)


model = NonlocalUpdate()
example_args = (torch.randn(2, 3), torch.randn(3))
tags = {"python.closure"}
expected = "supported"

"""`type(obj).method(...)` on a plain Python object created in `forward` resolves to its class method."""

import torch

torch.manual_seed(0)


class Helper:
    @classmethod
    def bump(cls, t):
        return t * 2 + 1


class ReflectOnType(torch.nn.Module):
    def forward(self, x):
        h = Helper()
        return type(h).bump(x)


model = ReflectOnType()
example_args = (torch.randn(2, 4),)
tags = {"python.builtin"}
expected = "supported"

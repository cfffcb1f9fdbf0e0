"""A decorator wrapping `forward` is inlined into the exported graph."""

import functools

import torch

torch.manual_seed(0)


def halve_result(fn):
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        return fn(*args, **kwargs) / 2

    return wrapped


class DecoratedForward(torch.nn.Module):
    @halve_result
    def forward(self, a, b):
        return a * b


model = DecoratedForward()
example_args = (torch.randn(2, 4), torch.randn(2, 4))
expected = "supported"

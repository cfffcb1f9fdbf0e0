"""Outputs nested as a dict of tuples, lists and dicts are unflattened back to the same structure."""

import torch

torch.manual_seed(0)


class NestedResult(torch.nn.Module):
    def forward(self, x):
        return {
            "pair": (x + 1, [x * 2, x.mean(0)]),
            "stats": {"max": x.amax(), "min": x.amin()},
        }


model = NestedResult()
example_args = (torch.randn(3, 4),)
tags = {"torch.model", "torch.pytree", "python.data-structure"}

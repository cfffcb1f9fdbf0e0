"""Branches in Python on a tensor's value, which torch.export cannot capture: a case that fails in both modes."""

import torch


class PositiveSum(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x - 1


model = PositiveSum()
example_args = (torch.ones(3),)

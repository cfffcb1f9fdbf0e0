"""Functional dropout with `training=True` draws a random mask inside the graph."""

import torch
import torch.nn.functional as F

torch.manual_seed(0)


class AlwaysDropout(torch.nn.Module):
    def forward(self, x):
        return F.dropout(x, p=0.5, training=True) + 1


model = AlwaysDropout()
example_args = (torch.randn(4, 4),)
tags = {"python.random"}
skip_check = "dropout draws a new random mask on every call"

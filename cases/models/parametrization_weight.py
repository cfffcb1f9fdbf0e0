"""A weight parametrised with `torch.nn.utils.parametrize` (a symmetric matrix built from a free one)."""

import torch
from torch.nn.utils import parametrize

torch.manual_seed(0)


class Symmetric(torch.nn.Module):
    def forward(self, w):
        return w.triu() + w.triu(1).transpose(0, 1)


class SymmetricLinear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        parametrize.register_parametrization(self.fc, "weight", Symmetric())

    def forward(self, x):
        return self.fc(x)


model = SymmetricLinear()
example_args = (torch.randn(3, 4),)
tags = {"torch.model", "python.object-model"}

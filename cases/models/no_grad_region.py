"""A `torch.no_grad()` block inside `forward` around part of the computation."""

import torch

torch.manual_seed(0)


class PartlyFrozen(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.frozen = torch.nn.Linear(4, 4)
        self.trained = torch.nn.Linear(4, 2)

    def forward(self, x):
        with torch.no_grad():
            h = self.frozen(x).tanh()
        return self.trained(h + x)


model = PartlyFrozen()
example_args = (torch.randn(3, 4),)
tags = {"torch.model", "python.context-manager"}

"""Submodules held in `nn.ModuleList` (looped over) and `nn.ModuleDict` (picked by a constant key)."""

import torch

torch.manual_seed(0)


class Routed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList([torch.nn.Linear(4, 4) for _ in range(3)])
        self.heads = torch.nn.ModuleDict({"cls": torch.nn.Linear(4, 2), "reg": torch.nn.Linear(4, 1)})
        self.task = "cls"

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x)) + x
        return self.heads[self.task](x)


model = Routed()
example_args = (torch.randn(2, 4),)
tags = {"torch.model", "python.object-model"}

"""An MLP exported with a named dynamic batch dimension and run on other batch sizes."""

import torch

torch.manual_seed(0)


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(6, 12), torch.nn.ReLU(), torch.nn.Linear(12, 2))

    def forward(self, x):
        return self.net(x).log_softmax(-1)


def dynamic_shapes():
    from torch.export import Dim

    return {"x": {0: Dim("batch", min=2, max=1024)}}


model = MLP()
example_args = (torch.randn(4, 6),)
extra_args = [(torch.randn(2, 6),), (torch.randn(33, 6),)]
tags = {"torch.model", "torch.dynamic-shape"}
requires = ["dim", "export.dynamic_shapes"]

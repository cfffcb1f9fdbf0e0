"""The tutorial's decomposition model: conv2d and batch norm, whose ops change under `run_decompositions`."""

import torch

torch.manual_seed(0)


class ConvThenNorm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 3, 1, 1)
        self.bn = torch.nn.BatchNorm2d(3)

    def forward(self, x):
        return (self.bn(self.conv(x)),)


model = ConvThenNorm().eval()
example_args = (torch.randn(1, 1, 3, 3),)
tags = {"torch.decomposition"}
expected = "supported"

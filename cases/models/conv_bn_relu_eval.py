"""Conv2d, batch norm and ReLU in eval mode: the classic block that inference exporters fold."""

import torch

torch.manual_seed(0)


class ConvBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn = torch.nn.BatchNorm2d(8)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


model = ConvBlock().eval()
example_args = (torch.randn(2, 3, 8, 8),)
tags = {"torch.model"}

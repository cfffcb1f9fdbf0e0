"""A convolution, a ReLU and a global average pool: a second case in the same folder, without a PEP 723 block."""

import torch


class PooledConv(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, kernel_size=3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x)).mean(dim=(2, 3))


model = PooledConv().eval()
example_args = (torch.randn(2, 3, 16, 16),)

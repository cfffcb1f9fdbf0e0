"""A sub-pixel convolution: conv to r^2 channels, then `PixelShuffle` to upscale by r."""

import torch

torch.manual_seed(0)


class SubPixel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(2, 8, 3, padding=1)
        self.shuffle = torch.nn.PixelShuffle(2)

    def forward(self, x):
        return self.shuffle(self.conv(x))


model = SubPixel()
example_args = (torch.randn(1, 2, 4, 4),)
tags = {"torch.model"}

"""Gaussian noise from `torch.randn_like` and uniform noise from `torch.rand` added to the input."""

import torch

torch.manual_seed(0)


class AddNoise(torch.nn.Module):
    def forward(self, x):
        return x + 0.1 * torch.randn_like(x) + 0.01 * torch.rand(x.shape[1], device=x.device)


model = AddNoise()
example_args = (torch.randn(3, 5),)
tags = {"python.random"}
skip_check = "random noise differs between eager and exported calls"

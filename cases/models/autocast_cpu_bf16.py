"""A CPU autocast region to bfloat16 around a linear layer, cast back to float32 after it."""

import torch

torch.manual_seed(0)


class AutocastLinear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = self.fc(x)
        return y.float().relu()


model = AutocastLinear()
example_args = (torch.randn(3, 8),)
tags = {"torch.autocast", "torch.dtype", "python.context-manager"}

"""A linear layer and GELU computed in bfloat16 weights and inputs."""

import torch

torch.manual_seed(0)


class HalfPrecisionMLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.nn.functional.gelu(self.fc(x)) * 0.5


model = HalfPrecisionMLP().to(torch.bfloat16)
example_args = (torch.randn(4, 8, dtype=torch.bfloat16),)
tags = {"torch.model", "torch.dtype"}

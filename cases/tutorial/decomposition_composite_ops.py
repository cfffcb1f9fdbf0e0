"""Composite ops that the core ATen table decomposes (layer norm, GELU, SiLU, softplus, logsumexp, var_mean)."""

import torch
import torch.nn.functional as F

torch.manual_seed(0)


class ManyComposites(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(6)
        self.fc = torch.nn.Linear(6, 6)

    def forward(self, x):
        h = F.gelu(self.fc(self.norm(x)), approximate="tanh")
        h = F.silu(h) + F.softplus(h) + F.hardswish(h)
        var, mean = torch.var_mean(h, dim=-1, keepdim=True)
        return torch.logsumexp(h, dim=-1) + var.squeeze(-1) - mean.squeeze(-1)


model = ManyComposites()
example_args = (torch.randn(2, 4, 6),)
tags = {"torch.decomposition"}

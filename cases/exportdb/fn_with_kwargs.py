"""Positional, tuple, `*args`, keyword-only and `**kwargs` inputs are all flattened into graph inputs."""

import torch

torch.manual_seed(0)


class EveryArgumentKind(torch.nn.Module):
    def forward(self, first, pair, *rest, weight, **named):
        out = first
        for t in pair:
            out = out + t
        for t in rest:
            out = out * t
        out = out * weight
        return out - named["shift"] * named["gain"]


model = EveryArgumentKind()
example_args = (
    torch.randn(3),
    (torch.randn(3), torch.randn(3)),
    torch.randn(3),
    torch.randn(3),
)
example_kwargs = {"weight": torch.randn(3), "shift": torch.randn(3), "gain": torch.randn(3)}
tags = {"python.data-structure"}
expected = "supported"

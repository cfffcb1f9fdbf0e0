"""Attention scores masked with `-inf` by `masked_fill` and normalised with softmax."""

import torch

torch.manual_seed(0)


class MaskedScores(torch.nn.Module):
    def forward(self, q, k, keep):
        scores = q @ k.transpose(-1, -2) / 2.0
        scores = scores.masked_fill(~keep[:, None, :], float("-inf"))
        return torch.softmax(scores, dim=-1)


model = MaskedScores()
example_args = (
    torch.randn(2, 3, 4),
    torch.randn(2, 5, 4),
    torch.tensor([[True, True, False, True, False], [True, True, True, True, True]]),
)
tags = {"torch.operator"}

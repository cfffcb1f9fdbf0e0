"""Top-k values and indices, a descending sort, and an argmax: integer index outputs next to values."""

import torch

torch.manual_seed(0)


class Ranking(torch.nn.Module):
    def forward(self, scores):
        values, indices = scores.topk(3, dim=-1)
        ordered, order = scores.sort(dim=-1, descending=True)
        return values, indices, ordered[:, :2], order, scores.argmax(-1)


model = Ranking()
example_args = (torch.randn(2, 7),)
tags = {"torch.operator"}

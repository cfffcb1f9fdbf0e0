"""Broadcasting helpers: `expand`, `broadcast_to` and `repeat_interleave` with an int count."""

import torch

torch.manual_seed(0)


class Broadcasts(torch.nn.Module):
    def forward(self, row, col):
        grid = row.expand(3, -1) + col.broadcast_to(3, row.shape[-1])
        return grid, torch.repeat_interleave(row, 2, dim=-1)


model = Broadcasts()
example_args = (torch.randn(1, 4), torch.randn(3, 1))
tags = {"torch.operator"}

"""`gather` along a dimension and `scatter_add` into zeros with an index tensor."""

import torch

torch.manual_seed(0)


class GatherScatter(torch.nn.Module):
    def forward(self, x, idx):
        picked = torch.gather(x, 1, idx)
        out = torch.zeros(x.shape[0], 6).scatter_add(1, idx, picked)
        return picked, out


model = GatherScatter()
example_args = (torch.randn(3, 6), torch.tensor([[0, 2], [5, 5], [1, 4]]))
tags = {"torch.operator"}

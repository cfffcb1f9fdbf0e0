"""Layout changes: `permute`, `contiguous`, `narrow` and `unflatten` on a 4-d tensor."""

import torch

torch.manual_seed(0)


class Layouts(torch.nn.Module):
    def forward(self, x):
        y = x.permute(0, 2, 3, 1).contiguous()
        y = y.narrow(1, 1, 2).flatten(2)
        return y.unflatten(2, (x.shape[3], x.shape[1]))


model = Layouts()
example_args = (torch.randn(2, 3, 4, 5),)
tags = {"torch.operator"}

"""Writing through `.data` of an input: a graph break under strict export."""

import torch

torch.manual_seed(0)


class WriteThroughData(torch.nn.Module):
    def forward(self, x):
        x.data[0, 0] = 7.0
        return x * 2


model = WriteThroughData()
example_args = (torch.randn(3, 3),)
tags = {"torch.graph-break", "torch.mutation"}

"""A `for` loop with a constant trip count is unrolled; a list of tensors is returned."""

import torch

torch.manual_seed(0)


class UnrolledLoop(torch.nn.Module):
    def forward(self, x):
        outs = []
        for i in range(6):
            outs.append(x * i)
        return outs


model = UnrolledLoop()
example_args = (torch.randn(2, 2),)
tags = {"python.control-flow"}
expected = "supported"

"""Python `assert` statements on shapes, with and without a message, become guards."""

import torch

torch.manual_seed(0)


class ShapeAsserts(torch.nn.Module):
    def forward(self, x):
        assert x.shape[1] >= 2, "need at least two columns, got %d" % x.shape[1]
        assert x.shape[0] > 1
        return x[:, :2] * 4


model = ShapeAsserts()
example_args = (torch.randn(3, 4),)
tags = {"python.assert"}
expected = "supported"

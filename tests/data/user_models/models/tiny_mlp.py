# /// script
# dependencies = ["numpy"]
# ///
"""A small MLP whose first layer starts from NumPy weights, with a dynamic batch: a model owner's own case."""

import numpy
import torch
from _blocks import Residual


class TinyMLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        weights = numpy.random.default_rng(0).standard_normal((16, 8)).astype("float32")
        self.embed = torch.nn.Linear(8, 16)
        with torch.no_grad():
            self.embed.weight.copy_(torch.from_numpy(weights))
        self.body = Residual(16)
        self.head = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.head(self.body(self.embed(x)))


def dynamic_shapes():
    from torch.export import Dim

    return ({0: Dim("batch", min=1, max=64)},)


model = TinyMLP().eval()
example_args = (torch.randn(4, 8),)

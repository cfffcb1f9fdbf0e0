"""NumPy calls on a tensor inside `forward`: strict export traces them, non-strict meets a tensor without data."""

import torch

torch.manual_seed(0)


class NumpyRoundTrip(torch.nn.Module):
    def forward(self, x):
        import numpy as np

        y = np.tanh(x.numpy()) * 2
        return torch.from_numpy(y) + 1


model = NumpyRoundTrip()
example_args = (torch.randn(3, 4),)
tags = {"python.builtin"}
requires = ["numpy"]

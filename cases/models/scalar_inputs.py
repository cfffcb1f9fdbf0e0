"""Int, float and bool inputs alongside a tensor; export specialises them to the example values."""

import torch

torch.manual_seed(0)


class ScalarControlled(torch.nn.Module):
    def forward(self, x, repeats, eps, normalise):
        out = x.repeat(1, repeats)
        if normalise:
            out = out / (out.norm() + eps)
        return out


model = ScalarControlled()
example_args = (torch.randn(2, 3), 2, 1e-3, True)
tags = {"torch.model"}

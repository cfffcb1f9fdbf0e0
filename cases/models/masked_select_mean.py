"""Boolean-mask indexing `x[x > t]` whose length depends on the data, then a reduction over it."""

import torch

torch.manual_seed(0)


class MeanAboveThreshold(torch.nn.Module):
    def forward(self, x, t):
        picked = x[x > t]
        return picked.sum() / (picked.numel() + 1)


model = MeanAboveThreshold()
example_args = (torch.randn(5, 4), torch.tensor(0.2))
extra_args = [(torch.randn(5, 4), torch.tensor(-0.5))]
tags = {"torch.unbacked", "torch.dynamic-value"}

"""Arguments left at their Python defaults (a float, a bool and `None`) are specialised into the graph."""

import torch

torch.manual_seed(0)


class WithDefaults(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x, alpha=0.5, residual=True, mask=None):
        out = self.fc(x) * alpha
        if residual:
            out = out + x
        if mask is not None:
            out = out * mask
        return out


model = WithDefaults()
example_args = (torch.randn(3, 4),)
tags = {"torch.model", "python.object-model"}

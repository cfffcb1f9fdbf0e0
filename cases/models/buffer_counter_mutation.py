"""`forward` reads a registered buffer and then updates it in place: a buffer mutation of user state."""

import torch

torch.manual_seed(0)


class RunningTotal(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(3))

    def forward(self, x):
        out = x + self.total
        self.total.add_(x.sum(0))
        return out


model = RunningTotal()
example_args = (torch.randn(4, 3),)
tags = {"torch.model", "torch.mutation"}

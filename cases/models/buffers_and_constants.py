"""A persistent buffer, a non-persistent buffer and a plain tensor attribute (a lifted constant)."""

import torch

torch.manual_seed(0)


class StateKinds(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.full((4,), 2.0))
        self.register_buffer("positions", torch.arange(4, dtype=torch.float32), persistent=False)
        self.table = torch.linspace(-1, 1, 4)

    def forward(self, x):
        table = self.table if self.table.device == x.device else self.table.to(x.device)  # decided while tracing
        return x * self.scale + self.positions - table


model = StateKinds()
example_args = (torch.randn(3, 4),)
tags = {"torch.model", "python.object-model"}

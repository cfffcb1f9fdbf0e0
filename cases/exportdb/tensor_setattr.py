"""`setattr` on an input tensor with a string argument; the attribute is ignored by the graph."""

import torch

torch.manual_seed(0)


class TagTheInput(torch.nn.Module):
    def forward(self, x, name):
        setattr(x, name, torch.zeros(2))
        return x - 2


model = TagTheInput()
example_args = (torch.randn(3, 2), "note")
tags = {"python.builtin"}
expected = "supported"

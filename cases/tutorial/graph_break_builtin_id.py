"""Using `id(x)` of a tensor: a graph break under strict, a baked-in constant under non-strict.

Only a property every address has (it is positive) reaches the graph, so the exported
program is the same in every process and its graph hash compares across releases.
"""

import torch

torch.manual_seed(0)


class AddIdentity(torch.nn.Module):
    def forward(self, x):
        y = x + 1
        return y + int(id(y) > 0)


model = AddIdentity()
example_args = (torch.randn(3, 3),)
tags = {"torch.graph-break", "python.builtin"}
expected = "non-strict-only"

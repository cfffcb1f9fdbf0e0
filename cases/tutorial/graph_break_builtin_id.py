"""Adding `id(x)` to a tensor: a graph break under strict, a baked-in constant under non-strict.

The identity of the traced tensor is an address, so the exported number differs from any
later eager call by design; only whether export succeeds is compared.
"""

import torch

torch.manual_seed(0)


class AddIdentity(torch.nn.Module):
    def forward(self, x):
        y = x + 1
        return y + id(y) % 5


model = AddIdentity()
example_args = (torch.randn(3, 3),)
tags = {"torch.graph-break", "python.builtin"}
expected = "non-strict-only"
skip_check = "id() is specialised to the address of the traced tensor, which eager calls do not share"

"""Starred unpacking of a list input is a static construct erased by tracing."""

from typing import List

import torch

torch.manual_seed(0)


class StarredUnpack(torch.nn.Module):
    def forward(self, items: List[torch.Tensor]):
        head, *tail = items
        return head * tail[-1] + tail[0]


model = StarredUnpack()
example_args = ([torch.randn(2, 3), torch.tensor(2.0), torch.randn(3)],)
tags = {"python.control-flow", "python.data-structure"}
expected = "supported"

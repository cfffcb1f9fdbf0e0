"""Indexing with an `.item()` value without bounds: export cannot tell whether the index is in range."""

import torch

torch.manual_seed(0)


class IndexByValue(torch.nn.Module):
    def forward(self, i, table):
        return table[i.item()] * 3


model = IndexByValue()
example_args = (torch.tensor(11), torch.randn(40))
tags = {"torch.unbacked", "torch.dynamic-value"}
expected = "fails"

"""`torch._check` that an `.item()` index lies within the table makes the indexing exportable."""

import torch

torch.manual_seed(0)


class CheckedIndex(torch.nn.Module):
    def forward(self, i, table):
        j = i.item()
        torch._check(j >= 0)
        torch._check(j < table.shape[0])
        return table[j] * 3


model = CheckedIndex()
example_args = (torch.tensor(11), torch.randn(40))
extra_args = [(torch.tensor(39), torch.randn(40))]
tags = {"torch.unbacked", "torch.dynamic-value", "torch.escape-hatch"}
requires = ["check"]
expected = "supported"

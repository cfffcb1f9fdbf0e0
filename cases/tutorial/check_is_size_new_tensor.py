"""`torch._check_is_size` marks an `.item()` value as a size so it can shape a new tensor."""

import torch

torch.manual_seed(0)


class ZerosOfValueRows(torch.nn.Module):
    def forward(self, n, row):
        k = n.item()
        torch._check_is_size(k)
        torch._check(k <= 16)
        return row.new_zeros(k, row.shape[0]) + row


model = ZerosOfValueRows()
example_args = (torch.tensor(5), torch.randn(3))
extra_args = [(torch.tensor(16), torch.randn(3))]
tags = {"torch.unbacked", "torch.dynamic-value", "torch.escape-hatch"}
requires = ["check", "check_is_size"]
expected = "supported"

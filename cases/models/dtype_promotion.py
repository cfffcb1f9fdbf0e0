"""Type promotion between int64, int32, bool and float tensors, and true/floor division of integers."""

import torch

torch.manual_seed(0)


class MixedDtypes(torch.nn.Module):
    def forward(self, counts, flags, x):
        ratio = counts / 4
        floors = torch.div(counts, 3, rounding_mode="floor")
        small = counts.to(torch.int32) + flags
        return ratio + x, floors * 2, small, (x * flags).sum()


model = MixedDtypes()
example_args = (torch.tensor([1, 5, 9, 14]), torch.tensor([True, False, True, True]), torch.randn(4))
tags = {"torch.dtype"}

"""A dimension declared as `4 * d` is known to be divisible by 4, so it can be reshaped into groups of four."""

import torch

torch.manual_seed(0)


class GroupsOfFour(torch.nn.Module):
    def forward(self, x):
        return x.reshape(-1, 4, x.shape[1]).sum(dim=1)


def dynamic_shapes():
    from torch.export import Dim

    groups = Dim("groups", min=4, max=512)
    return {"x": (4 * groups, None)}


model = GroupsOfFour()
example_args = (torch.randn(20, 3),)
extra_args = [(torch.randn(32, 3),)]
tags = {"torch.dynamic-shape"}
requires = ["dim", "dim.derived"]
expected = "supported"

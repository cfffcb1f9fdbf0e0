"""Calling torch's pytree `tree_flatten` inside `forward` on a dict input is traced."""

import torch
from torch.utils import _pytree as pytree

torch.manual_seed(0)


class FlattenInside(torch.nn.Module):
    def forward(self, tree):
        leaves, _ = pytree.tree_flatten(tree)
        return leaves[0] * 2 + leaves[-1]


model = FlattenInside()
example_args = ({"a": torch.randn(2, 3), "b": torch.randn(2, 3)},)
expected = "supported"

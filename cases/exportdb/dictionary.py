"""Dictionaries built inside `forward` are traced away; a dict output is flattened."""

import torch

torch.manual_seed(0)


class DictScratchpad(torch.nn.Module):
    def forward(self, x, k):
        scratch = {}
        scratch["sq"] = x * x
        scratch["scaled"] = scratch["sq"] * k
        return {"out": scratch["scaled"] + 1}


model = DictScratchpad()
example_args = (torch.randn(3, 2), torch.tensor(3))
tags = {"python.data-structure"}
expected = "supported"

"""Reassigning a module attribute holding a list of tensors during `forward` (ExportDB: not supported yet)."""

import torch

torch.manual_seed(0)


class ReplaceCachedList(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = [torch.randn(2, 2), torch.randn(2, 2)]

    def fresh_cache(self):
        return [torch.ones(2, 2), torch.ones(2, 2)]

    def forward(self, x):
        self.cache = self.fresh_cache()
        return x.mean() + self.cache[1].mean()


model = ReplaceCachedList()
example_args = (torch.randn(2, 2),)
tags = {"python.object-model"}
expected = "not-supported-yet"

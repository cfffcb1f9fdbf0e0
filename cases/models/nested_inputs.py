"""A dict input holding a tuple that holds a list of tensors, flattened into graph inputs."""

import torch

torch.manual_seed(0)


class NestedBatch(torch.nn.Module):
    def forward(self, batch):
        first, rest = batch["features"]
        total = first
        for t in rest:
            total = total + t
        return total * batch["mask"]


model = NestedBatch()
example_args = ({"features": (torch.randn(2, 3), [torch.randn(2, 3), torch.randn(2, 3)]), "mask": torch.ones(2, 3)},)
tags = {"torch.model", "torch.pytree", "python.data-structure"}

"""A dataclass input registered with `torch.export.register_dataclass` is flattened into its tensor fields."""

import inspect
from dataclasses import dataclass

import torch
import torch.utils._pytree as pytree

torch.manual_seed(0)


@dataclass
class TokenBatch:
    ids: torch.Tensor
    weights: torch.Tensor


class WeightedEmbedding(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(10, 4)

    def forward(self, batch):
        return (self.embed(batch.ids) * batch.weights.unsqueeze(-1)).sum(1)


def example_args():
    # Registered when the inputs are built, so importing the case needs no export API.
    if TokenBatch not in getattr(pytree, "SUPPORTED_NODES", {}):
        # A serialised name lets torch.export.save write the type; older releases take no name.
        options = {}
        if "serialized_type_name" in inspect.signature(torch.export.register_dataclass).parameters:
            options["serialized_type_name"] = "export_matrix_cases.TokenBatch"
        torch.export.register_dataclass(TokenBatch, **options)
    return (TokenBatch(ids=torch.tensor([[1, 2, 3], [4, 5, 6]]), weights=torch.rand(2, 3)),)


model = WeightedEmbedding()
tags = {"torch.model", "torch.pytree"}
requires = ["export.register_dataclass"]

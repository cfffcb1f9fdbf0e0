"""A registered dataclass returned from `forward` is rebuilt by the exported program."""

import inspect
from dataclasses import dataclass

import torch
import torch.utils._pytree as pytree

torch.manual_seed(0)


@dataclass
class Prediction:
    logits: torch.Tensor
    probs: torch.Tensor


class Classifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(5, 3)

    def forward(self, x):
        logits = self.fc(x)
        return Prediction(logits=logits, probs=logits.softmax(-1))


def example_args():
    if Prediction not in getattr(pytree, "SUPPORTED_NODES", {}):
        # A serialised name lets torch.export.save write the type; older releases take no name.
        options = {}
        if "serialized_type_name" in inspect.signature(torch.export.register_dataclass).parameters:
            options["serialized_type_name"] = "export_matrix_cases.Prediction"
        torch.export.register_dataclass(Prediction, **options)
    return (torch.randn(2, 5),)


model = Classifier()
tags = {"torch.model", "torch.pytree"}
requires = ["export.register_dataclass"]

"""A batch of one in the example specialises the batch dimension even under `Dim.AUTO`: batch 2 is then rejected."""

import torch

torch.manual_seed(0)


def dynamic_shapes():
    from torch.export import Dim

    return {"input": (Dim.AUTO, Dim.STATIC)}


model = torch.nn.Linear(4, 3)
example_args = (torch.randn(1, 4),)
extra_args = [(torch.randn(2, 4),)]
tags = {"torch.dynamic-shape"}
requires = ["dim.auto", "dim.static"]
expected = "fails"

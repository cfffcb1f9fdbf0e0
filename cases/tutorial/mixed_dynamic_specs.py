"""One `dynamic_shapes` spec mixing `Dim.AUTO`, `None` for a whole tensor, and `None` for int and bool inputs."""

import torch

torch.manual_seed(0)


class MixedInputs(torch.nn.Module):
    def forward(self, tensor_0, tensor_1, int_val, bool_val):
        out = tensor_0 * int_val
        if bool_val:
            return out + tensor_1.sum()
        return out - tensor_1.mean()


def dynamic_shapes():
    from torch.export import Dim

    return {"tensor_0": (Dim.AUTO, None), "tensor_1": None, "int_val": None, "bool_val": None}


model = MixedInputs()
example_args = (torch.randn(4, 4), torch.randn(3, 3), 16, False)
extra_args = [(torch.randn(7, 4), torch.randn(3, 3), 16, False)]
tags = {"torch.dynamic-shape"}
requires = ["dim.auto"]
expected = "supported"

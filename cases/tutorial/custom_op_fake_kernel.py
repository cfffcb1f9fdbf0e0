"""A Python custom operator with a fake (meta) kernel appears as one node in the exported graph."""

import torch
from _tutorial_ops import shifted_relu

torch.manual_seed(0)


class AroundCustomOp(torch.nn.Module):
    def forward(self, x):
        return shifted_relu()(x.sin()).cos()


def example_args():
    # Registering here, before export, keeps the registration out of the traced code.
    shifted_relu()
    return (torch.randn(3, 3),)


model = AroundCustomOp()
tags = {"torch.custom-op"}
requires = ["custom_op", "register_fake"]
expected = "supported"

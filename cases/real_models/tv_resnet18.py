# /// script
# dependencies = ["torchvision"]
# ///
"""ResNet-18 from torchvision (random weights) exported with a dynamic batch dimension."""

import torch
import torchvision

torch.manual_seed(0)


def dynamic_shapes():
    from torch.export import Dim

    return ({0: Dim("batch", min=1, max=64)},)


# eval(): batch norm uses its running statistics, as in inference.
model = torchvision.models.resnet18(weights=None).eval()
# 64x64 keeps the run short; the adaptive pooling makes any size above 32 work.
example_args = (torch.randn(2, 3, 64, 64),)
extra_args = [(torch.randn(3, 3, 64, 64),)]
tags = {"torch.model", "torch.dynamic-shape"}
requires = ["dim", "export.dynamic_shapes"]
expected = "supported"

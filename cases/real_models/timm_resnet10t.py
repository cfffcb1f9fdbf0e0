# /// script
# dependencies = ["timm"]
# ///
"""ResNet-10-T from timm (random weights; deep tiered stem, average-pool downsampling) with a dynamic batch."""

import timm
import torch

torch.manual_seed(0)


def dynamic_shapes():
    from torch.export import Dim

    return ({0: Dim("batch", min=1, max=64)},)


model = timm.create_model("resnet10t", pretrained=False).eval()
example_args = (torch.randn(2, 3, 64, 64),)
extra_args = [(torch.randn(3, 3, 64, 64),)]
tags = {"torch.model", "torch.dynamic-shape"}
requires = ["dim", "export.dynamic_shapes"]

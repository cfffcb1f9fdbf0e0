# /// script
# dependencies = ["torchvision"]
# ///
"""MobileNetV3-Small from torchvision (random weights; hardswish, squeeze-excitation) with a dynamic batch."""

import torch
import torchvision

torch.manual_seed(0)


def dynamic_shapes():
    from torch.export import Dim

    return ({0: Dim("batch", min=1, max=64)},)


model = torchvision.models.mobilenet_v3_small(weights=None).eval()
example_args = (torch.randn(2, 3, 64, 64),)
extra_args = [(torch.randn(3, 3, 64, 64),)]
tags = {"torch.model", "torch.dynamic-shape"}
requires = ["dim", "export.dynamic_shapes"]
expected = "supported"

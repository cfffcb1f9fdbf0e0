# /// script
# dependencies = ["torchvision"]
# ///
"""ConvNeXt-Tiny from torchvision (random weights; depthwise 7x7 convs, channels-last LayerNorm), dynamic batch."""

import torch
import torchvision

torch.manual_seed(0)


def dynamic_shapes():
    from torch.export import Dim

    return ({0: Dim("batch", min=1, max=64)},)


model = torchvision.models.convnext_tiny(weights=None).eval()
# 64x64: the four downsamplings (4, 2, 2, 2) leave a 2x2 map, enough for the 7x7 convs' padding.
example_args = (torch.randn(2, 3, 64, 64),)
extra_args = [(torch.randn(3, 3, 64, 64),)]
tags = {"torch.model", "torch.dynamic-shape"}
requires = ["dim", "export.dynamic_shapes"]
expected = "supported"

# /// script
# dependencies = ["torchvision"]
# ///
"""Swin-T from torchvision (random weights; shifted-window attention, padding to the window) with a dynamic batch."""

import torch
import torchvision

torch.manual_seed(0)


def dynamic_shapes():
    from torch.export import Dim

    return ({0: Dim("batch", min=1, max=64)},)


model = torchvision.models.swin_t(weights=None).eval()
# 64x64: the stages see 16, 8, 4 and 2 patches a side, padded up to the 7x7 window.
example_args = (torch.randn(2, 3, 64, 64),)
extra_args = [(torch.randn(3, 3, 64, 64),)]
tags = {"torch.model", "torch.dynamic-shape"}
requires = ["dim", "export.dynamic_shapes"]
expected = "supported"

# /// script
# dependencies = ["torchvision"]
# ///
"""ViT-B/16 from torchvision (random weights) on 32x32 images (four patches) with a dynamic batch."""

import torch
import torchvision

torch.manual_seed(0)


def dynamic_shapes():
    from torch.export import Dim

    return ({0: Dim("batch", min=1, max=64)},)


# The full ViT-B/16 encoder (12 layers, width 768); image_size=32 keeps the sequence at 4 patches
# plus the class token. vit_b_16 accepts image_size only without pretrained weights.
model = torchvision.models.vit_b_16(weights=None, image_size=32).eval()
example_args = (torch.randn(2, 3, 32, 32),)
extra_args = [(torch.randn(3, 3, 32, 32),)]
tags = {"torch.model", "torch.dynamic-shape"}
requires = ["dim", "export.dynamic_shapes"]
expected = "supported"

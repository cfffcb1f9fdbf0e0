# /// script
# dependencies = ["timm"]
# ///
"""ViT-Tiny/16 from timm (random weights) built for 32x32 images (four patches) with a dynamic batch."""

import timm
import torch

torch.manual_seed(0)


def dynamic_shapes():
    from torch.export import Dim

    return ({0: Dim("batch", min=1, max=64)},)


# img_size=32 sizes the position embedding for a 2x2 patch grid plus the class token.
model = timm.create_model("vit_tiny_patch16_224", pretrained=False, img_size=32).eval()
example_args = (torch.randn(2, 3, 32, 32),)
extra_args = [(torch.randn(3, 3, 32, 32),)]
tags = {"torch.model", "torch.dynamic-shape"}
requires = ["dim", "export.dynamic_shapes"]

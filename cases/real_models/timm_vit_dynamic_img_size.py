# /// script
# dependencies = ["timm"]
# ///
"""ViT-Tiny/16 from timm (random weights) with dynamic_img_size=True: batch, height and width all dynamic.

The position embedding is resampled (bicubic interpolation) to each input's patch grid, so
the grid size is computed from the symbolic image size.
"""

import timm
import torch

torch.manual_seed(0)


def dynamic_shapes():
    from torch.export import Dim

    # Height and width stay multiples of the 16-pixel patch: 16 * k.
    return ({0: Dim("batch", min=1, max=16), 2: 16 * Dim("rows", min=1, max=8), 3: 16 * Dim("cols", min=1, max=8)},)


model = timm.create_model("vit_tiny_patch16_224", pretrained=False, img_size=32, dynamic_img_size=True).eval()
example_args = (torch.randn(2, 3, 32, 48),)
extra_args = [(torch.randn(3, 3, 64, 32),)]
tags = {"torch.model", "torch.dynamic-shape"}
requires = ["dim", "dim.derived", "export.dynamic_shapes"]

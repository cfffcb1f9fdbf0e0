# /// script
# dependencies = ["torchvision"]
# ///
"""EfficientNet-B0 from torchvision (random weights; SiLU, squeeze-excitation, stochastic depth), dynamic batch."""

import torch
import torchvision

torch.manual_seed(0)


def dynamic_shapes():
    from torch.export import Dim

    return ({0: Dim("batch", min=1, max=64)},)


# eval(): stochastic depth and dropout are off, so eager and exported runs agree.
model = torchvision.models.efficientnet_b0(weights=None).eval()
example_args = (torch.randn(2, 3, 64, 64),)
extra_args = [(torch.randn(3, 3, 64, 64),)]
tags = {"torch.model", "torch.dynamic-shape"}
requires = ["dim", "export.dynamic_shapes"]
expected = "supported"

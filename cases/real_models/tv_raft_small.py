# /// script
# dependencies = ["torchvision"]
# ///
"""RAFT-small optical flow from torchvision (random weights): two 128x128 frames, four refinements, dynamic batch."""

import torch
import torchvision

torch.manual_seed(0)


def dynamic_shapes():
    from torch.export import Dim

    batch = Dim("batch", min=1, max=16)
    # The frames share their batch; num_flow_updates is a Python int, fixed at export.
    return {"image1": {0: batch}, "image2": {0: batch}, "num_flow_updates": None}


model = torchvision.models.optical_flow.raft_small(weights=None).eval()
# 128x128 is the smallest size RAFT takes: features are 1/8 of the image and the 4-level
# correlation pyramid needs feature maps of at least 16x16.
example_args = (torch.randn(2, 3, 128, 128), torch.randn(2, 3, 128, 128))
# Fewer refinement steps than the default 12 keep the run short; the output is the list of flows.
example_kwargs = {"num_flow_updates": 4}
extra_args = [(torch.randn(3, 3, 128, 128), torch.randn(3, 3, 128, 128))]
tags = {"torch.model", "torch.dynamic-shape"}
requires = ["dim", "export.dynamic_shapes"]

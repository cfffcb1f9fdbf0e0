# /// script
# dependencies = ["torchvision"]
# ///
"""Faster R-CNN with a MobileNetV3-Large 320 FPN backbone from torchvision (random weights), eval mode, one image.

Detection models resize their input, filter proposals by score and run non-maximum
suppression: the number of boxes depends on the data, and the output is a list of dicts.
"""

import torch
import torchvision

torch.manual_seed(0)

# weights_backbone=None as well: the default would download ImageNet weights for the backbone.
# box_score_thresh=0.0: random weights score every class near 1/91, below the default 0.05,
# which would leave no boxes to compare; this way eager returns the full 100 detections.
model = torchvision.models.detection.fasterrcnn_mobilenet_v3_large_320_fpn(
    weights=None, weights_backbone=None, box_score_thresh=0.0
).eval()
# The model takes a list of 3xHxW images of any size and resizes them to 320 on the short side.
example_args = ([torch.rand(3, 120, 160)],)
extra_args = [([torch.rand(3, 120, 160)],)]
tags = {"torch.model", "torch.dynamic-value"}

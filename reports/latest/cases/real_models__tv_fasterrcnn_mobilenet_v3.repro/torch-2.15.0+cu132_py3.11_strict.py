# Reproduces, without torch-export-matrix, the failure of the cell
#   torch-2.15.0+cu132/strict/real_models/tv_fasterrcnn_mobilenet_v3
#
# Recorded on torch 2.15.0+cu132 (variant pypi), Python 3.11:
#   fail at export: torch._dynamo.exc.UserError: Consider annotating your code using torch._check*(). Could not guard on data-dependent expression Eq(4*u1, 0) (unhinted: Eq(4*u1, 0)).  (Size-like symbols: u1)
# This script reproduces the export step: torch.export.export.
# It runs: eager, then export; strict=True.
#
# Install, in a fresh environment of Python 3.11:
#   pip install torch==2.15.0 numpy torchvision==0.29.2
#   (with those, the cell's environment had: pillow==13.0.0)
# then run this file with that Python. Where the failure reproduces, it raises (the traceback ends
# with the error); where it does not, it prints 'did not reproduce'.
#
# The same cell with torch-export-matrix, from its checkout:
#   export-matrix check cases/real_models/tv_fasterrcnn_mobilenet_v3.py --torch 2.15.0 --variant pypi --mode strict --python 3.11
#
# Below: the case, cases/real_models/tv_fasterrcnn_mobilenet_v3.py, as it was where this script was
# written, then what torch-export-matrix does with a case (matrix/worker/cell.py), in plain torch.

# --------------------------------------------------------------------------------------------------
# The case: cases/real_models/tv_fasterrcnn_mobilenet_v3.py
# --------------------------------------------------------------------------------------------------

# (its PEP 723 block of dependencies is the install line at the top)
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

# --------------------------------------------------------------------------------------------------
# What torch-export-matrix does with the case, in plain torch.
# --------------------------------------------------------------------------------------------------
import copy
import inspect

import torch
import torch.export

STRICT = True  # the cell's mode: strict


def _clone(value):
    """A deep copy, so that what one step does to its inputs never reaches the next one."""
    try:
        return copy.deepcopy(value)
    except Exception:
        return value


def inputs():
    """The case's example inputs, keyword inputs, dynamic shapes and further inputs, as the cell reads them."""
    args = example_args
    kwargs = {}
    shapes = None
    extra = list(extra_args)
    return args, kwargs, shapes, extra


def export(args, kwargs, shapes):
    """torch.export.export as the cell calls it; before torch 2.2, export has no `strict` and is strict only."""
    options = {}
    if kwargs:
        options["kwargs"] = _clone(kwargs)
    if shapes is not None:
        options["dynamic_shapes"] = shapes
    if "strict" in inspect.signature(torch.export.export).parameters:
        options["strict"] = STRICT
    print("torch %s: torch.export.export(..., strict=%s)" % (torch.__version__, STRICT), flush=True)
    return torch.export.export(model, _clone(args), **options)


def main():
    """The steps that reproduce the recorded failure, in the order the cell ran them."""
    args, kwargs, shapes, extra = inputs()
    # Eager first, on copies of the model and of each input, as the cell runs the case before exporting.
    print("torch %s: the eager run" % torch.__version__, flush=True)
    eager = _clone(model)
    calls = [(_clone(a), _clone(kwargs)) for a in [args, *extra]]
    expected = [eager(*a, **k) for a, k in calls]
    ep = export(args, kwargs, shapes)
    print("did not reproduce: every step ran without the recorded failure on torch %s" % torch.__version__)


if __name__ == "__main__":
    main()

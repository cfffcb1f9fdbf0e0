# Reproduces, without torch-export-matrix, the failure of the cell
#   torch-2.13.0+cpu/non-strict/real_models/timm_vit_tiny
#
# Recorded on torch 2.13.0+cpu (variant cpu), Python 3.11:
#   case-error at load: matrix.worker.case.CaseError: timm 1.0.31 fails on torch 2.13.0+cpu as the case loads: RuntimeError: operator torchvision::nms does not exist
# This script reproduces the case failing on this release as it loads, before any export.
# It runs: eager, then export; strict=False.
#
# Install, in a fresh environment of Python 3.11:
#   pip install torch==2.13.0+cpu numpy timm==1.0.31 --extra-index-url https://download.pytorch.org/whl/cpu
#   (with those, the cell's environment had: anyio==4.16.0, click==8.5.1, h11==0.16.0, hf-xet==1.8.0, httpcore2==2.16.2, httpx2==2.16.2, huggingface-hub==2.4.0, idna==3.20, packaging==26.3, pillow==13.0.0, pyyaml==6.0.3, safetensors==0.8.0, torchvision==0.28.0, tqdm==4.70.1, truststore==0.10.5)
# then run this file with that Python. Where the failure reproduces, it raises (the traceback ends
# with the error); where it does not, it prints 'did not reproduce'.
#
# The same cell with torch-export-matrix, from its checkout:
#   export-matrix check cases/real_models/timm_vit_tiny.py --torch 2.13.0+cpu --variant cpu --mode non-strict --python 3.11
#
# Below: the case, cases/real_models/timm_vit_tiny.py, as it was where this script was written, then
# what torch-export-matrix does with a case (matrix/worker/cell.py), in plain torch.

# --------------------------------------------------------------------------------------------------
# The case: cases/real_models/timm_vit_tiny.py
# --------------------------------------------------------------------------------------------------

# (its PEP 723 block of dependencies is the install line at the top)
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

# --------------------------------------------------------------------------------------------------
# What torch-export-matrix does with the case, in plain torch.
# --------------------------------------------------------------------------------------------------
import copy
import inspect

import torch
import torch.export

STRICT = False  # the cell's mode: non-strict


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
    shapes = dynamic_shapes()
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

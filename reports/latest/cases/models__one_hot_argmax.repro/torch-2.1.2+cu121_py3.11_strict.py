# Reproduces, without torch-export-matrix, the failure of the cell
#   torch-2.1.2+cu121/strict/models/one_hot_argmax
#
# Recorded on torch 2.1.2+cu121 (variant pypi), Python 3.11:
#   fail at export: torch._dynamo.exc.TorchRuntimeError: Failed running call_function <built-in function one_hot>(*(FakeTensor(..., size=(3,), dtype=torch.int64),), **{'num_classes': 5}):
# This script reproduces the export step: torch.export.export.
# It runs: eager, then export; strict=True.
#
# Install, in a fresh environment of Python 3.11:
#   pip install torch==2.1.2 'numpy<2' 'setuptools<81'
# then run this file with that Python. Where the failure reproduces, it raises (the traceback ends
# with the error); where it does not, it prints 'did not reproduce'.
#
# The same cell with torch-export-matrix, from its checkout:
#   export-matrix check cases/models/one_hot_argmax.py --torch 2.1.2 --variant pypi --mode strict --python 3.11
#
# Below: the case, cases/models/one_hot_argmax.py, as it was where this script was written, then
# what torch-export-matrix does with a case (matrix/worker/cell.py), in plain torch.

# --------------------------------------------------------------------------------------------------
# The case: cases/models/one_hot_argmax.py
# --------------------------------------------------------------------------------------------------

"""`F.one_hot` of an argmax with an explicit class count, turned back into a float mask."""

import torch
import torch.nn.functional as F

torch.manual_seed(0)


class HardChoice(torch.nn.Module):
    def forward(self, logits):
        choice = F.one_hot(logits.argmax(-1), num_classes=5)
        return choice.to(logits.dtype) * logits


model = HardChoice()
example_args = (torch.randn(3, 5),)
tags = {"torch.operator"}

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
    extra = []
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

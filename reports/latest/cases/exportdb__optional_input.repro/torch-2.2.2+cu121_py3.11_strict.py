# Reproduces, without torch-export-matrix, the failure of the cell
#   torch-2.2.2+cu121/strict/exportdb/optional_input
#
# Recorded on torch 2.2.2+cu121 (variant pypi), Python 3.11:
#   fail at export: AssertionError: graph-captured input #2, of type <class 'torch.Tensor'>, is not among original inputs of types: (<class 'torch.Tensor'>)
# This script reproduces the export step: torch.export.export.
# It runs: eager, then export; strict=True.
#
# Install, in a fresh environment of Python 3.11:
#   pip install torch==2.2.2 'numpy<2' setuptools
# then run this file with that Python. Where the failure reproduces, it raises (the traceback ends
# with the error); where it does not, it prints 'did not reproduce'.
#
# The same cell with torch-export-matrix, from its checkout:
#   export-matrix check cases/exportdb/optional_input.py --torch 2.2.2 --variant pypi --mode strict --python 3.11
#
# Below: the case, cases/exportdb/optional_input.py, as it was where this script was written, then
# what torch-export-matrix does with a case (matrix/worker/cell.py), in plain torch.

# --------------------------------------------------------------------------------------------------
# The case: cases/exportdb/optional_input.py
# --------------------------------------------------------------------------------------------------

"""An optional input whose default is a tensor, left out of the call (ExportDB: not supported yet)."""

import torch

torch.manual_seed(0)

DEFAULT_OFFSET = torch.randn(2, 3)


class DefaultTensorArgument(torch.nn.Module):
    def forward(self, x, offset=DEFAULT_OFFSET):
        if offset is None:
            return x
        if offset.device != x.device:  # decided while tracing: the default lives on the CPU, x may not
            offset = offset.to(x.device)
        return x * offset


model = DefaultTensorArgument()
example_args = (torch.randn(2, 3),)
tags = {"python.object-model"}
expected = "not-supported-yet"

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

# Reproduces, without torch-export-matrix, the failure of the cell
#   torch-2.2.2+cu121/non-strict/tutorial/constraint_violation
#
# Recorded on torch 2.2.2+cu121 (variant pypi), Python 3.11:
#   fail at export: AssertionError: dynamic shape NYI
# This script reproduces the export step: torch.export.export.
# It runs: eager, then export; strict=False.
#
# Install, in a fresh environment of Python 3.11:
#   pip install torch==2.2.2 'numpy<2' setuptools
# then run this file with that Python. Where the failure reproduces, it raises (the traceback ends
# with the error); where it does not, it prints 'did not reproduce'.
#
# The same cell with torch-export-matrix, from its checkout:
#   export-matrix check cases/tutorial/constraint_violation.py --torch 2.2.2 --variant pypi --mode non-strict --python 3.11
#
# Below: the case, cases/tutorial/constraint_violation.py, as it was where this script was written,
# then what torch-export-matrix does with a case (matrix/worker/cell.py), in plain torch.

# --------------------------------------------------------------------------------------------------
# The case: cases/tutorial/constraint_violation.py
# --------------------------------------------------------------------------------------------------

"""Independent named dims where the model forces equality and a constant: a violation with suggested fixes."""

import torch

torch.manual_seed(0)


class AddThenConstant(torch.nn.Module):
    def forward(self, x, y):
        return x + y + torch.ones(4, device=x.device)


def dynamic_shapes():
    from torch.export import Dim

    rows_x, rows_y, cols = Dim("rows_x"), Dim("rows_y"), Dim("cols")
    return {"x": (rows_x, cols), "y": (rows_y, cols)}


model = AddThenConstant()
example_args = (torch.randn(6, 4), torch.randn(6, 4))
tags = {"torch.dynamic-shape"}
requires = ["dim"]
expected = "fails"

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

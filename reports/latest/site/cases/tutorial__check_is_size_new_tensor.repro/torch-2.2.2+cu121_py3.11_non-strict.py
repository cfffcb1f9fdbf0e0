# Reproduces, without torch-export-matrix, the failure of the cell
#   torch-2.2.2+cu121/non-strict/tutorial/check_is_size_new_tensor
#
# Recorded on torch 2.2.2+cu121 (variant pypi), Python 3.11:
#   fail at export: torch._subclasses.fake_tensor.DataDependentOutputException: aten._local_scalar_dense.default
# This script reproduces the export step: torch.export.export.
# It runs: eager, then export; strict=False.
#
# Install, in a fresh environment of Python 3.11:
#   pip install torch==2.2.2 'numpy<2' setuptools
# then run this file with that Python. Where the failure reproduces, it raises (the traceback ends
# with the error); where it does not, it prints 'did not reproduce'.
#
# The same cell with torch-export-matrix, from its checkout:
#   export-matrix check cases/tutorial/check_is_size_new_tensor.py --torch 2.2.2 --variant pypi --mode non-strict --python 3.11
#
# Below: the case, cases/tutorial/check_is_size_new_tensor.py, as it was where this script was
# written, then what torch-export-matrix does with a case (matrix/worker/cell.py), in plain torch.

# --------------------------------------------------------------------------------------------------
# The case: cases/tutorial/check_is_size_new_tensor.py
# --------------------------------------------------------------------------------------------------

"""`torch._check_is_size` marks an `.item()` value as a size so it can shape a new tensor."""

import torch

torch.manual_seed(0)


class ZerosOfValueRows(torch.nn.Module):
    def forward(self, n, row):
        k = n.item()
        torch._check_is_size(k)
        torch._check(k <= 16)
        return row.new_zeros(k, row.shape[0]) + row


model = ZerosOfValueRows()
example_args = (torch.tensor(5), torch.randn(3))
extra_args = [(torch.tensor(16), torch.randn(3))]
tags = {"torch.unbacked", "torch.dynamic-value", "torch.escape-hatch"}
requires = ["check", "check_is_size"]
expected = "supported"

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

# Reproduces, without torch-export-matrix, the failure of the cell
#   torch-2.15.0+cu132/non-strict/tutorial/static_shapes_reject_new_sizes
#
# Recorded on torch 2.15.0+cu132 (variant pypi), Python 3.11:
#   mismatch at check: AssertionError: input 1: Guard failed: y.size()[0] == 8
# This script reproduces the check step: running the exported program on each input and comparing it
# with eager.
# It runs: eager, then export, then check; strict=False.
#
# Install, in a fresh environment of Python 3.11:
#   pip install torch==2.15.0 numpy
# then run this file with that Python. Where the failure reproduces, it raises (the traceback ends
# with the error); where it does not, it prints 'did not reproduce'.
#
# The same cell with torch-export-matrix, from its checkout:
#   export-matrix check cases/tutorial/static_shapes_reject_new_sizes.py --torch 2.15.0 --variant pypi --mode non-strict --python 3.11
#
# Below: the case, cases/tutorial/static_shapes_reject_new_sizes.py, as it was where this script was
# written, then what torch-export-matrix does with a case (matrix/worker/cell.py), in plain torch.

# --------------------------------------------------------------------------------------------------
# The case: cases/tutorial/static_shapes_reject_new_sizes.py
# --------------------------------------------------------------------------------------------------

"""Exported without `dynamic_shapes`, the program is static: other input sizes are rejected at run time."""

import torch

torch.manual_seed(0)


class FourInputs(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(5, 3)

    def forward(self, w, x, y, z):
        h = (x + y).flatten() + z
        return self.fc(w), h


model = FourInputs()
example_args = (torch.randn(6, 5), torch.randn(4), torch.randn(8, 4), torch.randn(32))
extra_args = [(torch.randn(6, 5), torch.randn(4), torch.randn(3, 4), torch.randn(12))]
tags = {"torch.dynamic-shape"}
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


def _same(expected, actual, what):
    """Raise AssertionError at the first pytree leaf where `actual` differs from eager's `expected`."""
    from torch.utils import _pytree

    want, got = _pytree.tree_flatten(expected)[0], _pytree.tree_flatten(actual)[0]
    if len(want) != len(got):
        raise AssertionError("%s has %d leaves, eager's %d" % (what, len(got), len(want)))
    for index, (e, a) in enumerate(zip(want, got)):
        if isinstance(e, torch.Tensor) or isinstance(a, torch.Tensor):
            try:
                torch.testing.assert_close(a, e, equal_nan=True)
            except AssertionError as exc:
                raise AssertionError("%s, leaf %d, differs from eager's: %s" % (what, index, exc)) from None
        elif e != a:
            raise AssertionError("%s, leaf %d: %r, eager's %r" % (what, index, a, e))


def check(ep, inputs, kwargs, expected, calls):
    """Run the exported program on each input: its outputs, and the inputs after the call, must match eager's."""
    module = ep.module()
    for number, (args, out) in enumerate(zip(inputs, expected)):
        given = (_clone(args), _clone(kwargs))
        print("torch %s: the exported program on input %d" % (torch.__version__, number), flush=True)
        actual = module(*given[0], **given[1])
        _same(out, actual, "input %d: output" % number)
        _same(calls[number], given, "input %d: the arguments after the call" % number)


def main():
    """The steps that reproduce the recorded failure, in the order the cell ran them."""
    args, kwargs, shapes, extra = inputs()
    # Eager first, on copies of the model and of each input, as the cell runs the case before exporting.
    print("torch %s: the eager run" % torch.__version__, flush=True)
    eager = _clone(model)
    calls = [(_clone(a), _clone(kwargs)) for a in [args, *extra]]
    expected = [eager(*a, **k) for a, k in calls]
    ep = export(args, kwargs, shapes)
    check(ep, [args, *extra], kwargs, expected, calls)
    print("did not reproduce: every step ran without the recorded failure on torch %s" % torch.__version__)


if __name__ == "__main__":
    main()

# Reproduces, without torch-export-matrix, the failure of the cell
#   torch-2.2.2+cu121/non-strict/exportdb/cond_operands
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
#   export-matrix check cases/exportdb/cond_operands.py --torch 2.2.2 --variant pypi --mode non-strict --python 3.11
#
# Below: the case, cases/exportdb/cond_operands.py, as it was where this script was written, then
# what torch-export-matrix does with a case (matrix/worker/cell.py), in plain torch.

# --------------------------------------------------------------------------------------------------
# The modules the case imports from its own folder, inlined.
# --------------------------------------------------------------------------------------------------
import sys
import types


def _inlined_module(name, source):
    """Make `import name` find a module built from `source`, as the case's folder on sys.path would."""
    module = types.ModuleType(name)
    module.__file__ = name + ".py"
    sys.modules[name] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)


_inlined_module('_exportdb_ops', r'''
"""Control-flow operators for the ExportDB cases, found wherever the installed torch keeps them.

ExportDB has used ``functorch.experimental.control_flow`` since torch 2.1, before
``torch.cond`` and ``torch._higher_order_ops.map`` became the documented spellings. The
operator is resolved once when a case imports this file (never inside ``forward``, where
strict export would have to trace the lookup), preferring the newer home so that the
cases keep importing after the experimental one goes away.
"""

import importlib


def _first(name, homes):
    for module_name in homes:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        found = getattr(module, name, None)
        if found is not None:
            return found
    return _missing(name, homes)


def _missing(name, homes):
    def unavailable(*args, **kwargs):
        raise RuntimeError("this torch has no `%s` in any of %s" % (name, ", ".join(homes)))

    return unavailable


cond = _first("cond", ["torch", "functorch.experimental.control_flow"])
map = _first("map", ["torch._higher_order_ops.map", "functorch.experimental.control_flow"])
'''[1:])

# --------------------------------------------------------------------------------------------------
# The case: cases/exportdb/cond_operands.py
# --------------------------------------------------------------------------------------------------

"""`cond` operands are a list of tensors matching the branch signatures; the predicate is on a dynamic dim.

Exported with a dynamic first dimension, both branches stay in the graph and the program
generalises to a shorter input that takes the other branch.
"""

import torch
from _exportdb_ops import cond

torch.manual_seed(0)


class OperandList(torch.nn.Module):
    def forward(self, x, y):
        def add(x, y):
            return x + y

        def sub(x, y):
            return x - y

        return cond(x.shape[0] > 3, add, sub, [x, y])


def dynamic_shapes():
    from torch.export import Dim

    return {"x": {0: Dim("rows")}, "y": None}


model = OperandList()
example_args = (torch.randn(5, 3), torch.randn(3))
extra_args = [(torch.randn(2, 3), torch.randn(3))]
tags = {"torch.cond", "torch.dynamic-shape"}
requires = ["dim", "export.dynamic_shapes"]
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

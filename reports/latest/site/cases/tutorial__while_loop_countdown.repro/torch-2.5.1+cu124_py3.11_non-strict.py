# Reproduces, without torch-export-matrix, the failure of the cell
#   torch-2.5.1+cu124/non-strict/tutorial/while_loop_countdown
#
# Recorded on torch 2.5.1+cu124 (variant pypi), Python 3.11:
#   serialize failed: fresh process: run-error: RuntimeError: input 0: carried_inputs must be a tuple, got <class 'list'>
# This script reproduces the serialize step: torch.export.save, then torch.export.load and a run in
# a fresh process.
# It runs: eager, then export, then serialize; strict=False.
#
# Install, in a fresh environment of Python 3.11:
#   pip install torch==2.5.1 numpy setuptools
# then run this file with that Python. Where the failure reproduces, it raises (the traceback ends
# with the error); where it does not, it prints 'did not reproduce'.
#
# The same cell with torch-export-matrix, from its checkout:
#   export-matrix check cases/tutorial/while_loop_countdown.py --torch 2.5.1 --variant pypi --mode non-strict --python 3.11
#
# Below: the case, cases/tutorial/while_loop_countdown.py, as it was where this script was written,
# then what torch-export-matrix does with a case (matrix/worker/cell.py), in plain torch.

# --------------------------------------------------------------------------------------------------
# The case: cases/tutorial/while_loop_countdown.py
# --------------------------------------------------------------------------------------------------

"""`while_loop` with a data-dependent trip count: halve a tensor until a counter runs out."""

import torch

torch.manual_seed(0)


class HalveUntilZero(torch.nn.Module):
    def forward(self, steps, x):
        from torch._higher_order_ops.while_loop import while_loop

        def keep_going(n, acc):
            return n > 0

        def body(n, acc):
            return n - 1, acc * 0.5 + 1

        _, out = while_loop(keep_going, body, (steps, x))
        return out


model = HalveUntilZero()
example_args = (torch.tensor(4), torch.randn(2, 3))
extra_args = [(torch.tensor(1), torch.randn(2, 3))]
tags = {"torch.higher-order-op", "torch.dynamic-value"}
requires = ["while_loop"]
expected = "supported"

# --------------------------------------------------------------------------------------------------
# What torch-export-matrix does with the case, in plain torch.
# --------------------------------------------------------------------------------------------------
import copy
import inspect
import sys

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


def save(ep):
    """torch.export.save to a file of a new temporary folder: the program a fresh process loads."""
    import os
    import tempfile

    path = os.path.join(tempfile.mkdtemp(prefix="export-repro-"), "program.pt2")
    print("torch %s: torch.export.save" % torch.__version__, flush=True)
    torch.export.save(ep, path)
    return path


def load_in_a_fresh_process(path):
    """Load and run the saved program in a new Python that runs the case's code but never exports, as the cell does."""
    import os
    import shutil
    import subprocess

    try:
        done = subprocess.run([sys.executable, __file__, "--load", path])
    finally:
        shutil.rmtree(os.path.dirname(path), ignore_errors=True)
    if done.returncode:
        raise RuntimeError("the fresh process failed (exit status %d): its traceback is above" % done.returncode)


def load(path):
    """In the fresh process: load the program and run it on the case's example inputs, then compare with eager.

    Eager runs last: what it does (a lazy registration) must not help the load, as it cannot in the cell's.
    """
    args, kwargs, _, _ = inputs()
    print("torch %s: torch.export.load, then a run of the loaded program" % torch.__version__, flush=True)
    loaded = torch.export.load(path)
    actual = loaded.module()(*_clone(args), **_clone(kwargs))
    expected = _clone(model)(*_clone(args), **_clone(kwargs))
    _same(expected, actual, "the loaded program's output")


def main():
    """The steps that reproduce the recorded failure, in the order the cell ran them."""
    args, kwargs, shapes, extra = inputs()
    # Eager first, on copies of the model and of each input, as the cell runs the case before exporting.
    print("torch %s: the eager run" % torch.__version__, flush=True)
    eager = _clone(model)
    calls = [(_clone(a), _clone(kwargs)) for a in [args, *extra]]
    expected = [eager(*a, **k) for a, k in calls]
    ep = export(args, kwargs, shapes)
    saved = save(ep)  # saved before the program runs: running it may update its buffers
    load_in_a_fresh_process(saved)
    print("did not reproduce: every step ran without the recorded failure on torch %s" % torch.__version__)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--load"]:  # the fresh process of the save/load step
        load(sys.argv[2])
    else:
        main()

# Reproduces, without torch-export-matrix, the failure of the cell
#   torch-2.2.2+cu121/strict/models/kwargs_only_inputs
#
# Recorded on torch 2.2.2+cu121 (variant pypi), Python 3.11:
#   mismatch at check: TypeError: input 0: forward() got an unexpected keyword argument 'scale'
#   serialize failed: load: TypeError: forward() got an unexpected keyword argument 'scale'
# This script reproduces the check step: running the exported program on each input and comparing it
# with eager; the serialize step: torch.export.save, then torch.export.load and a run in a fresh
# process.
# It runs: eager, then export, then check, then serialize; strict=True.
#
# Install, in a fresh environment of Python 3.11:
#   pip install torch==2.2.2 'numpy<2' setuptools
# then run this file with that Python. Where the failure reproduces, it raises (the traceback ends
# with the error); where it does not, it prints 'did not reproduce'.
#
# The same cell with torch-export-matrix, from its checkout:
#   export-matrix check cases/models/kwargs_only_inputs.py --torch 2.2.2 --variant pypi --mode strict --python 3.11
#
# Below: the case, cases/models/kwargs_only_inputs.py, as it was where this script was written, then
# what torch-export-matrix does with a case (matrix/worker/cell.py), in plain torch.

# --------------------------------------------------------------------------------------------------
# The case: cases/models/kwargs_only_inputs.py
# --------------------------------------------------------------------------------------------------

"""Keyword-only tensor inputs, one of them optional, passed through `example_kwargs`."""

import torch

torch.manual_seed(0)


class ScaleShift(torch.nn.Module):
    def forward(self, x, *, scale, shift=None):
        out = x * scale
        if shift is not None:
            out = out + shift
        return out


model = ScaleShift()
example_args = (torch.randn(2, 5),)
example_kwargs = {"scale": torch.randn(5), "shift": torch.randn(2, 5)}
tags = {"torch.model", "python.data-structure"}

# --------------------------------------------------------------------------------------------------
# What torch-export-matrix does with the case, in plain torch.
# --------------------------------------------------------------------------------------------------
import copy
import inspect
import sys
import traceback

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
    kwargs = example_kwargs
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


def after(failed, name, run):
    """Run one step on the exported program; a failure is printed and named in `failed`, and the next step runs."""
    try:
        run()
    except Exception:
        traceback.print_exc()
        failed.append(name)


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
    # Each step on the exported program runs, as in the cell, whether or not the one before failed.
    failed = []
    after(failed, "check", lambda: check(ep, [args, *extra], kwargs, expected, calls))
    after(failed, "serialize", lambda: load_in_a_fresh_process(saved))
    if failed:
        raise SystemExit("reproduced: %s failed (tracebacks above)" % ", ".join(failed))
    print("did not reproduce: every step ran without the recorded failure on torch %s" % torch.__version__)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--load"]:  # the fresh process of the save/load step
        load(sys.argv[2])
    else:
        main()

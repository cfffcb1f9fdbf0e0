"""The pieces of plain Python and torch that a repro script is made of (:mod:`matrix.records.repro_script`).

Each piece is what the worker does at one step of a cell (matrix/worker/cell.py,
matrix/worker/compare.py), written for a script that imports nothing but torch and runs on every
release of the matrix: the strict keyword is looked up, never assumed.
"""

from __future__ import annotations

from matrix.records.repro import CHECK, DECOMPOSE, SERIALIZE

INLINED_MODULE = '''
import sys
import types


def _inlined_module(name, source):
    """Make `import name` find a module built from `source`, as the case's folder on sys.path would."""
    module = types.ModuleType(name)
    module.__file__ = name + ".py"
    sys.modules[name] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)


'''

# How main calls each step on an exported program.
AFTER_CALLS = {
    CHECK: "check(ep, [args, *extra], kwargs, expected, calls)",
    DECOMPOSE: "decompose(ep)",
    SERIALIZE: "load_in_a_fresh_process(saved)",
}

CLONE = '''
def _clone(value):
    """A deep copy, so that what one step does to its inputs never reaches the next one."""
    try:
        return copy.deepcopy(value)
    except Exception:
        return value
'''

# A cell off the CPU (--device cuda): the model and every input moved there, as the worker moves them.
DEVICE_FUNCTION = '''
DEVICE = %s  # the cell's device: the case's model and inputs are moved to %s, as the cell moved them


def _on_device(value):
    """`value` with each tensor in it (in tuples, lists, dicts and dataclasses) moved to DEVICE."""
    if isinstance(value, torch.Tensor):
        return value.to(DEVICE)
    if isinstance(value, tuple):
        return tuple(_on_device(v) for v in value)
    if isinstance(value, list):
        return [_on_device(v) for v in value]
    if isinstance(value, dict):
        return {k: _on_device(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: _on_device(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
        return dataclasses.replace(value, **fields)
    return value
'''

VALUE_FUNCTION = '''
def _value(value):
    """A function (not a module or class) stands for what it returns, as in the worker's case loader."""
    if callable(value) and not hasattr(value, "forward") and not isinstance(value, type):
        return value()
    return value
'''

INPUTS_FUNCTION = '''
def inputs():
    """The case's example inputs, keyword inputs, dynamic shapes and further inputs, as the cell reads them."""
    args = %s
    kwargs = %s
    shapes = %s
    extra = %s
    return args, kwargs, shapes, extra
'''

EXPORT_FUNCTION = '''
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
'''

SAME = '''
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
'''

CHECK_FUNCTION = '''
def check(ep, inputs, kwargs, expected, calls):
    """Run the exported program on each input: its outputs, and the inputs after the call, must match eager's."""
    module = ep.module()
    for number, (args, out) in enumerate(zip(inputs, expected)):
        given = (_clone(args), _clone(kwargs))
        print("torch %s: the exported program on input %d" % (torch.__version__, number), flush=True)
        actual = module(*given[0], **given[1])
        _same(out, actual, "input %d: output" % number)
        _same(calls[number], given, "input %d: the arguments after the call" % number)
'''

UNCOMPARED_CHECK = '''
def check(ep, inputs, kwargs, expected, calls):
    """Run the exported program on each input; the case compares nothing with eager."""
    # the case's skip_check: %s
    module = ep.module()
    for number, args in enumerate(inputs):
        print("torch %%s: the exported program on input %%d" %% (torch.__version__, number), flush=True)
        module(*_clone(args), **_clone(kwargs))
'''

DECOMPOSE_FUNCTION = '''
def decompose(ep):
    """ExportedProgram.run_decompositions(), to the core ATen operator set."""
    print("torch %s: ep.run_decompositions()" % torch.__version__, flush=True)
    return ep.run_decompositions()
'''

AFTER_FUNCTION = '''
def after(failed, name, run):
    """Run one step on the exported program; a failure is printed and named in `failed`, and the next step runs."""
    try:
        run()
    except Exception:
        traceback.print_exc()
        failed.append(name)
'''

SAVE_FUNCTION = '''
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
'''

LOAD_FUNCTION = '''
def load(path):
    """In the fresh process: load the program and run it on the case's example inputs, then compare with eager.

    Eager runs last: what it does (a lazy registration) must not help the load, as it cannot in the cell's.
    """
    args, kwargs, _, _ = inputs()
%s    print("torch %%s: torch.export.load, then a run of the loaded program" %% torch.__version__, flush=True)
    loaded = torch.export.load(path)
    actual = loaded.module()(*_clone(args), **_clone(kwargs))
    %s
'''

# What the fresh process adds for a cell off the CPU: the model and inputs where the program was saved.
LOAD_ON_DEVICE = """    model.to(DEVICE)
    args, kwargs = _on_device(args), _on_device(kwargs)
"""
COMPARE_LOADED = """expected = _clone(model)(*_clone(args), **_clone(kwargs))
    _same(expected, actual, "the loaded program's output")"""
SKIPPED = "# the case compares nothing with eager (skip_check: %s)"

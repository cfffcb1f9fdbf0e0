"""A unit test starts no process and runs no export: one that does fails here, and belongs in tests/integration."""

from __future__ import annotations

import functools
import importlib
import os
import subprocess
from typing import Any, Iterator, List, Tuple

import pytest

try:
    import _posixsubprocess
except ImportError:  # Windows
    _posixsubprocess = None

# matplotlib builds its font cache the first time it runs on a machine, asking fontconfig
# (`fc-list`) in a process of its own: that is the library's one-time setup, done here before
# any test runs, not a process started by the code under test.
try:
    import matplotlib.font_manager  # noqa: F401
except ImportError:  # the host's libraries are missing: the tests that need them say so
    pass

# torch is imported here, not looked for lazily in sys.modules: a test whose first `import torch`
# is in its own body would slip past a guard that patches only what is already imported. The
# unit tests run with torch installed (the test sessions install it) and many of them import it
# anyway, so this costs one import per worker; without torch there is nothing to guard.
try:
    import torch
    import torch.export
except ImportError:
    torch = None

# What "a real export" is: tracing a program. The public entry points, and where the installed
# torch has them, the two functions that every trace goes through (torch.export.export,
# draft_export, export_for_training and code holding its own reference to one of them all end in
# _strict_export or _non_strict_export, which torch looks up at each call). Saving or loading a
# program is not guarded: a unit test can only have one by exporting (refused) or by reading a
# committed file.
_EXPORTS: Tuple[Tuple[str, str], ...] = (
    ("torch.export", "export"),
    ("torch.export", "draft_export"),
    ("torch.export", "export_for_training"),
    ("torch.export._trace", "_strict_export"),
    ("torch.export._trace", "_non_strict_export"),
)


def _export_entry_points() -> List[Tuple[Any, str]]:
    """(module, name) of each export entry point the installed torch has."""
    if torch is None:
        return []
    found = []
    for module_name, name in _EXPORTS:
        try:
            module = importlib.import_module(module_name)
        except ImportError:  # an older torch
            continue
        if callable(getattr(module, name, None)):
            found.append((module, name))
    return found


_ENTRY_POINTS = _export_entry_points()
_EXPORTED: List[str] = []  # the exports tried since the last test's check


def _refuse(module: Any, name: str) -> Any:
    how = "%s.%s" % (module.__name__, name)

    # wraps: the refusal keeps the real signature, which the capability probes read.
    @functools.wraps(getattr(module, name))
    def export(*args: Any, **kwargs: Any) -> Any:
        _EXPORTED.append(how)
        raise AssertionError("a unit test ran a real export (%s): it belongs in tests/integration" % how)

    return export


# Package scope: refused from the first unit test to the last, so a module-scoped fixture cannot
# export either; torn down before the tests of another folder run in the same process.
@pytest.fixture(scope="package", autouse=True)
def refuse_exports() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        for module, name in _ENTRY_POINTS:
            patch.setattr(module, name, _refuse(module, name))
        yield


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Each test starts with no export tried: one refused in an earlier test's fixture errored that test."""
    del _EXPORTED[:]


@pytest.fixture(autouse=True)
def no_export(refuse_exports: None) -> Iterator[None]:
    yield
    # Code under test may catch the error the refusal raises (the worker records a failed export
    # as a cell's status), here or in a wider fixture set up for this test: the attempt still fails it.
    tried = ", ".join(dict.fromkeys(_EXPORTED))
    assert not tried, "a unit test ran a real export (%s): it belongs in tests/integration" % tried


@pytest.fixture(autouse=True)
def no_process(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    started: List[str] = []

    def refuse(how: str) -> Any:
        def start(*args: Any, **kwargs: Any) -> Any:
            started.append(how)
            raise AssertionError("a unit test started a process (%s): it belongs in tests/integration" % how)

        return start

    # Every way the standard library starts one: subprocess, os.fork (multiprocessing's fork
    # and the project's side processes), and the spawn and forkserver starts of multiprocessing.
    monkeypatch.setattr(subprocess.Popen, "_execute_child", refuse("subprocess"))
    if _posixsubprocess is not None:
        monkeypatch.setattr(_posixsubprocess, "fork_exec", refuse("multiprocessing"))
    for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, refuse("os." + name))
    yield
    # Code under test may catch the error above; the attempt still fails the test.
    assert not started, "a unit test started a process (%s): it belongs in tests/integration" % ", ".join(started)

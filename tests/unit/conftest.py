"""A unit test starts no process: one that does fails here, and belongs in tests/integration."""

from __future__ import annotations

import os
import subprocess
from typing import Any, Iterator, List

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

"""One AOTInductor compile per test run, shared by every test module (and every xdist worker) that reads it.

A cold AOTInductor compile takes 20-36 s on 2 cores. tests/integration/test_aoti.py and test_aoti_loads.py each
used to compile the same fixture case in a run of its own; both now read the one run made here: the case with a
dynamic batch, in non-strict mode, with ``--stages check,serialize,aoti --artifacts`` and a result cache.

The first worker that asks builds it, under a file lock, in a folder beside the workers' own temporary folders
(``tmp_path_factory.getbasetemp().parent`` under xdist); the others wait for the lock and read what it left. A
test that writes (a cache it reuses, a folder it loads or copies) works on a copy: :func:`copy_of`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict

import pytest
from filelock import FileLock

from conftest import ROOT, read_cells

CASE = "tests/fixtures/basic/dynamic_batch.py"  # relative: loads import a case module inside the checkout
KEY = "aoti-package-integration-" + "5" * 32  # the signing key of the shared run; tests that load use it too
STAGES = "check,serialize,aoti"
FOLDER = "aoti-package"  # under the run's shared temporary folder
DONE = "done.json"  # written last: what the run left, read by every worker


def environ(tmp: Path, name: str, key: str = KEY) -> Dict[str, str]:
    """The environment of a command named ``name``: its own temporary and compile folders, and the signing key."""
    from matrix.contract.requests import KEY_VARIABLE

    scratch = tmp / (name + "-tmp")
    scratch.mkdir()
    env = dict(os.environ, PYTHONPATH=str(ROOT), TMPDIR=str(scratch), TORCHINDUCTOR_CACHE_DIR=str(tmp / "inductor"))
    env[KEY_VARIABLE] = key
    return env


def leftovers(tmp: Path, name: str) -> list:
    """What a command named ``name`` left in its temporary folder: no program, package or socket should stay."""
    return [p.name for p in (tmp / (name + "-tmp")).iterdir() if p.name.startswith("export-matrix-")]


def _build(folder: Path) -> Dict[str, Any]:
    """Run the case once with the aoti stage: its cell, its record, artifact and cache folders, its wall time."""
    folder.mkdir(parents=True)
    saved, cache, out = folder / "saved", folder / "cache", folder / "run"
    command = [sys.executable, "-m", "matrix", "run", "--cases", CASE, "--mode", "non-strict", "--stages", STAGES,
               "--artifacts", str(saved), "--out", str(out), "--cache", str(cache), "--progress", "none"]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=environ(folder, "run"), capture_output=True, text=True, timeout=900)
    wall_s = time.perf_counter() - started
    assert done.returncode == 0, done.stderr[-3000:]
    assert leftovers(folder, "run") == []
    cells = read_cells(out)
    assert len(cells) == 1, cells
    return {"cell": cells[0], "wall_s": wall_s, "stderr": done.stderr}


def shared_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder every xdist worker of this test run sees (this process's own without xdist)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def package(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Any]:
    """The shared run, built by the first worker to ask: ``folder`` (read only), ``saved``, ``cache``, ``run``,
    ``inductor`` (the run's compile cache), ``cell`` (its one cell record), ``wall_s`` and ``stderr``."""
    root = shared_root(tmp_path_factory)
    folder = root / FOLDER
    with FileLock(str(root / (FOLDER + ".lock"))):
        if not (folder / DONE).is_file():
            shutil.rmtree(folder, ignore_errors=True)  # a build that failed before: built again, failing alike
            found = _build(folder)
            (folder / DONE).write_text(json.dumps(found), encoding="utf-8")
    found = json.loads((folder / DONE).read_text(encoding="utf-8"))
    found.update(folder=folder, saved=folder / "saved", cache=folder / "cache", run=folder / "run")
    found["inductor"] = folder / "inductor"
    return found


def copy_of(shared: Dict[str, Any], name: str, into: Path) -> Path:
    """A copy of the shared run's folder ``name`` (saved, cache, run) in ``into``, for a test that writes there."""
    target = into / name
    shutil.copytree(shared[name], target, ignore=shutil.ignore_patterns(".export-matrix-cache"))
    return target

"""No process that forks initialises CUDA, and where one has, the runner forks no job from it.

There is no GPU here, so ``tests/fixtures/cuda_watch/watch.py`` notes, per process, every call
that would initialise CUDA on a GPU machine (``torch.cuda.init``, ``_lazy_init``, ``get_device_*``,
``is_available``/``device_count`` without torch's NVML check, a strict export, a frame compiled
by TorchDynamo) beside every fork, and takes a process that made such a call as initialised,
as a GPU machine would.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

from conftest import FIXTURES, ROOT, read_cells

WATCH = FIXTURES / "cuda_watch" / "watch.py"


def watched_run(tmp_path: Path, *extra: str, machine: str = "--gpu") -> subprocess.CompletedProcess:
    """A run under the watch on a machine with a GPU (``--gpu``), one whose root holds CUDA already
    (``--initialised``), or this machine as it is (``-``)."""
    cases = tmp_path / "cases"
    cases.mkdir()
    for name in ("add_one.py", "dynamic_batch.py"):
        shutil.copy(FIXTURES / "basic" / name, cases / name)
    log = tmp_path / "log"
    log.mkdir()
    command = [sys.executable, str(WATCH), str(log), machine, "--"]
    command += ["run", "--cases", str(cases), "--out", str(tmp_path / "out"), "--progress", "lines"]
    command += ["--warm-up", "always", "--stages", "check,decompose,serialize", "--no-cache", *extra]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("PYTORCH_NVML_BASED_CUDA_CHECK", None)
    proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc


def events(tmp_path: Path) -> Dict[int, List[str]]:
    return {int(p.stem): p.read_text().splitlines() for p in (tmp_path / "log").glob("*.log")}


def forked_after_cuda(logs: Dict[int, List[str]]) -> Dict[int, List[str]]:
    """The processes that forked after a call that initialises CUDA, with their events."""
    bad = {}
    for pid, lines in logs.items():
        first = next((i for i, line in enumerate(lines) if line.startswith("cuda ")), None)
        if first is not None and "fork" in lines[first:]:
            bad[pid] = lines
    return bad


def test_no_process_that_forks_makes_a_call_that_initialises_cuda(tmp_path: Path) -> None:
    watched_run(tmp_path, "--jobs", "2")
    logs = events(tmp_path)
    root = next(pid for pid, lines in logs.items() if lines and lines[0] == "root")
    assert not [line for line in logs[root] if line.startswith("cuda ")], logs[root]
    assert "fork" in logs[root]
    assert forked_after_cuda(logs) == {}
    # The watch sees what it should: the strict cells export strictly, in their own processes.
    strict = [pid for pid, lines in logs.items() if "cuda strict export" in lines]
    assert strict and root not in strict
    cells = read_cells(tmp_path / "out")
    assert len(cells) == 4 and {c["status"] for c in cells} == {"pass"}, [(c["cell_id"], c["status"]) for c in cells]
    assert {c["serialize_fresh_status"] for c in cells} == {"ok"}
    assert {c["gpu"] for c in cells} == {None}  # on the CPU: no GPU named


def test_without_cuda_in_torch_or_a_gpu_the_warm_up_exports_in_each_mode_as_before(tmp_path: Path) -> None:
    watched_run(tmp_path, "--jobs", "1", machine="-")
    logs = events(tmp_path)
    root = next(pid for pid, lines in logs.items() if lines and lines[0] == "root")
    # A strict export cannot initialise CUDA in a torch without it: the root keeps the warm-up that times cells fairly.
    assert "cuda strict export" in logs[root]


def test_a_root_that_holds_cuda_forks_no_job_and_says_so_once(tmp_path: Path) -> None:
    proc = watched_run(tmp_path, "--jobs", "1", machine="--initialised")
    assert proc.stderr.count("no process forked from it can use CUDA") == 1, proc.stderr[-3000:]
    logs = events(tmp_path)
    root = next(pid for pid, lines in logs.items() if lines and lines[0] == "cuda sitecustomize")
    # Each cell, and each fresh load, ran in an interpreter of its own (which this watch does not reach):
    # no strict export was forked from the root, nor from a process forked from it.
    assert [pid for pid, lines in logs.items() if "cuda strict export" in lines] == []
    assert "fork" not in logs[root], logs[root]
    cells = read_cells(tmp_path / "out")
    assert len(cells) == 4 and {c["status"] for c in cells} == {"pass"}, [(c["cell_id"], c["status"]) for c in cells]
    assert {c["serialize_fresh_status"] for c in cells} == {"ok"}


def test_the_gpu_check_and_device_cuda_refuse_in_one_line_where_no_gpu_is_visible(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT), CUDA_VISIBLE_DEVICES="")
    for args in (["gpu-check", "--out", str(tmp_path / "g")], ["run", "--device", "cuda", "--out", str(tmp_path)]):
        proc = subprocess.run([sys.executable, "-m", "matrix", *args], env=env, capture_output=True, text=True)
        assert proc.returncode == 2, proc.stderr
        errors = [line for line in proc.stderr.splitlines() if "error" in line]
        assert len(errors) == 1 and "CUDA" in errors[0] and "Traceback" not in proc.stderr, proc.stderr

"""``export-matrix gpu-check``: does this GPU machine tell the same truth as a CPU one, and what does CUDA add?

For the owner of a machine with a GPU and a CUDA build of torch in this interpreter, offline. It runs
the case set three times with this interpreter's torch, each run a worker of its own, no result reused:

1. ``--device cpu``, the GPU visible;
2. ``--device cpu`` with the GPU hidden (``CUDA_VISIBLE_DEVICES=``), as on a machine without one;
3. ``--device cuda``.

Then it prints whether the first two give the same status in every cell (they must: a GPU in the
machine changes nothing on the CPU), the cells whose status differs between the CPU and CUDA with
CUDA's error, every ``harness-error`` (the runner's own fault: there must be none), and each run's
wall time with what a cell costs on CUDA. Exit status 0 where the CPU runs agree and no cell is a
harness-error, 1 otherwise, 2 where there is no GPU or no CUDA build here.

Standard library and torch only: it runs where the worker runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import time
from typing import Any, Dict, Optional, Tuple

from ..contract import records
from ..contract.errors import UserError
from ..contract.schema import Status, first_line
from . import gpu

Key = Tuple[str, str, int]
Cells = Dict[Key, Dict[str, Any]]
# The three runs, in order: (name, device, GPU hidden).
RUNS = (("cpu", "cpu", False), ("cpu-gpu-hidden", "cpu", True), ("cuda", "cuda", False))


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cases", nargs="+", metavar="PATH", help="case files or folders (default: ./cases)")
    parser.add_argument("--select", nargs="+", metavar="GLOB", help="keep cells whose case name or id matches")
    parser.add_argument("--jobs", type=int, default=0, metavar="N", help="cells at once (default: as run chooses)")
    parser.add_argument("--timeout", type=float, default=120.0, metavar="S", help="seconds per cell (default 120)")
    parser.add_argument("--out", default="gpu-check", metavar="DIR", help="where the three runs' records go")


@dataclasses.dataclass(frozen=True)
class GpuCheckOptions:
    out: str = "gpu-check"
    cases: Optional[Tuple[str, ...]] = None
    select: Optional[Tuple[str, ...]] = None
    jobs: int = 0
    timeout: float = 120.0


OPTIONS = GpuCheckOptions


@dataclasses.dataclass(frozen=True)
class Findings:
    """What the three runs say, cell by cell (case, mode, run)."""

    cells: int  # in the CPU run
    same_on_cpu: int  # cells whose status is the same with the GPU visible and hidden
    cpu_differs: Tuple[Tuple[Key, str, str], ...]  # (cell, status with the GPU visible, hidden)
    device_differs: Tuple[Tuple[Key, str, str, str], ...]  # (cell, CPU status, CUDA status, CUDA's error)
    harness_errors: Tuple[Tuple[str, Key, str], ...]  # (run, cell, error)

    @property
    def sound(self) -> bool:
        return not self.cpu_differs and not self.harness_errors


def compare(runs: Dict[str, Cells]) -> Findings:
    """The findings of the three runs' cells (keyed by :data:`RUNS`' names)."""
    cpu, hidden, cuda = (runs.get(name, {}) for name, _, _ in RUNS)
    keys = sorted(set(cpu) | set(hidden))
    cpu_differs = tuple(
        (key, _status(cpu.get(key)), _status(hidden.get(key)))
        for key in keys
        if _status(cpu.get(key)) != _status(hidden.get(key))
    )
    device_differs = tuple(
        (key, _status(cpu.get(key)), _status(cuda.get(key)), first_line((cuda.get(key) or {}).get("error_message")))
        for key in sorted(set(cpu) | set(cuda))
        if _status(cpu.get(key)) != _status(cuda.get(key))
    )
    harness = tuple(
        (name, key, first_line(record.get("error_message")))
        for name, _, _ in RUNS
        for key, record in sorted(runs.get(name, {}).items())
        if record.get("status") == Status.HARNESS_ERROR.value
    )
    return Findings(len(cpu), len(keys) - len(cpu_differs), cpu_differs, device_differs, harness)


def _status(record: Optional[Dict[str, Any]]) -> str:
    return str(record.get("status")) if record else "no record"


def read_cells(folder: str) -> Cells:
    """The cell records of a run's folder, by (case, mode, run)."""
    cells: Cells = {}
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else ():
        if name.endswith(".jsonl"):
            for record in records.read(os.path.join(folder, name))[0]:
                if record.get("kind") == "cell":
                    cells[(record["case"], record["mode"], record.get("run") or 0)] = record
    return cells


def _run(options: GpuCheckOptions, name: str, device: str, hidden: bool) -> float:
    """One worker run in a process of its own; its wall time in seconds."""
    folder = os.path.join(options.out, name)
    command = [sys.executable, "-m", "matrix.worker", "run", "--out", folder, "--device", device, "--no-cache"]
    command += ["--progress", "none", "--timeout", str(options.timeout), "--force"]
    if options.cases:
        command += ["--cases", *options.cases]
    if options.select:
        command += ["--select", *options.select]
    if options.jobs:
        command += ["--jobs", str(options.jobs)]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    if hidden:
        env[gpu.VISIBLE] = ""
    sys.stderr.write("gpu-check: %s run...\n" % name)
    started = time.perf_counter()
    done = subprocess.run(command, env=env)
    if done.returncode != 0:
        raise UserError(
            "gpu-check: the %s run exited with %d (its records are in %s)" % (name, done.returncode, folder)
        )
    return time.perf_counter() - started


def summary(findings: Findings, walls: Dict[str, float], found: Dict[str, Any]) -> str:
    """The check's report, as Markdown."""
    lines = ["# GPU check", "", "GPU: %s" % (gpu.label(found) or "none"), ""]
    verdict = "all" if not findings.cpu_differs else "%d of %d" % (findings.same_on_cpu, findings.cells)
    lines.append("- CPU with the GPU visible and hidden: %s cells have the same status (goal: all)." % verdict)
    lines.append("- harness-error cells: %d (goal: none)." % len(findings.harness_errors))
    lines.append("- cells whose status differs between CPU and CUDA: %d." % len(findings.device_differs))
    lines += ["", "| run | wall s | cells | s per cell |", "| --- | ---: | ---: | ---: |"]
    for name, _, _ in RUNS:
        if name in walls:
            per = walls[name] / max(1, findings.cells)
            lines.append("| %s | %.1f | %d | %.2f |" % (name, walls[name], findings.cells, per))
    if "cuda" in walls and walls.get("cpu"):
        lines.append("\nCUDA costs %.2f× the CPU's wall time for the same cells." % (walls["cuda"] / walls["cpu"]))
    for title, rows in (
        ("Differ between the CPU with the GPU visible and hidden", [(k, a, b, "") for k, a, b in findings.cpu_differs]),
        ("Differ between CPU and CUDA", list(findings.device_differs)),
        ("harness-error", [(k, run, "", e) for run, k, e in findings.harness_errors]),
    ):
        if rows:
            lines += ["", "## %s" % title, "", "| case | mode | | | error |", "| --- | --- | --- | --- | --- |"]
            lines += ["| %s | %s | %s | %s | %s |" % (k[0], k[1], a, b, e.replace("|", "\\|")) for k, a, b, e in rows]
    return "\n".join(lines) + "\n"


def main(options: GpuCheckOptions) -> int:
    import torch

    found = gpu.facts()
    if not gpu.available(torch, found):
        why = "was built without CUDA" if not gpu.torch_has_cuda(torch) else "sees no GPU (NVML found none)"
        raise UserError("gpu-check: this torch (%s) %s; run it on a machine with a GPU" % (torch.__version__, why))
    walls = {name: _run(options, name, device, hidden) for name, device, hidden in RUNS}
    findings = compare({name: read_cells(os.path.join(options.out, name)) for name, _, _ in RUNS})
    text = summary(findings, walls, found)
    with open(os.path.join(options.out, "summary.md"), "w", encoding="utf-8") as f:
        f.write(text)
    sys.stdout.write(text)
    return 0 if findings.sound else 1

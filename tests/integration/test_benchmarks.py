"""The benchmark scripts still run, on small inputs: benchmarks/report.py and benchmarks/side_processes.py."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT


def test_report_benchmark_runs_and_judges_its_targets(tmp_path: Path):
    command = [sys.executable, str(ROOT / "benchmarks" / "report.py"), "--releases", "3", "--cases", "6"]
    command += ["--runs", "2", "--rounds", "2", "--keep", str(tmp_path)]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "records: 75 (3 releases × 6 cases × 2 modes × 2 runs)" in out
    assert "(72 cell records)" in out and "(36 cells," in out
    assert len(re.findall(r"report, round \d: [\d.]+ s wall", out)) == 2
    peak = float(re.search(r"memory round: ([\d.]+) MB peak", out).group(1))
    assert peak > 20  # the sampled process tree holds at least an interpreter with pandas
    assert "target ≤ 10 s for the report: met" in out and "target ≤ 1024 MB peak memory: met" in out
    assert len(re.findall(r"re-render, round \d: [\d.]+ s wall", out)) == 2 and "for a re-render: met" in out
    assert (tmp_path / "report" / "index.md").is_file()


def test_side_processes_benchmark_runs_a_round(tmp_path: Path):
    command = [sys.executable, str(ROOT / "benchmarks" / "side_processes.py"), "--tasks", "4", "--seconds", "0.05"]
    proc = subprocess.run([*command, "--rounds", "1"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    if "nothing to measure" in proc.stdout:
        pytest.skip("no side processes here: they need Linux and two usable cores")
    assert re.search(
        r"^round 1: start [\d.]+ ms, wait [\d.]+ s, drop [\d.]+ s \(\d of 4 tasks ran\)$", proc.stdout, re.M
    )
    assert re.search(r"^drop/wait: [\d.]+x", proc.stdout, re.M)

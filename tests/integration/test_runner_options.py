"""``export-matrix run``: bad options, bad input and bad output folders are one line and exit 2, before torch starts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, read_cells, run_matrix

BASIC = str(FIXTURES / "basic")


@pytest.mark.parametrize(
    "options, message",
    [
        (["--timeout", "0"], "--timeout 0.0: give a finite number of seconds above 0"),
        (["--timeout", "-1"], "--timeout -1.0"),
        (["--timeout", "nan"], "--timeout nan"),
        (["--timeout", "inf"], "--timeout inf"),
        (["--max-memory", "-100"], "--max-memory -100"),
        (["--runs", "0"], "--runs 0: must be at least 1"),
        (["--stages", "check,bake"], "--stages: unknown stage(s) bake"),
        (["--tag", "torch.nonsense"], "--tag: unknown tag(s) torch.nonsense"),
        (["--variant", "../../x"], "--variant '../../x'"),
        (["--select", "no_such_case"], "nothing selected"),
    ],
)
def test_bad_options_exit_2_with_one_line_and_no_record(tmp_path: Path, options, message) -> None:
    done = run_matrix("run", "--cases", BASIC, "--out", str(tmp_path / "out"), *options, check=False)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("export-matrix run: error: ") and message in lines[0]
    assert not list(tmp_path.rglob("*.jsonl"))


def test_an_out_that_is_a_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("")
    done = run_matrix("run", "--cases", BASIC, "--out", str(tmp_path / "taken"), check=False)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert str(tmp_path / "taken") in done.stderr


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs a file system that refuses writes even to root")
def test_a_read_only_out_is_named(tmp_path: Path) -> None:
    out = Path("/proc/self/export-matrix-records")  # /proc refuses new entries, whoever asks
    done = run_matrix("run", "--cases", BASIC, "--out", str(out), check=False)
    assert done.returncode == 2 and "Traceback" not in done.stderr and str(out) in done.stderr


def test_records_of_a_future_schema_are_refused_with_what_to_do(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    run_matrix("run", "--cases", BASIC, "--out", str(out), "--select", "add_one", "--mode", "strict")
    (path,) = out.glob("*.jsonl")
    path.write_text(path.read_text() + json.dumps({"schema_version": 99, "kind": "cell"}) + "\n")
    again = run_matrix("run", "--cases", BASIC, "--out", str(out), "--select", "add_one", check=False)
    assert again.returncode == 2 and "Traceback" not in again.stderr
    assert "record schema version 99 is not supported" in again.stderr and path.name in again.stderr


def test_a_fifo_named_like_a_case_is_not_read(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "plain.py").write_text((FIXTURES / "basic" / "add_one.py").read_text())
    os.mkfifo(cases / "pipe.py")
    done = run_matrix("cases", "--cases", str(cases), "--json", timeout=60)
    assert [c["case"] for c in json.loads(done.stdout)] == ["plain"]


def test_without_isolation_a_case_that_exits_is_a_crash_not_the_end_of_the_run(tmp_path: Path) -> None:
    cases = str(FIXTURES / "exits")
    done = run_matrix("run", "--cases", cases, "--out", str(tmp_path), "--isolation", "inline", "--mode", "strict")
    cells = {c["case"]: c for c in read_cells(tmp_path)}
    assert cells["calls_sys_exit"]["status"] == "crash" and cells["calls_sys_exit"]["error_type"] == "SystemExit"
    assert cells["plain"]["status"] == "pass" and "done: pass 1, crash 1" in done.stderr


def test_run_without_torch_is_one_line_and_exit_2(tmp_path: Path) -> None:
    # -S: no site-packages, so no torch; the runner needs only the standard library to say so.
    done = subprocess.run(
        [sys.executable, "-S", "-m", "matrix", "run", "--cases", BASIC, "--out", str(tmp_path / "out")],
        capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)), cwd=ROOT, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [done.stderr.strip()]
    assert "torch is not installed in this interpreter" in done.stderr and not (tmp_path / "out").exists()

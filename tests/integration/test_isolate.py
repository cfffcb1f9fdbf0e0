"""Fault injection through the real runner: no cell can escape, wedge the runner or leak processes.

The fixture cases in ``fixtures/isolation`` misbehave on purpose: they signal their parent
or their group, leave processes behind, exit while a grandchild holds their pipes, kill
the process forked ahead for the next cell, or run out of memory.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import List

import pytest

from conftest import FIXTURES, ROOT, by_cell, read_cells, run_matrix

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fixtures and checks use /proc")

ISOLATION = FIXTURES / "isolation"


@pytest.fixture
def tag(monkeypatch: pytest.MonkeyPatch) -> str:
    """A number that names the processes the fixtures leave behind, unique to this test."""
    value = str(random.randrange(10**5, 10**6))
    monkeypatch.setenv("EXPORT_MATRIX_TEST_TAG", value)
    return value


def leftovers(tag: str) -> List[str]:
    """The live (not zombie) processes that fixtures started under ``tag``."""
    names = {"xm%s%s" % (tag, kind) for kind in "gex"}
    sleep = ("3%s.5" % tag).encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            with open("/proc/%s/comm" % entry) as f:
                comm = f.read().strip()
            with open("/proc/%s/cmdline" % entry, "rb") as f:
                argv = f.read().split(b"\0")
        except (OSError, IndexError):
            continue
        if state != "Z" and (comm in names or sleep in argv):
            found.append("%s %s" % (entry, comm))
    return found


def cases(*names: str) -> List[str]:
    return [str(ISOLATION / name) for name in names]


def test_a_case_that_signals_its_parent_or_its_group_ends_only_its_own_cell(tmp_path: Path) -> None:
    # Cells run in name order: the culprits run between two plain cases.
    names = ("first_plain.py", "kills_parent.py", "kills_parent_with_sigkill.py", "signals_own_group.py")
    done = run_matrix(
        "run", "--cases", *cases(*names, "then_plain.py"), "--out", str(tmp_path),
        "--mode", "strict", "--timeout", "60", "--progress", "none",
    )  # fmt: skip
    assert "done: pass 2, crash 3" in done.stderr
    cells = by_cell(read_cells(tmp_path))
    assert len(cells) == 5
    assert cells[("first_plain", "strict")]["status"] == "pass"
    assert cells[("then_plain", "strict")]["status"] == "pass"
    sigterm = cells[("kills_parent", "strict")]
    assert sigterm["status"] == "crash"
    assert sigterm["error_type"] == "signal.SIGTERM"
    assert "sent SIGTERM to its parent process" in sigterm["error_message"]
    # The case sleeps 600 s after the kill: it is judged by the signal, not left to time out.
    assert sigterm["total_s"] < 30
    sigkill = cells[("kills_parent_with_sigkill", "strict")]
    assert sigkill["status"] == "crash"
    assert "parent process was killed by SIGKILL" in sigkill["error_message"]
    assert sigkill["total_s"] < 30
    group = cells[("signals_own_group", "strict")]
    assert (group["status"], group["error_type"], group["exit_code"]) == ("crash", "signal.SIGTERM", -15)


def test_a_cell_is_judged_by_its_exit_not_by_a_grandchild_holding_its_pipes(tmp_path: Path, tag: str) -> None:
    timeout = 60
    run_matrix(
        "run", "--cases", *cases("exits_leaving_child.py"), "--out", str(tmp_path),
        "--mode", "strict", "--timeout", str(timeout), "--progress", "none",
    )  # fmt: skip
    (cell,) = read_cells(tmp_path)
    assert (cell["status"], cell["exit_code"], cell["error_type"]) == ("crash", 7, "SystemExit")
    assert cell["total_s"] < timeout / 4
    assert leftovers(tag) == []


def test_no_process_a_cell_starts_outlives_the_cell(tmp_path: Path, tag: str) -> None:
    # The passing cell gets a generous limit (a loaded machine must not turn it into a timeout);
    # the hanging one a short limit, in a run of its own.
    for case, timeout in (("leaves_processes.py", "120"), ("hangs_leaving_processes.py", "5")):
        run_matrix(
            "run", "--cases", *cases(case), "--out", str(tmp_path),
            "--mode", "strict", "--timeout", timeout, "--progress", "none", "-j", "1",
        )  # fmt: skip
    cells = by_cell(read_cells(tmp_path))
    passed, hung = cells[("leaves_processes", "strict")], cells[("hangs_leaving_processes", "strict")]
    assert passed["status"] == "pass"
    assert hung["status"] == "timeout"
    for cell in (passed, hung):  # the processes were started: a sleep, a forked child, one in a new session
        assert len(cell["stderr_tail"].split("left behind: ")[1].splitlines()[0].split()) == 3
    # The runner has ended and reaped every cell's keeper, which kills and reaps what its cell left.
    assert leftovers(tag) == []


def test_a_runner_killed_by_a_signal_leaves_no_process_and_no_temporary_file(tmp_path: Path, tag: str) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    # torch keeps its compile cache under the temporary folder unless told where (importing dynamo makes it):
    # that folder is torch's, meant to last, and where it goes must not hang on which test imported dynamo first.
    env = dict(
        os.environ, PYTHONPATH=str(ROOT), TMPDIR=str(scratch), TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "inductor")
    )
    command = [
        sys.executable, "-m", "matrix", "run", "--cases", *cases("hangs_leaving_processes.py"),
        "--out", str(tmp_path / "out"), "--mode", "strict", "--timeout", "300", "--progress", "none",
    ]  # fmt: skip
    runner = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while len(leftovers(tag)) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(leftovers(tag)) == 3, "the case did not start its processes"
        runner.send_signal(signal.SIGTERM)
        assert runner.wait(timeout=30) == -signal.SIGTERM
        # The cell's keeper sees the runner go and kills what the cell started.
        deadline = time.monotonic() + 30
        while leftovers(tag) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert leftovers(tag) == []
        assert list(scratch.iterdir()) == []
    finally:
        if runner.poll() is None:
            os.killpg(runner.pid, signal.SIGKILL)
            runner.wait()


def test_a_spare_cell_process_that_died_is_replaced(tmp_path: Path) -> None:
    done = run_matrix(
        "run", "--cases", *cases("kills_spare.py", "then_plain.py"), "--out", str(tmp_path),
        "--mode", "strict", "--timeout", "60", "--progress", "none",
    )  # fmt: skip
    assert "Traceback" not in done.stderr
    cells = by_cell(read_cells(tmp_path))
    assert "killed the spare cell process" in cells[("kills_spare", "strict")]["stderr_tail"]
    assert cells[("kills_spare", "strict")]["status"] == "pass"
    assert cells[("then_plain", "strict")]["status"] == "pass"


def test_running_out_of_memory_is_a_crash_with_its_reason_in_any_stage(tmp_path: Path) -> None:
    run_matrix(
        "run", "--cases", *cases("oom_at_import.py", "oom_in_eager.py", "oom_in_export.py", "oom_in_check.py"),
        str(FIXTURES / "faults" / "memory_hog.py"), *cases("then_plain.py"),
        "--out", str(tmp_path), "--max-memory", "1024", "--timeout", "60", "--progress", "none",
    )  # fmt: skip
    cells = by_cell(read_cells(tmp_path))
    assert len(cells) == 12
    stages = {"oom_at_import": "load", "oom_in_eager": "eager", "oom_in_export": "export", "oom_in_check": "check"}
    stages["memory_hog"] = "eager"
    for mode in ("strict", "non-strict"):
        for case, stage in stages.items():
            cell = cells[(case, mode)]
            assert (cell["status"], cell["reason"], cell["failed_stage"]) == ("crash", "out-of-memory", stage), cell
        assert "can't allocate memory" in cells[("oom_in_eager", mode)]["error_message"]
        assert cells[("memory_hog", mode)]["error_type"] == "MemoryError"
        assert (cells[("then_plain", mode)]["status"], cells[("then_plain", mode)]["reason"]) == ("pass", None)


def test_spawn_isolation_contains_the_same_faults(tmp_path: Path, tag: str) -> None:
    run_matrix(
        "run", "--cases", *cases("kills_parent.py", "exits_leaving_child.py", "leaves_processes.py"),
        "--out", str(tmp_path), "--isolation", "spawn", "--mode", "strict", "--timeout", "60", "--progress", "none",
    )  # fmt: skip
    cells = by_cell(read_cells(tmp_path))
    assert cells[("kills_parent", "strict")]["error_type"] == "signal.SIGTERM"
    assert cells[("kills_parent", "strict")]["total_s"] < 30
    exited = cells[("exits_leaving_child", "strict")]
    assert (exited["status"], exited["exit_code"]) == ("crash", 7)
    assert exited["total_s"] < 30
    assert cells[("leaves_processes", "strict")]["status"] == "pass"
    assert leftovers(tag) == []

"""The run journal in real runs: the lock, and a resume past a cell that killed its runner."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from matrix.worker import journal, scratch

from conftest import FIXTURES, ROOT, read_cells, run_matrix

ENV = dict(os.environ, PYTHONPATH=str(ROOT))


@pytest.mark.skipif(journal.fcntl is None, reason="record locks are POSIX only")
def test_a_second_writer_of_the_same_records_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "t.jsonl")
    holder = "from matrix.worker import journal; j = journal.Journal(%r); print('locked', flush=True); input()" % path
    other = subprocess.Popen(
        [sys.executable, "-c", holder], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=ENV, cwd=ROOT
    )
    try:
        assert other.stdout is not None and other.stdout.readline() == "locked\n"
        with pytest.raises(journal.Busy, match="being written by another run"):
            journal.Journal(path)
    finally:
        other.communicate("\n", timeout=30)
    journal.Journal(path).close()  # released when the other run ended


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="the hostile case finds its runner through /proc")
@pytest.mark.parametrize("jobs, deaths", [(1, 1), (2, 2)])
def test_cases_that_kill_their_parent_or_the_runner_are_recorded_and_the_matrix_completes(
    tmp_path: Path, jobs: int, deaths: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Alone in flight, the culprit is known at once; side by side, the suspects run again alone first."""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setenv("TMPDIR", str(temporary))
    args = ("run", "--cases", str(FIXTURES / "killer"), "--mode", "strict", "--out", str(tmp_path))
    args += ("--progress", "none", "-j", str(jobs))
    codes, left = [], []
    for _ in range(deaths + 1):
        codes.append(run_matrix(*args, check=False).returncode)
        left.append(sorted(path.name for path in temporary.iterdir()))
    assert codes == [-9] * deaths + [0]  # each death is the runner itself, killed by c_kills_the_runner
    # A killed runner leaves its temporary folder (one, with every file its processes made); the next run
    # removes it, and its own when it ends.
    assert [len(names) for names in left] == [1] * deaths + [0], left
    assert all(names[0].startswith(scratch.PREFIX) for names in left[:deaths])
    assert len(set(names[0] for names in left[:deaths])) == deaths
    recorded = read_cells(tmp_path)
    cells = {c["case"]: c for c in recorded}
    assert len(recorded) == 4  # each cell once
    assert cells["a_plain"]["status"] == "pass" and cells["d_plain"]["status"] == "pass"
    # A signal to the cell's parent stays inside the cell: the run went on past it.
    assert cells["b_kills_its_parent"]["status"] == "crash" and cells["b_kills_its_parent"]["reason"] is None
    assert cells["c_kills_the_runner"]["status"] == "crash"
    assert cells["c_kills_the_runner"]["reason"] == "runner-killed"
    # Nothing left to do: the culprit is not run again without --force.
    again = run_matrix(*args)
    assert "0 to run" in again.stderr and len(read_cells(tmp_path)) == 4

"""Parallel lanes: every job runs once, results come back whole, a dead lane costs only its cell."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Dict

import pytest

from matrix.worker.lanes import Lanes

from conftest import FIXTURES, read_cells, run_matrix


class Backend:
    """Runs a job in the lane itself: enough to test the lanes without torch."""

    def __init__(self, index: int) -> None:
        self.index = index  # the lane's: a lane's own fresh-load server

    def run(self, job: Dict[str, Any], timeout: float) -> Dict[str, Any]:
        if job.get("die"):
            os._exit(3)  # the lane itself dies, as no isolated cell should make it
        time.sleep(job.get("sleep", 0))
        result = {"status": "pass", "value": job["n"] * 2, "pid": os.getpid(), "lane": self.index}
        return dict(result, big="x" * job.get("big", 0))

    def close(self) -> None:
        pass


def test_every_job_runs_once_across_lanes_and_results_come_back_whole() -> None:
    lanes = Lanes(Backend, 2)
    try:
        jobs = [(n, {"n": n, "sleep": 0.01 * (n % 3), "big": 300_000 if n == 4 else 0}) for n in range(10)]
        results = dict(lanes.run(iter(jobs), timeout=10))
    finally:
        lanes.close()
    assert sorted(results) == list(range(10))
    assert all(results[n]["value"] == 2 * n for n in range(10))
    assert len(results[4]["big"]) == 300_000  # larger than a pipe's buffer
    assert len({r["pid"] for r in results.values()}) == 2 and os.getpid() not in {r["pid"] for r in results.values()}
    assert {r["lane"] for r in results.values()} == {0, 1}  # each lane built its backend with its own index


def test_a_lane_that_dies_costs_only_its_cell() -> None:
    lanes = Lanes(Backend, 2)
    try:
        jobs = [(n, {"n": n, "die": n == 2}) for n in range(6)]
        results = dict(lanes.run(iter(jobs), timeout=10))
    finally:
        lanes.close()
    assert results[2]["status"] == "crash" and "exit status 3" in results[2]["error_message"]
    assert [results[n]["value"] for n in (0, 1, 3, 4, 5)] == [0, 2, 6, 8, 10]
    assert {results[n]["lane"] for n in (0, 1, 3, 4, 5)} <= {0, 1}  # the lane in place of the dead one has its index


@pytest.mark.slow
def test_parallel_cells_record_what_a_serial_run_records(tmp_path: Path) -> None:
    folders = {}
    for jobs in (1, 2):
        folders[jobs] = tmp_path / ("j%d" % jobs)
        run_matrix("run", "--cases", str(FIXTURES / "basic"), "--out", str(folders[jobs]), "-j", str(jobs))

    def essence(folder: Path) -> Any:
        keys = ("case", "mode", "status", "error_type", "graph_hash", "decomposed_hash", "ops", "check_status")
        return sorted(tuple(str(cell[k]) for k in keys) for cell in read_cells(folder))

    assert essence(folders[1]) == essence(folders[2]) and len(essence(folders[1])) == 10

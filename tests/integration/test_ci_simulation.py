"""The CI pipeline in small: two runner processes in parallel, their shards merged, then reported.

The merged report must equal the report of one serial run of the same cells, except
for what differs by nature between runs (timings, memory, run ids, finish times).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pandas as pd
import pytest

from matrix.commands import ci_summary
from matrix.records import tables

from conftest import ROOT

# slow: two shards, a serial run, merges and reports; one worker, so that its module fixture is built once.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("test_ci_simulation")]

CASES = ROOT / "cases" / "exportdb"
# Small cases, two of which ExportDB documents as not supported yet.
SHARDS = (["static_if", "list_unpack"], ["torch_sym_min", "model_attr_mutation"])
# Differ between two runs of the same cells by nature; everything else must match.
VOLATILE = set(tables.TIMES) | {"run_id", "finished_at", "peak_rss_mb", "stderr_tail"}
TABLES = ("cells", "transitions", "summary", "status", "modes", "claims")


def matrix_command(*args: str) -> List[str]:
    return [sys.executable, "-m", "matrix", *args]


def start(*args: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    command = matrix_command(*args)
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(process: subprocess.Popen, timeout: float = 300) -> str:
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, "%s failed (%d):\n%s" % (process.args, process.returncode, err[-4000:])
    return out


def runner(out: Path, cases: List[str]) -> subprocess.Popen:
    return start(
        "run", "--cases", str(CASES), "--select", *cases, "--stages", "check,decompose", "--progress", "none",
        "--out", str(out),
    )  # fmt: skip


def comparable(folder: Path, name: str) -> pd.DataFrame:
    frame = pd.read_parquet(folder / (name + ".parquet"))
    return frame.drop(columns=[c for c in frame.columns if c in VOLATILE]).reset_index(drop=True)


def record_bytes(folder: Path) -> Dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("ci")
    # The two shard jobs run at once, like two CI machines; the serial run alongside them.
    runs = [runner(work / ("shard%d" % i), cases) for i, cases in enumerate(SHARDS)]
    runs.append(runner(work / "serial", [case for cases in SHARDS for case in cases]))
    for process in runs:
        finish(process)
    finish(start("merge", str(work / "shard0"), str(work / "shard1"), "--out", str(work / "merged")))
    reports = [
        start("report", str(work / folder), "--out", str(work / ("site-" + folder)), "--no-charts")
        for folder in ("merged", "serial")
    ]
    for process in reports:
        finish(process)
    return work


def test_shards_cover_every_cell_once(pipeline: Path) -> None:
    cells = pd.read_parquet(pipeline / "site-merged" / "cells.parquet")
    expected = sorted((case, mode) for cases in SHARDS for case in cases for mode in ("strict", "non-strict"))
    assert sorted(zip(cells["case"], cells["mode"])) == expected
    assert set(cells["status"]) <= {"pass", "fail", "mismatch", "crash", "timeout", "not-applicable", "case-error"}


@pytest.mark.parametrize("name", TABLES)
def test_merged_tables_equal_those_of_a_serial_run(pipeline: Path, name: str) -> None:
    merged, serial = comparable(pipeline / "site-merged", name), comparable(pipeline / "site-serial", name)
    pd.testing.assert_frame_equal(merged, serial)


def test_merging_the_same_shards_again_changes_nothing(pipeline: Path) -> None:
    again = pipeline / "merged-again"
    shards = [str(pipeline / "shard0"), str(pipeline / "shard1")]
    finish(start("merge", *shards, "--out", str(again)))
    assert record_bytes(again) == record_bytes(pipeline / "merged")
    # And in place, with one shard downloaded twice: the records stay byte for byte.
    finish(start("merge", str(again), *shards, shards[0], "--out", str(again)))
    jsonl = {k: v for k, v in record_bytes(again).items() if k.endswith(".jsonl")}
    assert jsonl == {k: v for k, v in record_bytes(pipeline / "merged").items() if k.endswith(".jsonl")}


def test_the_summary_finds_nothing_new_against_the_serial_report(pipeline: Path) -> None:
    found = ci_summary.verdict(str(pipeline / "site-merged"), str(pipeline / "site-serial"))
    assert found.has_baseline and found.new_regressions == 0
    assert len(found.cells) == 2 * sum(len(cases) for cases in SHARDS)

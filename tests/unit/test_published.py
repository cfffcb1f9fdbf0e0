"""A published report read back as records: a report rebuilt from its own tables is the same report."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

import pandas as pd

from matrix.records import published, store
from matrix.report import build as report

from .report_support import large_history
from conftest import history, make_load, report_cell, write_by_release


def flaky_and_loaded() -> List[Dict[str, Any]]:
    """A cell whose runs disagree, a load of a saved program, and a traceback, on top of a history."""
    return [
        *history(),
        report_cell("2.6.0", "wobbly", run=0),
        report_cell("2.6.0", "wobbly", "fail", run=1, error_type="RuntimeError", error_traceback="Traceback: boom"),
        report_cell("2.6.0", "wobbly", run=2),
        make_load("2.4.1", "2.6.0", case="steady"),
        # The compiled package of the same program, loaded too (the aoti stage, then `load`).
        dict(make_load("2.4.1", "2.6.0", case="steady"), kind="aoti-load", package="aoti.so"),
        # The same program compiled on the loading release (`load --aoti`).
        dict(make_load("2.4.1", "2.6.0", case="steady"), kind="aoti-compile", status="ok", compile_s=9.5),
    ]


def files(folder: Path) -> Dict[str, bytes]:
    skip = {".export-matrix-report.json", ".export-matrix-charts.json"}
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file() and p.name not in skip}


def test_a_report_rebuilt_from_its_tables_is_byte_identical(tmp_path: Path):
    records = write_by_release(tmp_path / "records", flaky_and_loaded())
    first, second = tmp_path / "first", tmp_path / "second"
    report.build_report([str(records)], str(first), charts=False)
    assert published.is_report(str(first)) and not published.is_report(str(records))
    rebuilt = report.build_report([str(first)], str(second), charts=False)
    assert rebuilt.warnings == ()
    assert files(first) == files(second)
    # The flaky cell kept its runs, and its traceback came back from texts.parquet.
    cells = pd.read_parquet(second / "cells.parquet").set_index("case")
    assert cells.loc["wobbly", "statuses"] == "pass×2 fail×1" and cells.loc["wobbly", "flaky"]
    assert not pd.read_parquet(second / "loads.parquet").empty
    assert len(pd.read_parquet(second / "aoti_loads.parquet")) == 1
    assert pd.read_parquet(second / "aoti_compiles.parquet")["compile_s"].tolist() == [9.5]


def test_timed_runs_survive_the_round_trip(tmp_path: Path):
    records = write_by_release(tmp_path / "records", large_history())
    first = tmp_path / "first"
    report.build_report([str(records)], str(first), charts=False)
    again = store.load([str(first)], workers=0)
    original = store.load([str(records)], workers=0)
    from matrix.records import tables

    ours, theirs = tables.cells(again.cells), tables.cells(original.cells)
    for column in ("status", "statuses", "runs", "export_s", "export_s_runs", "graph_hash", "graph_text"):
        assert ours[column].astype(str).tolist() == theirs[column].astype(str).tolist(), column


def test_a_report_published_without_texts_is_rebuilt_with_a_warning(tmp_path: Path):
    records = write_by_release(tmp_path / "records", flaky_and_loaded())
    first, second = tmp_path / "first", tmp_path / "second"
    report.build_report([str(records)], str(first), charts=False)
    (first / published.TEXTS).unlink()
    rebuilt = report.build_report([str(first)], str(second), charts=False)
    assert rebuilt.warnings == (published.NO_TEXTS % (first, published.TEXTS),)
    before = pd.read_parquet(first / "cells.parquet")
    after = pd.read_parquet(second / "cells.parquet")
    assert before.astype(str).equals(after.astype(str))

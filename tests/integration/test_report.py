"""The report on real records, and built in side processes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Dict, List

import pandas as pd
import pytest

from matrix import parallel
from matrix.records import store
from matrix.report import build as report

from conftest import ROOT, history, write_by_release


def test_report_on_real_records(basic_run: List[Dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Records from the worker running real torch.export on the basic fixture cases."""
    # The case files lie outside the project's cases/: the page shows them from a root given for them.
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "records"
    folder.mkdir()
    (folder / "cells.jsonl").write_text("".join(json.dumps(c) + "\n" for c in basic_run), encoding="utf-8")
    out = tmp_path / "report"
    result = report.build_report([str(folder)], str(out), case_roots=[str(ROOT / "tests" / "fixtures")])
    assert result.pages == len({c["case"] for c in basic_run})
    cells = pd.read_parquet(out / "cells.parquet")
    assert sorted(zip(cells["case"], cells["mode"], cells["status"])) == sorted(
        (c["case"], c["mode"], c["status"]) for c in basic_run
    )
    page = (out / "cases" / "graph_break.md").read_text(encoding="utf-8")
    assert "```python\n" in page and "graph_break()" in page  # the case's source
    assert re.search(r"^Forces a graph break", page, re.MULTILINE)  # its docstring, a paragraph of its own
    strict = next(c for c in basic_run if c["case"] == "graph_break" and c["mode"] == "strict")
    assert strict["status"] == "fail"  # strict export refuses a graph break on every release
    assert "<details><summary>strict · fail · %s" % strict["error_type"] in page


def test_a_build_in_side_processes_is_byte_identical_to_one_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    folder = write_by_release(tmp_path / "records", history())
    outs = [tmp_path / "one", tmp_path / "two"]
    report.build_report([str(folder)], str(outs[0]))
    # The second build parses records and draws heatmaps in side processes, as large reports do
    # (with neither the parse cache nor the chart cache of the first build).
    monkeypatch.setenv("EXPORT_MATRIX_NO_CACHE", "1")
    (outs[1] / "charts").mkdir(parents=True)
    monkeypatch.setattr(store, "PARALLEL_FROM_BYTES", 0)
    monkeypatch.setattr(report, "SIDE_PROCESS_FROM_CELLS", 0)
    monkeypatch.setattr(parallel, "cores", lambda: 2)
    sizes: List[int] = []
    real = parallel.pool

    def counted(processes: int) -> Any:
        sizes.append(processes)
        return real(processes)

    monkeypatch.setattr(parallel, "pool", counted)
    report.build_report([str(folder)], str(outs[1]))
    files = sorted(p.relative_to(outs[0]) for p in outs[0].rglob("*") if p.is_file())
    assert any(p.suffix == ".png" for p in files) and any(p.suffix == ".svg" for p in files)
    assert files == sorted(p.relative_to(outs[1]) for p in outs[1].rglob("*") if p.is_file())
    for name in files:
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name
    assert sizes[-1] == 1  # the heatmaps' side process
    assert sizes == [2, 1]  # before it, the load: one process per (monkeypatched) core

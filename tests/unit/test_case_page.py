"""A case's page: a case run with several --with sets keeps each set's graphs and errors apart."""

from __future__ import annotations

import json
from pathlib import Path

from matrix.report import build as report

from conftest import report_cell

OLD, NEW = "packaging==23.2", "packaging==24.1"


def test_graph_changes_and_errors_are_per_with_set(tmp_path: Path):
    def ran(release: str, with_set: str, status: str = "pass", **extra: object) -> dict:
        return report_cell(release, "m", status, dependency_set=with_set, with_set=with_set, **extra)

    rows = [
        ran("2.9.1", OLD, graph_hash="a" * 16, graph_text="add(x, 1)\n"),
        ran("2.10.0", OLD, graph_hash="a" * 16, graph_text="add(x, 1)\n"),
        ran("2.9.1", NEW, graph_hash="b" * 16, graph_text="mul(x, 2)\n"),
        ran("2.10.0", NEW, "fail", error_type="RuntimeError", error_message="boom", graph_hash=None),
    ]
    folder = tmp_path / "records"
    folder.mkdir()
    (folder / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    report.build_report([str(folder)], str(tmp_path / "out"), charts=False)
    page = (tmp_path / "out" / "cases" / "m.md").read_text(encoding="utf-8")
    # Compared across sets, 2.9.1 [24.1] → 2.10.0 [23.2] would show a graph change; within each set there is none.
    assert "## Graph changes" not in page
    assert "strict · fail · RuntimeError: boom — 2.10.0 [packaging==24.1]</summary>" in page
    assert "| 2.10.0 \\[packaging==24.1\\] | ❌ fail `RuntimeError` |" in page

"""The charts as a report build places them: the status overview on the front page, transitions kept current."""

from __future__ import annotations

from pathlib import Path

from matrix.report import build as report

from conftest import history, report_cell, report_environment, write_by_release


def test_the_front_page_shows_the_status_overview_below_the_verdicts(tmp_path: Path):
    out = tmp_path / "report"
    report.build_report([str(write_by_release(tmp_path / "records", history()))], str(out))
    index = (out / "index.md").read_text(encoding="utf-8")
    link = "](charts/status-overview.png)"
    assert (out / "charts" / "status-overview.png").is_file()
    assert index.count(link) == 1
    assert index.index("## Verdicts") < index.index(link) < index.index("## Summary")


def test_a_release_that_changes_nothing_still_redraws_the_transitions_chart(tmp_path: Path):
    out = tmp_path / "report"
    rows = history()
    report.build_report([str(write_by_release(tmp_path / "first", rows))], str(out))
    before = (out / "charts" / "transitions.png").read_bytes()
    # 2.7.0 repeats 2.6.0: no transition between them, but one more step for the chart to show.
    quiet = [report_environment("2.7.0", "2025-03-03T10:00:00+00:00")] + [
        report_cell(
            "2.7.0", r["case"], r["status"], r["mode"], **{k: r[k] for k in ("graph_hash", "graph_text") if k in r}
        )
        for r in rows
        if r.get("kind") == "cell" and r["torch_version"] == "2.6.0"
    ]
    report.build_report([str(write_by_release(tmp_path / "second", rows + quiet))], str(out))
    assert (out / "charts" / "transitions.png").read_bytes() != before
    index = (out / "index.md").read_text(encoding="utf-8")
    assert "2.6.0 → 2.7.0" in index

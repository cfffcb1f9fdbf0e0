"""A report keeps the baseline it was compared with, and a build from its own tables repeats the comparison."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import List

from matrix.report import build as report
from matrix.report import kept_baseline

from conftest import history, write_by_release


def pages(folder: Path) -> List[Path]:
    return sorted(p.relative_to(folder) for p in folder.rglob("*.md"))


def test_a_build_from_a_reports_tables_repeats_its_comparison_without_the_baseline_at_hand(tmp_path: Path):
    old = write_by_release(tmp_path / "old", [r for r in history() if r.get("torch_version") != "2.6.0"])
    new = write_by_release(tmp_path / "new", history())
    earlier = tmp_path / "latest@abc1234"
    report.build_report([str(old)], str(earlier), charts=False)
    published = tmp_path / "published"
    report.build_report([str(new)], str(published), baseline=str(earlier), charts=False)
    kept = published / kept_baseline.FOLDER
    assert sorted(p.name for p in kept.iterdir()) == [
        "baseline.json", "cells.parquet", "figures.json", "transitions.parquet",
    ]  # fmt: skip
    assert (kept / "cells.parquet").read_bytes() == (earlier / "cells.parquet").read_bytes()
    assert json.loads((kept / "baseline.json").read_text(encoding="utf-8")) == {"name": "latest@abc1234"}
    assert "## Since the previous report" in (published / "index.md").read_text(encoding="utf-8")
    # The site offers the report's own tables to download, not the baseline's.
    site = (published / "site" / "index.html").read_text(encoding="utf-8")
    assert 'href="../cells.parquet"' in site and "baseline/" not in site
    shutil.rmtree(earlier)  # a later reader has the published folder alone
    told: List[str] = []
    rebuilt = tmp_path / "rebuilt"
    report.build_report([str(published)], str(rebuilt), charts=False, notify=told.append)
    assert told == ["compared with the baseline kept in %s (latest@abc1234)" % kept]
    assert pages(rebuilt) == pages(published) and Path("baseline.md") in pages(rebuilt)
    for page in pages(published):
        assert (rebuilt / page).read_text(encoding="utf-8") == (published / page).read_text(encoding="utf-8"), page
    assert "latest@abc1234" in (rebuilt / "baseline.md").read_text(encoding="utf-8")
    # The rebuild keeps the same baseline in turn, and a build told another baseline keeps that one.
    for name in ("cells.parquet", "transitions.parquet", "figures.json", "baseline.json"):
        assert (rebuilt / kept_baseline.FOLDER / name).read_bytes() == (kept / name).read_bytes(), name
    report.build_report([str(published)], str(rebuilt), baseline=str(published), charts=False)
    assert kept_baseline.name_of(str(rebuilt / kept_baseline.FOLDER)) == "published"


def test_only_a_single_report_folder_offers_its_kept_baseline_and_a_build_without_one_removes_it(tmp_path: Path):
    records = write_by_release(tmp_path / "records", history())
    first = tmp_path / "first"
    report.build_report([str(records)], str(first), charts=False)
    second = tmp_path / "second"
    report.build_report([str(records)], str(second), baseline=str(first), charts=False)
    assert kept_baseline.stored([str(second)]) == str(second / kept_baseline.FOLDER)
    assert kept_baseline.stored([str(first)]) is None  # built without a baseline: none kept
    assert kept_baseline.stored([str(records)]) is None  # a record folder is not a report
    assert kept_baseline.stored([str(second), str(first)]) is None  # several folders: no single publication
    # Rebuilt from records without a baseline, the report no longer says it compared with one.
    report.build_report([str(records)], str(second), charts=False)
    assert not (second / kept_baseline.FOLDER).exists() and not (second / "baseline.md").exists()

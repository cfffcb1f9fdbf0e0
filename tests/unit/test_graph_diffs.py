"""Graph diffs kept beside a report's tables: a rebuild without the graph texts still shows every diff shown before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pandas as pd
import pytest

from matrix.records import graph_diffs, published
from matrix.report import build as report
from matrix.report import case_page, diff_files
from matrix.report import document as d
from matrix.report.writers import markdown as md_writer

from . import links_support
from conftest import history, write_by_release

# history(): `steady` (strict) changes its graph from 2.4.1 to 2.5.0, "add(x, 1)" → "add(x, 1)\nmul(x, 2)".
ADDED = "+mul(x, 2)"


def change(**extra: Any) -> Dict[str, Any]:
    """A graph change as transitions.collect gives it."""
    row = {
        "kind": "graph-change", "case": "c", "mode": "strict", "with_set": "", "variant_before": "cpu",
        "before": "2.4.1", "variant": "cpu", "after": "2.5.0", "python_before": "3.11", "python_after": "3.11",
        "hash_before": "a" * 16, "hash_after": "b" * 16,
    }  # fmt: skip
    row.update(extra)
    return row


def cell(release: str, graph_hash: str, text: Any = None) -> Dict[str, Any]:
    return {"case": "c", "mode": "strict", "with_set": "", "release": release, "variant": "cpu", "python": "3.11",
            "graph_hash": graph_hash, "graph_text": text}  # fmt: skip


def kept(diff: str, **extra: Any) -> pd.DataFrame:
    return graph_diffs.frame([dict(change(**extra), diff=diff, kept_from="reports/latest in commit abc1234")])


def test_a_diff_comes_from_the_texts_where_there_are_any_else_from_a_kept_table_of_the_same_hashes():
    moves = pd.DataFrame([change()])
    with_texts = pd.DataFrame([cell("2.4.1", "a" * 16, "x\n"), cell("2.5.0", "b" * 16, "x\ny\n")])
    found = graph_diffs.table(moves, with_texts, [kept("-old")])
    assert found["diff"].tolist() == ["@@ -1 +1,2 @@\n x\n+y"] and found["kept_from"].isna().all()
    without = pd.DataFrame([cell("2.4.1", "a" * 16), cell("2.5.0", "b" * 16)])
    found = graph_diffs.table(moves, without, [kept("-old")])
    assert found["diff"].tolist() == ["-old"] and found["kept_from"].tolist() == ["reports/latest in commit abc1234"]
    # A kept diff of other graphs (another hash on one side) is not this change's diff.
    assert graph_diffs.table(moves, without, [kept("-old", hash_after="c" * 16)]).empty
    attached = graph_diffs.attach(moves, without, found)
    assert attached[graph_diffs.CARRIED].tolist() == ["-old"]
    assert attached[graph_diffs.CARRIED_FROM].tolist() == ["reports/latest in commit abc1234"]


def test_a_kept_diff_between_two_cells_that_are_not_a_transition_is_kept_while_both_cells_are_there():
    # 2.5.0 failed, so the case page diffs 2.4.1 with 2.6.0: no transition, but both graphs are the cells'.
    between = kept("-old", before="2.4.1", after="2.6.0")
    cells = pd.DataFrame([cell("2.4.1", "a" * 16), cell("2.6.0", "b" * 16)])
    assert len(graph_diffs.table(pd.DataFrame(), cells, [between])) == 1
    rerun = pd.DataFrame([cell("2.4.1", "a" * 16), cell("2.6.0", "d" * 16)])
    assert graph_diffs.table(pd.DataFrame(), rerun, [between]).empty


def test_lost_names_the_changes_shown_without_the_diff_a_previous_publication_had_for_that_place():
    moves = pd.DataFrame([change(hash_after="c" * 16), change(case="other")])
    previous = kept("-old")  # case c, 2.4.1 → 2.5.0, other hashes
    assert graph_diffs.lost(previous, moves, graph_diffs.frame([])) == [graph_diffs.key_of(change(hash_after="c" * 16))]
    now = graph_diffs.frame([dict(change(hash_after="c" * 16), diff="-new")])
    assert graph_diffs.lost(previous, moves, now) == []


def test_a_case_page_shows_the_kept_diff_of_two_graphs_whose_texts_are_missing():
    rows = [
        dict(cell("2.4.1", "a" * 16), status="pass", fingerprint_version=1),
        dict(cell("2.5.0", None), status="fail", fingerprint_version=None),
        dict(cell("2.6.0", "b" * 16), status="pass", fingerprint_version=1),
    ]
    held = graph_diffs.carried(kept("-v0 = old\n+v0 = new", before="2.4.1", after="2.6.0"))
    shelf = diff_files.Shelf()
    shown = md_writer.write(d.Page("cases/c", "c", tuple(case_page._graph_diffs("c", rows, held, shelf))))
    assert "<summary>2.4.1 → 2.6.0, strict (kept from reports/latest in commit abc1234) (2 lines, +1 −1)" in shown
    assert "-v0 = old\n+v0 = new" in shown
    assert shelf.paths() == {diff_files.path("c", ["-v0 = old", "+v0 = new"])}
    assert case_page._graph_diffs("c", rows, None, diff_files.Shelf()) == []  # without kept diffs, texts alone: none


def records_without_texts(folder: Path, steady_after: str) -> Path:
    """history()'s records with every graph text removed and `steady`'s 2.5.0 graph hash set to ``steady_after``."""
    rows: List[Dict[str, Any]] = []
    for row in history():
        row = dict(row, graph_text=None) if row.get("kind") == "cell" else row
        if row.get("case") == "steady" and row.get("torch_version") == "2.5.0" and row.get("mode") == "strict":
            row["graph_hash"] = steady_after
        rows.append(row)
    return write_by_release(folder, rows)


def test_a_rebuild_from_tables_without_texts_still_shows_every_graph_diff(tmp_path: Path):
    first, second = tmp_path / "first", tmp_path / "second"
    report.build_report([str(write_by_release(tmp_path / "records", history()))], str(first), charts=False, csv=True)
    table = pd.read_parquet(first / graph_diffs.TABLE)
    assert table["case"].tolist() == ["steady"] and ADDED in table["diff"][0]
    assert graph_diffs.TABLE not in json.dumps(sorted(p.name for p in (first / "site" / "tables").iterdir()))
    (first / published.TEXTS).unlink()
    report.build_report([str(first)], str(second), charts=False)
    page = (second / "cases" / "steady.md").read_text(encoding="utf-8")
    assert "<summary>2.4.1 → 2.5.0, strict (kept from an earlier build of this report) (" in page and ADDED in page
    step = (second / "transition-2.4.1__2.5.0.md").read_text(encoding="utf-8")
    assert "No graph text recorded" not in step and "graph diff (kept from" in step
    assert ADDED in links_support.linked_diffs(second, "transition-2.4.1__2.5.0.md")
    site = (second / "site" / "cases" / "steady.html").read_text(encoding="utf-8")
    assert "kept from an earlier build of this report" in site and "mul(x, 2)" in site
    # The diff is kept again, so a third rebuild has it too; and transitions.parquet keeps its columns.
    assert pd.read_parquet(second / graph_diffs.TABLE)["diff"].tolist() == table["diff"].tolist()
    assert graph_diffs.CARRIED not in pd.read_parquet(second / "transitions.parquet").columns


def test_publishing_over_a_report_refuses_to_drop_a_graph_diff_it_showed(tmp_path: Path):
    published_report = tmp_path / "latest"
    report.build_report([str(write_by_release(tmp_path / "records", history()))], str(published_report), charts=False)
    before = (published_report / "index.md").read_bytes()
    # New records of the same releases: no graph texts, and steady's 2.5.0 graph is another one.
    fresh = records_without_texts(tmp_path / "fresh", "3" * 16)
    with pytest.raises(report.ReportError, match="graph diff of 1 graph change .*steady strict 2.4.1 → 2.5.0"):
        report.build_report([str(fresh)], str(published_report), charts=False)
    assert (published_report / "index.md").read_bytes() == before  # nothing written
    # Elsewhere there is nothing to lose; and the same hashes carry the old diff over.
    report.build_report([str(fresh)], str(tmp_path / "elsewhere"), charts=False)
    same = records_without_texts(tmp_path / "same", "2" * 16)
    report.build_report([str(same)], str(published_report), charts=False)
    assert ADDED in (published_report / "cases" / "steady.md").read_text(encoding="utf-8")
    # Told to (the kept table removed), it publishes without the diff.
    (published_report / graph_diffs.TABLE).unlink()
    report.build_report([str(fresh)], str(published_report), charts=False)
    assert ADDED not in (published_report / "cases" / "steady.md").read_text(encoding="utf-8")

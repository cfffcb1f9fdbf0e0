"""The headline figures and what moved them since an earlier report (records.figures), on hand-written tables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pandas as pd

from matrix.records import baseline, figures
from matrix.report import build as report

from conftest import cell_table as cells
from conftest import history, make_cell, write_by_release


def move(kind: str, case: str, before: str, after: str, variant: str = "pypi", **extra: Any) -> Dict[str, Any]:
    return {"kind": kind, "case": case, "mode": "strict", "variant": variant, "with_set": "", "before": before,
            "after": after, "variant_before": extra.pop("variant_before", variant), "status_before": "fail",
            "status_after": "pass", **extra}  # fmt: skip


def moves(rows: List[Dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=[*baseline.TRANSITION_KEY, "variant_before", "status_before", "status_after"])


def same_cells() -> baseline.BaselineComparison:
    table = cells([make_cell(r, c, "pass") for r in ("2.12.0", "2.13.0", "2.14.0") for c in ("a", "b", "c")])
    return baseline.compare(table, moves([]), table, moves([]))


def test_the_figures_count_open_regressions_and_transitions_by_kind() -> None:
    found = figures.of(
        moves([move("fix", "a", "1", "2"), move("stage-fix", "b", "1", "2"), move("regression", "c", "1", "2"),
               move("graph-change", "a", "2", "3"), move("graph-change", "b", "2", "3")]),
        still_broken=1,
    )  # fmt: skip
    assert found == {"still broken": 1, "regressions found": 1, "fixes": 2, "graph changes": 2, "op drift": 0}
    assert list(json.loads(figures.dumps(found))) == list(figures.NAMES)


def test_a_transition_across_variants_into_an_incomplete_build_is_put_down_to_both_rules() -> None:
    old = moves([
        move("fix", "a", "2.12.0", "2.13.0+cpu", variant="cpu", variant_before="pypi"),
        move("fix", "b", "2.12.0", "2.13.0", variant="pypi"),
        move("graph-change", "c", "2.13.0", "2.14.0"),
    ])  # fmt: skip
    now = moves([move("fix", "b", "2.12.0", "2.13.0"), move("graph-change", "c", "2.13.0", "2.14.0")])
    found = figures.moved(
        figures.of(old, 3), figures.of(now, 3), same_cells(), old, now, incomplete=[("2.13.0+cpu", "cpu")]
    )
    assert found.same_cells
    # Only the figure that moved is named, with the rules the tables show for its whole move.
    assert [(m.figure, m.before, m.now) for m in found.moved] == [("fixes", 2, 1)]
    assert found.moved[0].parts == (
        figures.Part(-1, "transitions %s and %s" % (figures.SERIES_RULE, figures.INCOMPLETE_RULE)),
    )
    assert figures.short(found) == "fixes 2 → 1"


def test_a_transition_gone_for_no_reason_the_tables_show_is_not_attributed() -> None:
    old = moves([move("op-drift", "a", "2.12.0", "2.13.0"), move("op-drift", "b", "2.12.0", "2.13.0")])
    now = moves([move("op-drift", "a", "2.12.0", "2.13.0")])
    found = figures.moved(figures.of(old, 0), figures.of(now, 0), same_cells(), old, now)
    assert found.moved[0].parts == (figures.Part(-1, ""),)
    assert figures.cause(found.moved[0].parts[0]) == "−1 not attributed"


def test_a_transition_of_a_cell_that_changed_is_put_down_to_the_cells() -> None:
    before = cells([make_cell("2.12.0", "a", "pass"), make_cell("2.13.0", "a", "pass")])
    after = cells([make_cell("2.12.0", "a", "pass"), make_cell("2.13.0", "a", "fail")])
    now = moves([move("regression", "a", "2.12.0", "2.13.0", status_before="pass", status_after="fail")])
    comparison = baseline.compare(after, now, before, moves([]))
    found = figures.moved({"regressions found": 0}, {"regressions found": 1}, comparison, moves([]), now)
    assert not found.same_cells
    assert found.moved[0].parts == (figures.Part(1, "transitions " + figures.CELLS_CHANGED),)


def test_still_broken_moved_by_its_rule_is_told_from_the_rest_of_its_move() -> None:
    # The earlier report published 10; its own tables judged by today's rule give 8; this report has 7.
    found = figures.moved({"still broken": 10}, {"still broken": 7}, same_cells(), moves([]), moves([]),
                          rejudged_still_broken=8)  # fmt: skip
    assert found.moved[0].parts == (figures.Part(-2, figures.OPEN_RULE % 8), figures.Part(-1, ""))
    # Where the tables cannot be judged again, the move is only said, with no reason.
    alone = figures.moved({"still broken": 10}, {"still broken": 8}, same_cells(), None, moves([]))
    assert alone.moved[0].parts == (figures.Part(-2, ""),)


def test_an_earlier_reports_figures_come_from_its_file_else_from_its_tables_and_front_page(tmp_path: Path) -> None:
    (tmp_path / figures.FILE).write_text(figures.dumps({"still broken": 4, "fixes": 9}), encoding="utf-8")
    assert figures.read(str(tmp_path), None) == {"still broken": 4, "fixes": 9}
    older = tmp_path / "older"
    older.mkdir()
    (older / "index.md").write_text(
        "## Verdicts\n\n- **Still broken on 2.15.0+cu132**: 10 of the 38 regressions found between releases\n",
        encoding="utf-8",
    )
    table = moves([move("fix", "a", "1", "2"), move("graph-change", "a", "2", "3")])
    assert figures.read(str(older), table) == {
        "still broken": 10, "regressions found": 0, "fixes": 1, "graph changes": 1, "op drift": 0,
    }  # fmt: skip


def test_a_report_says_which_figures_moved_since_its_baseline_and_writes_its_own(tmp_path: Path) -> None:
    records = write_by_release(tmp_path / "records", history())
    first = tmp_path / "first"
    report.build_report([str(records)], str(first), charts=False)
    written = json.loads((first / figures.FILE).read_text(encoding="utf-8"))
    assert set(written) == set(figures.NAMES)
    # The same records against their own report: nothing moved, and nothing is said.
    again = tmp_path / "again"
    report.build_report([str(records)], str(again), baseline=str(first), charts=False)
    assert "Headline figures moved" not in (again / "index.md").read_text(encoding="utf-8")
    # A baseline that published other figures for the same cells: the moves are named, with no cell changed.
    (first / figures.FILE).write_text(figures.dumps({**written, "fixes": written["fixes"] + 3}), encoding="utf-8")
    report.build_report([str(records)], str(again), baseline=str(first), charts=False)
    index = (again / "index.md").read_text(encoding="utf-8")
    line = "- **Headline figures moved**: with no cell changed: fixes %d → %d" % (
        written["fixes"] + 3,
        written["fixes"],
    )
    assert line in index
    section = index[index.index("## Since the previous report") :]
    assert "  - fixes: %d → %d\n    - −3 not attributed" % (written["fixes"] + 3, written["fixes"]) in section
    site = (again / "site" / "index.html").read_text(encoding="utf-8")
    # The site says the same, from the same document: the move, then its cause under it.
    assert "<li>fixes: %d → %d<ul><li>−3 not attributed</li>" % (written["fixes"] + 3, written["fixes"]) in site

"""The front page's verdicts, judged on hand-written records (records.verdicts) and worded (report.verdicts)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Dict, List, Sequence

import pandas as pd

from matrix.contract import records, schema
from matrix.records import baseline, confounds, open_regressions, transitions
from matrix.records import verdicts as judged
from matrix.records.epochs import Epoch
from matrix.report import build as report
from matrix.report import document as d
from matrix.report import pages
from matrix.report import verdicts as worded
from matrix.report.writers import html as html_writer
from matrix.report.writers import markdown as md_writer

from .report_support import paragraphs
from conftest import cell_table as cells
from conftest import environment_of as environment
from conftest import make_cell, make_load, report_cell

KNOWN = ["2.%d.0" % minor for minor in range(1, 16)]


def judge_moves(rows: List[Dict[str, Any]]) -> open_regressions.Regressions:
    table = cells(rows)
    return open_regressions.open_regressions(table, transitions.find(table))


# --- regressions still open on the newest release ---------------------------------------------------


def render(v: judged.Verdicts) -> str:
    """The verdicts' section as the Markdown front page draws it (without the page's title)."""
    return md_writer.write(d.Page("index", "t", (worded.section(v),))).split("\n", 2)[2]


def site(v: judged.Verdicts, pages: object = None) -> str:
    """The verdicts' section as the site's front page draws it."""
    return html_writer.write(d.Page("index", "t", (worded.section(v),)), {"index"})


def test_open_regressions_are_those_still_worse_on_the_newest_release() -> None:
    rows = []
    for case, statuses in {
        "breaks": ("pass", "fail", "fail"),
        "heals": ("pass", "fail", "pass"),
        "gone": ("pass", "fail", "not-applicable"),
        "twice": ("pass", "mismatch", "fail"),
    }.items():
        rows += [make_cell(r, case, s) for r, s in zip(("2.4.0", "2.5.0", "2.6.0"), statuses)]
    rows += [make_cell(r, "breaks", s, "non-strict") for r, s in (("2.4.0", "pass"), ("2.5.0", "fail"),
                                                                    ("2.6.0", "mismatch"))]  # fmt: skip
    # Passes everywhere, but its program stops loading back from 2.5.0 on.
    rows += [make_cell(r, "stage", "pass", serialize_status=s) for r, s in (("2.4.0", "ok"), ("2.5.0", "error"),
                                                                          ("2.6.0", "error"))]  # fmt: skip
    found = judge_moves(rows)
    assert found.newest == ("2.6.0",)
    # breaks ×3 (pass → fail in both modes, then non-strict's fail → mismatch: wrong numbers), heals, gone,
    # twice ×2 (pass → mismatch, mismatch → fail), stage: all but heals and gone still show on 2.6.0.
    assert (found.found, found.open_count, found.open_cells, found.fixed, found.unknown) == (8, 6, 4, 1, 1)
    listed = {(o.case, o.modes): o for o in found.open}
    assert set(listed) == {("breaks", ("strict", "non-strict")), ("twice", ("strict",)), ("stage", ("strict",))}
    breaks = listed[("breaks", ("strict", "non-strict"))]
    assert (breaks.before, breaks.after, breaks.now) == ("2.4.0", "2.5.0", ("fail", "mismatch"))
    # A cell that got worse twice is listed where it first broke.
    twice = listed[("twice", ("strict",))]
    assert (twice.before, twice.after, twice.status_after, twice.now) == ("2.4.0", "2.5.0", "mismatch", ("fail",))
    stage = listed[("stage", ("strict",))]
    assert (stage.kind, stage.stage, stage.now) == ("stage-regression", "serialize", ("pass",))


def test_a_stage_regression_is_fixed_when_the_stage_works_again_and_a_wrong_result_when_numbers_are_right() -> None:
    table = cells(
        [make_cell("2.6.0", "stage", "pass", serialize_status="ok"), make_cell("2.6.0", "silent", "mismatch")]
        + [make_cell("2.6.0", "loud", "fail")]
    )
    moves = pd.DataFrame(
        [
            {"kind": "stage-regression", "case": "stage", "mode": "strict", "variant": "cpu", "before": "2.4.0",
             "after": "2.5.0", "status_before": "pass", "status_after": "pass", "stage": "serialize"},
            # An export that refused now gives wrong numbers: open while it still does.
            {"kind": "wrong-result", "case": "silent", "mode": "strict", "variant": "cpu", "before": "2.4.0",
             "after": "2.5.0", "status_before": "fail", "status_after": "mismatch", "stage": None},
            {"kind": "wrong-result", "case": "loud", "mode": "strict", "variant": "cpu", "before": "2.4.0",
             "after": "2.5.0", "status_before": "fail", "status_after": "mismatch", "stage": None},
        ]
    )  # fmt: skip
    found = open_regressions.open_regressions(table, moves)
    assert (found.found, found.open_count, found.fixed) == (3, 1, 2)
    assert [o.case for o in found.open] == ["silent"]


def test_the_newest_cell_is_the_regressions_own_variant_where_the_newest_release_has_several() -> None:
    rows = [make_cell(r, "c", s) for r, s in (("2.5.0", "pass"), ("2.6.0", "fail"), ("2.7.0", "fail"))]
    rows.append(make_cell("2.7.0+cpu", "c", "pass", variant="cpu-only"))
    table = cells(rows)
    moves = transitions.find(table, {"cpu": ["2.5.0", "2.6.0", "2.7.0"], "cpu-only": ["2.7.0+cpu"]})
    found = open_regressions.open_regressions(table, moves)
    assert found.newest == ("2.7.0", "2.7.0+cpu")
    assert (found.open_count, found.fixed) == (1, 0)


def test_a_cell_broken_fixed_and_broken_again_cites_the_regression_still_open() -> None:
    rows = [
        make_cell(r, "c", s) for r, s in zip(("2.1.0", "2.2.0", "2.3.0", "2.4.0"), ("pass", "fail", "pass", "mismatch"))
    ]
    found = judge_moves(rows)
    # pass → fail at 2.1 → 2.2 was fixed on 2.3.0; what is broken on 2.4.0 broke at 2.3 → 2.4.
    assert (found.found, found.open_count, found.open_cells, found.fixed, found.unknown) == (2, 1, 1, 1, 0)
    (still,) = found.open
    assert (still.before, still.after, still.status_before, still.status_after, still.now) == (
        "2.3.0", "2.4.0", "pass", "mismatch", ("mismatch",),
    )  # fmt: skip


def test_a_regression_fixed_and_not_broken_again_is_not_still_broken() -> None:
    releases = ("2.1.0", "2.2.0", "2.3.0", "2.4.0")
    rows = [make_cell(r, "heals", s) for r, s in zip(releases, ("pass", "fail", "pass", "pass"))]
    # Fixed on 2.3.0 then gone from 2.4.0: fixed, not unknown; a wrong result that passed again, likewise.
    rows += [make_cell(r, "gone", s) for r, s in zip(releases, ("pass", "fail", "pass", "not-applicable"))]
    rows += [make_cell(r, "silent", s) for r, s in zip(releases, ("fail", "mismatch", "pass", "pass"))]
    rows += [make_cell(r, "stage", "pass", serialize_status=s) for r, s in zip(releases, ("ok", "error", "ok", "ok"))]
    found = judge_moves(rows)
    assert (found.found, found.open_count, found.fixed, found.unknown) == (4, 0, 4, 0)
    assert found.open == () and found.in_newest == ()


def test_a_stage_regression_whose_cell_passes_reads_the_stages_outcome_now() -> None:
    releases = ("2.4.0", "2.5.0", "2.6.0")
    rows = [make_cell(r, "saves", "pass", serialize_status=s) for r, s in zip(releases, ("ok", "error", "error"))]
    # Decomposition broke at 2.4 → 2.5 and the cell fails on 2.6.0: the stage says nothing there, the cell does.
    rows += [make_cell("2.4.0", "decomposes", "pass", decompose_status="ok")]
    rows += [make_cell("2.5.0", "decomposes", "pass", decompose_status="error")]
    rows += [make_cell("2.6.0", "decomposes", "fail")]
    found = judge_moves(rows)
    listed = {o.case: o for o in found.open}
    assert (listed["saves"].now, listed["saves"].stage_now) == (("pass",), ("error",))
    assert (listed["decomposes"].now, listed["decomposes"].stage_now) == (("fail",), ("",))
    text = render(verdicts(regressions=found))
    assert (
        "  - [saves](cases/saves.md) strict: save/load stopped working at [2.4.0 → 2.5.0](transition-2.4.0__2.5.0.md);"
        " save/load now error." in text
    )
    assert "decomposition stopped working at [2.4.0 → 2.5.0](transition-2.4.0__2.5.0.md); now ❌ fail." in text
    assert "still fails" not in text and "now ✅ pass" not in text
    html = site(verdicts(regressions=found))
    assert ">saves</a> strict: save/load stopped working at <a " in html and "; save/load now error.</li>" in html
    assert "pass.</li>" not in html


def test_the_newest_release_line_lists_exactly_the_regressions_that_broke_there() -> None:
    releases = ("2.1.0", "2.2.0", "2.3.0", "2.4.0")
    rows = [make_cell(r, "old", s) for r, s in zip(releases, ("pass", "fail", "fail", "fail"))]
    rows += [make_cell(r, "new", s) for r, s in zip(releases, ("pass", "pass", "pass", "fail"))]
    # Got worse twice: still broken since 2.2 → 2.3, and worse again at 2.3 → 2.4.
    rows += [make_cell(r, "twice", s) for r, s in zip(releases, ("pass", "pass", "mismatch", "fail"))]
    rows += [make_cell(r, "again", s) for r, s in zip(releases, ("pass", "fail", "pass", "mismatch"))]
    rows += [make_cell(r, "healed", s) for r, s in zip(releases, ("pass", "pass", "fail", "pass"))]
    rows += [make_cell(r, "stage", "pass", serialize_status=s) for r, s in zip(releases, ("ok", "ok", "ok", "error"))]
    found = judge_moves(rows)
    assert [(o.case, o.before, o.after) for o in found.in_newest] == [
        ("again", "2.3.0", "2.4.0"), ("new", "2.3.0", "2.4.0"),
        ("stage", "2.3.0", "2.4.0"), ("twice", "2.3.0", "2.4.0"),
    ]  # fmt: skip
    assert {(o.case, o.before, o.after) for o in found.open} == {
        ("old", "2.1.0", "2.2.0"), ("twice", "2.2.0", "2.3.0"),
        ("again", "2.3.0", "2.4.0"), ("new", "2.3.0", "2.4.0"), ("stage", "2.3.0", "2.4.0"),
    }  # fmt: skip
    text = render(verdicts(regressions=found))
    part = text[text.index("- **Regressed in 2.4.0**") :].split("\n- ")[0].splitlines()
    assert part[0] == "- **Regressed in 2.4.0**: 4 cells broke there:"
    assert [line.split("](cases/")[0] for line in part[1:]] == ["  - [again", "  - [new", "  - [stage", "  - [twice"]
    assert "  - [twice](cases/twice.md) strict: ⚠️ mismatch → ❌ fail at [2.3.0 → 2.4.0]" in part[4]
    html = site(verdicts(regressions=found))
    assert '<strong>Regressed in 2.4.0</strong>: 4 cells broke there:<ul><li><a href="cases/again.html">again</a>' in (
        html.replace("../cases/again.md", "cases/again.html")
    )
    # With nothing broken in the newest release, the line says so.
    calm = judge_moves([make_cell(r, "old", s) for r, s in zip(releases, ("pass", "fail", "fail", "fail"))])
    assert "- **Regressed in 2.4.0**: nothing broke there ([transitions](#changes))." in (
        render(verdicts(regressions=calm))
    )


def test_the_autocast_example_cites_the_regression_a_bisect_should_start_from() -> None:
    case = "models/autocast_cpu_bf16"
    history = (("2.3.1", "pass"), ("2.4.1", "fail"), ("2.5.1", "pass"), ("2.7.1", "pass"), ("2.8.0", "mismatch"))
    found = judge_moves([make_cell(r, case, s) for r, s in history])
    text = render(verdicts(regressions=found))
    line = next(line for line in text.splitlines() if line.startswith("  - ") and "autocast" in line)
    assert line == (
        "  - [models/autocast_cpu_bf16](cases/models__autocast_cpu_bf16.md) strict: ✅ pass → ⚠️ mismatch at"
        " [2.7.1 → 2.8.0](transition-2.7.1__2.8.0.md); now ⚠️ mismatch."
    )


# --- cells of cases documented to work ---------------------------------------------------------------


def documented_rows() -> List[Dict[str, Any]]:
    rows = []
    for mode in schema.MODES:
        rows += [
            make_cell("2.4.0", "a", "pass", mode, expected="fails"),  # the newer catalogue's claim wins
            make_cell("2.5.0", "a", "pass", mode, expected="supported"),
            # 2.4.0 cannot run "b" at all: counted as not passing, not left out.
            make_cell("2.4.0", "b", "not-applicable", mode, expected="supported"),
            make_cell("2.5.0", "b", "fail" if mode == "strict" else "pass", mode, expected="supported"),
            make_cell("2.4.0", "n", "fail", mode),  # no claim: failing, but not unexpectedly
            make_cell("2.5.0", "n", "fail", mode),
            make_cell("2.5.0", "x", "fail", mode, expected="fails"),
        ]
    rows += [make_cell(r, "s", "pass", "strict", expected="strict-only") for r in ("2.4.0", "2.5.0")]
    rows += [make_cell(r, "s", "fail", "non-strict", expected="strict-only") for r in ("2.4.0", "2.5.0")]
    return rows


def test_every_release_is_counted_against_every_case_documented_to_work() -> None:
    table = cells(documented_rows())
    assert judged.case_claims(table) == {"a": "supported", "b": "supported", "s": "strict-only", "x": "fails"}
    found = {(e.release, e.mode): e for e in judged.expected(table)}
    old, new = found[("2.4.0", "strict")], found[("2.5.0", "strict")]
    # Three cases are documented to work in strict mode; 2.4.0 ran two of them and passed both.
    assert (old.cases, old.ran, old.passed, old.unexpected, old.failing) == (3, 2, 2, 0, 1)
    assert old.rate == 2 / 3
    assert (new.cases, new.ran, new.passed, new.unexpected, new.failing) == (3, 3, 2, 1, 3)
    loose = found[("2.5.0", "non-strict")]
    # Only "a" and "b" claim non-strict; "s" failing there is what its claim says.
    assert (loose.cases, loose.ran, loose.passed, loose.unexpected, loose.failing) == (2, 2, 2, 0, 3)
    best = {b.mode: b for b in judged.best(judged.expected(table))}
    assert best["strict"].environments == ("2.4.0", "2.5.0") and best["strict"].passed == 2
    assert best["non-strict"].environments == ("2.5.0",) and (best["non-strict"].passed, best["non-strict"].cases) == (
        2,
        2,
    )


def test_an_exportdb_case_is_judged_by_each_releases_own_claim_falling_back_to_its_expected() -> None:
    ours = dict(case_file="cases/exportdb/optional_input.py", expected="not-supported-yet")
    rows = [
        make_cell("2.9.1", "exportdb/optional_input", "pass", **ours),  # 2.9.1 names no claim: expected stands in
        make_cell("2.13.0", "exportdb/optional_input", "fail", **ours, exportdb_claim="supported"),
        make_cell("2.15.0", "exportdb/optional_input", "fail", **ours, exportdb_claim="not-supported-yet"),
        *(make_cell(r, "plain", "pass", expected="supported") for r in ("2.9.1", "2.13.0", "2.15.0")),
    ]
    table = cells(rows)
    assert judged.claims(table).tolist() == [
        "not-supported-yet", "supported", "supported", "supported", "not-supported-yet", "supported",
    ]  # fmt: skip
    found = {e.release: e for e in judged.expected(table) if e.mode == "strict"}
    # 2.13.0's own ExportDB documents the case as supported: its failure there is unexpected.
    assert (found["2.13.0"].cases, found["2.13.0"].passed, found["2.13.0"].unexpected) == (2, 1, 1)
    assert (found["2.9.1"].cases, found["2.9.1"].passed, found["2.9.1"].unexpected) == (1, 1, 0)
    assert (found["2.15.0"].cases, found["2.15.0"].passed, found["2.15.0"].unexpected) == (1, 1, 0)
    # The largest share of what each release documents: 2.9.1 and 2.15.0 pass all of theirs, 2.13.0 half.
    (best,) = judged.best(judged.expected(table))
    assert (best.environments, best.passed, best.cases) == (("2.9.1", "2.15.0"), 1, 1)


def test_a_mode_a_release_lacks_is_not_counted_as_documented_cases_failing_there() -> None:
    # 2.1.0 has no non-strict mode: each of its non-strict cells is not applicable. 2.2.0 has both.
    rows = [
        make_cell(r, c, status, mode=mode, expected="supported")
        for r, lacks in (("2.1.0", True), ("2.2.0", False))
        for c in ("a", "b")
        for mode, status in (("strict", "pass"), ("non-strict", "not-applicable" if lacks else "pass"))
    ]
    rows.append(make_cell("2.2.0", "c", "not-applicable", mode="non-strict", expected="supported"))
    found = {(e.release, e.mode): e for e in judged.expected(cells(rows))}
    assert ("2.1.0", "non-strict") not in found  # not "0 of 2 (0.0%)"
    # Its strict mode is counted against every case documented to work, c too, which it did not run.
    assert (found[("2.1.0", "strict")].passed, found[("2.1.0", "strict")].cases) == (2, 3)
    # Where the mode exists, a case it could not run still counts against it.
    assert (found[("2.2.0", "non-strict")].passed, found[("2.2.0", "non-strict")].cases) == (2, 3)


def test_a_release_passes_a_case_when_every_mode_that_exists_there_passes() -> None:
    assert judged.passes(["pass", "not-applicable"]) and judged.passes(["pass", "pass"])
    assert not judged.passes(["pass", "fail"]) and not judged.passes(["not-applicable", "not-applicable"])
    assert not judged.passes([]) and not judged.passes(["pass", "env-error"])
    assert judged.exists(["not-applicable", "fail"]) and not judged.exists(["not-applicable"])


def test_no_claim_means_no_expected_rows_and_no_best() -> None:
    table = cells([make_cell("2.5.0", "a", "pass")])
    assert judged.expected(table) == [] and judged.best([]) == []


def test_since_baseline_counts_what_changed_and_is_none_without_a_baseline() -> None:
    assert judged.since_baseline(None, None) is None
    base = cells([make_cell("2.5.0", "a", "pass"), make_cell("2.5.0", "b", "pass"), make_cell("2.5.0", "c", "pass"),
                  make_cell("2.5.0", "e", "fail"), make_cell("2.5.0", "f", "fail")])  # fmt: skip
    now = cells([make_cell("2.5.0", "a", "fail"), make_cell("2.5.0", "b", "pass"), make_cell("2.5.0", "d", "pass"),
                 make_cell("2.5.0", "e", "mismatch"), make_cell("2.5.0", "f", "pass")])  # fmt: skip
    empty = transitions.find(now)
    found = judged.since_baseline(baseline.compare(now, empty, base, empty), "latest")
    # A refused export that now gives wrong numbers counts with the regressions, not the fixes.
    assert found == judged.SinceBaseline("latest", 3, 2, 1, 1, 1, 0, 0)


# --- the words ---------------------------------------------------------------------------------------


def verdicts(**changes: Any) -> judged.Verdicts:
    """Verdicts over the documented rows, changed where asked."""
    table = cells(documented_rows())
    found = judged.expected(table)
    values: Dict[str, Any] = dict(
        regressions=open_regressions.open_regressions(table, transitions.find(table)),
        expected=tuple(found),
        best=tuple(judged.best(found)),
        epochs=(),
        sample=confounds.sample(table, transitions.find(table), pd.DataFrame(), [], KNOWN),
    )
    values.update(changes)
    return judged.Verdicts(**values)


def test_each_verdict_is_one_line_with_its_evidence_and_no_paragraph_runs_long() -> None:
    text = render(verdicts())
    lines = text.splitlines()
    assert lines[0] == "## Verdicts"
    # "b" failing on 2.5.0 is no regression: 2.4.0 could not run it.
    assert lines[2] == (
        "- **Still broken on 2.5.0**: no regression was found between releases ([transitions](#changes))."
    )
    assert "- **Unexpected failures**: 2.4.0 0/3 · 2.5.0 1/6 (failing cells of cases documented to work / all" in text
    assert "all failing cells; [claims](claims.md))." in text
    assert "- **Passes the most of what is documented to work**: strict: 2.5.0, 2.4.0 (2 of 3);" in text
    assert "non-strict: 2.5.0 (2 of 2) ([per build](claims.md#documented-to-work))." in text
    assert "- **Since the previous report**: no baseline given" in text
    assert "- **Sample**: 2 of 2 minor releases" not in text and "every minor release from 2.4 to 2.5 was run" in text
    # "n" claims nothing and fails in both modes on both releases: its own line, its own column.
    assert "- **Failing with no claim**: 2.4.0 2/3 · 2.5.0 2/6 (failing cells of cases whose documentation" in text
    assert max(len(p) for p in paragraphs(text)) <= worded.LONGEST
    # The counts per build are the claims page's, where the verdicts' "per build" links.
    assert "Documented to work" not in text
    table = md_writer.write(d.Page("claims", "t", (pages.documented(verdicts()),)))
    assert "## Documented to work" in table
    assert "| unexpected failures | failing with no claim | all failing cells |" in table
    assert "| 2.4.0 | 2 of 3 (66.7%) | 1 of 2 (50.0%) | 2 / 1 | 0 | 2 | 3 |" in table


def test_an_open_wrong_result_says_so_and_names_the_with_set_of_its_cells() -> None:
    rows = [make_cell("2.4.0", "silent", "fail"), make_cell("2.5.0", "silent", "mismatch")]
    rows += [make_cell(r, "pinned", s, with_set="packaging==24.1") for r, s in (("2.4.0", "pass"), ("2.5.0", "fail"))]
    found = judge_moves(rows)
    assert [(o.case, o.kind, o.with_set) for o in found.open] == [
        ("pinned", "regression", "packaging==24.1"),
        ("silent", "wrong-result", ""),
    ]
    text = render(verdicts(regressions=found))
    assert (
        "  - [pinned](cases/pinned.md) \\[packaging==24.1\\] strict: ✅ pass → ❌ fail at"
        " [2.4.0 → 2.5.0](transition-2.4.0__2.5.0.md); now ❌ fail." in text
    )
    assert "  - [silent](cases/silent.md) strict: ❌ fail → ⚠️ mismatch (now wrong numbers) at [2.4.0 → 2.5.0]" in text


def test_long_lists_are_cut_to_keep_each_verdict_short() -> None:
    many = [
        judged.Expected(
            "2.%d.0+cu128 pypi" % m, "2.%d.0" % m, "pypi", "3.11", "strict", 50, 50, 40 + m % 3, m % 4, 10 + m
        )
        for m in range(1, 16)
    ]
    text = render(verdicts(expected=tuple(many), best=tuple(judged.best(many))))
    unexpected = next(p for p in paragraphs(text) if p.startswith("- **Unexpected failures**"))
    assert unexpected.startswith("- **Unexpected failures**: 3/25 on 2.15.0+cu128 pypi, 0 to 3 per build (")
    assert unexpected.endswith("[per build](claims.md#documented-to-work)).")
    best = next(p for p in paragraphs(text) if p.startswith("- **Passes the most"))
    assert "strict: 2.14.0+cu128 pypi, 2.11.0+cu128 pypi, 2.8.0+cu128 pypi and 2 more (42 of 50)" in best
    assert max(len(p) for p in paragraphs(text)) <= worded.LONGEST


def test_the_epochs_line_and_table_name_ranges_exceptions_and_the_cause_of_a_break() -> None:
    from matrix.records.artifacts import Failure
    from matrix.records.epochs import FailingCase

    old = Epoch(("2.1.0",), programs=4, untried=0, tried=4, passed=4, backward="untried", exceptions=())
    new = Epoch(
        ("2.3.0", "2.5.0"), programs=8, untried=2, tried=12, passed=11, backward="some",
        exceptions=(FailingCase("b", "strict", (("2.3.0", "2.5.0"),), Failure("run-error", "TypeError", "x" * 300)),),
        cut=Failure("load-error", "RuntimeError", "Serialized version | (5, 1)"), cut_from="2.1.0",
        older_tried=4, older_passed=0,
    )  # fmt: skip
    text = render(verdicts(epochs=(old, new)))
    assert (
        "- **Saved programs**: load across 2 epochs: 2.1.0 · 2.3.0–2.5.0 ([epochs](#saved-programs-across-releases),"
        " [every pair](artifacts.md)); 0 of 4 programs saved before 2.3.0 load on 2.5.0." in text
    )
    blocks = worded.epochs_section(judged.Verdicts(**{**verdicts().__dict__, "epochs": (old, new)}))
    table = md_writer.write(d.Page("index", "t", blocks))
    assert "| 2.1.0 | 4 | 4 of 4 | – | none | – |" in table
    assert (
        "| 2.3.0–2.5.0 | 8 (2 more not tried) | 11 of 12 | partly | 1 case: [b](cases/b.md) (strict) |"
        " 2.1.0 → 2.3.0: load-error: RuntimeError: Serialized version \\| (5, 1) |" in table
    )
    assert worded.epochs_section(None) == () and worded.epochs_section(verdicts()) == ()


def test_the_strict_note_says_where_the_default_flips_and_which_releases_between_were_not_run() -> None:
    sample = confounds.Sample(
        minors=tuple("2.%d" % m for m in range(1, 10)),
        run=("2.1", "2.5", "2.9"),
        build_changes=(),
        strict_defaults=(
            confounds.StrictDefault("2.1.2", "strict", False),
            confounds.StrictDefault("2.5.1", "strict", True),
            confounds.StrictDefault("2.9.0", "non-strict", True),
        ),
    )
    note = md_writer.write(d.Page("index", "t", (d.Paragraph(worded.strict_note(verdicts(sample=sample))),)))
    assert note.split("\n\n", 1)[1].startswith(
        "`export()` defaults to strict up to 2.5.1 and to non-strict from 2.9.0 (2.6, 2.7 and 2.8, between them, not"
        " run)."
        " 2.1.2: no `strict` keyword, always strict."
    )
    assert worded.strict_note(verdicts()) == () and worded.strict_note(None) == ()


# --- on the front page -------------------------------------------------------------------------------


def load(saved: str, loaded: str, case: str, status: str = "pass", mode: str = "strict") -> Dict[str, Any]:
    if status == "pass":
        return make_load(saved, loaded, case, status, mode)
    error = "Serialized version (5, 1) does not match (7, 3)."
    return make_load(saved, loaded, case, status, mode, error_type="RuntimeError", error_message=error)


def write(folder: Path, rows: Sequence[Dict[str, Any]], name: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with records.Writer(str(folder / name)) as writer:
        for row in rows:
            writer.write(row)


def front_page_records(folder: Path) -> None:
    rows: List[Dict[str, Any]] = []
    for release, cuda, strict in (("2.4.0", "12.1", True), ("2.5.0", None, False), ("2.6.0", "12.4", False)):
        rows.append(environment(release, cuda, strict))
    for mode in schema.MODES:
        rows += [report_cell(r, "works", "pass", mode, expected="supported") for r in ("2.4.0", "2.5.0", "2.6.0")]
        rows += [report_cell("2.4.0", "breaks", "pass", mode, expected="supported")]
        rows += [report_cell(r, "breaks", "fail", mode, expected="supported", error_type="RuntimeError",
                             error_message="boom") for r in ("2.5.0", "2.6.0")]  # fmt: skip
    write(folder, rows, "cells.jsonl")
    loads = [load(s, l, c) for s in ("2.4.0", "2.5.0", "2.6.0") for l in ("2.4.0", "2.5.0", "2.6.0")  # noqa: E741
             for c in ("works", "breaks") if s != "2.4.0" or l == "2.4.0"]  # fmt: skip
    loads += [load("2.4.0", l, c, "load-error") for l in ("2.5.0", "2.6.0") for c in ("works", "breaks")]  # noqa: E741
    write(folder, loads, "load_torch-2.6.0_cpu_py3.11.jsonl")


def test_the_front_page_opens_with_the_verdicts_and_their_links_lead_somewhere(tmp_path: Path) -> None:
    front_page_records(tmp_path / "records")
    report.build_report([str(tmp_path / "records")], str(tmp_path / "out"), charts=False, title="Matrix")
    index = (tmp_path / "out" / "index.md").read_text(encoding="utf-8")
    # Under the title, the one line that says when and by what the report was built (report.citation).
    title, lead, words, stamp, rest = index.split("\n\n", 4)
    assert title == "# Matrix" and lead.startswith("12 cells") and stamp.startswith("Built 2026-01-01 by export-matrix")
    assert words.startswith("What the words mean (cell, build") and words.endswith(": [glossary](glossary.md).")
    # The verdicts open with the newest release's pass rate, then what is still broken.
    assert rest.startswith("## Verdicts\n\n- **Newest release, 2.6.0**: 50.0% of the cells that ran torch.export pass")
    assert "\n- **Still broken on 2.6.0**: 2 of the 2 regressions" in rest
    assert (
        "  - [breaks](cases/breaks.md) strict, non-strict: ✅ pass → ❌ fail at"
        " [2.4.0 → 2.5.0](transition-2.4.0__2.5.0.md) (the build changed there too); now ❌ fail.\n" in index
    )
    assert (  # CUDA 12.1 → CPU, and back
        "- **Build changes**: [2.4.0 → 2.5.0](transition-2.4.0__2.5.0.md) CUDA 12.1 → CPU (2 regressions, 0 fixes);"
        " [2.5.0 → 2.6.0](transition-2.5.0__2.6.0.md) CPU → CUDA 12.4 (0 regressions, 0 fixes): a change across them"
        " mixes release and build." in index
    )
    assert "- **Saved programs**: load across 2 epochs: 2.4.0 · 2.5.0–2.6.0" in index
    assert "| 2.5.0–2.6.0 | 4 | 6 of 6 | yes | none | 2.4.0 → 2.5.0: load-error: RuntimeError:" in index
    assert "## Where each build's programs load" not in index  # that table is on artifacts.md only
    modes = index[index.index("## Strict vs non-strict") :]
    assert "`export()` defaults to strict up to 2.4.0 and to non-strict from 2.5.0." in modes
    # Every link of the verdicts leads to a page the report wrote or a heading of the front page.
    verdicts_part = index[: index.index("## The run")]
    headings = {_anchor(h) for h in re.findall(r"^#+ (.+)$", index, flags=re.M)}
    headings |= set(re.findall(r'<a id="([^"]+)"></a>', index))  # a section's own id
    for target in re.findall(r"\]\(([^)]+)\)", verdicts_part):
        if target.startswith("#"):
            assert target[1:] in headings, target
        else:
            page, _, anchor = target.partition("#")
            assert (tmp_path / "out" / page).is_file(), target
            text = (tmp_path / "out" / page).read_text(encoding="utf-8")
            ids = {_anchor(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.M)}
            assert not anchor or anchor in ids | set(re.findall(r'<a id="([^"]+)"></a>', text)), target
    assert max(len(p) for p in paragraphs(verdicts_part)) <= worded.LONGEST
    saved = index[index.index("## Saved programs across releases") : index.index("## More")]
    assert max(len(p) for p in paragraphs(saved)) <= worded.LONGEST


def _anchor(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_with_a_baseline_the_verdict_says_what_changed_and_links_the_section(tmp_path: Path) -> None:
    front_page_records(tmp_path / "records")
    out = tmp_path / "latest"
    report.build_report([str(tmp_path / "records")], str(out), charts=False)
    rows = [json.loads(line) for line in (tmp_path / "records" / "cells.jsonl").read_text().splitlines()]
    for row in rows:
        if row.get("case") == "works" and row.get("torch_version") == "2.6.0" and row.get("mode") == "strict":
            row.update(status="fail", error_type="RuntimeError", error_message="new", graph_hash=None)
    write(tmp_path / "again", rows, "cells.jsonl")
    report.build_report([str(tmp_path / "again")], str(tmp_path / "next"), baseline=str(out), charts=False)
    index = (tmp_path / "next" / "index.md").read_text(encoding="utf-8")
    assert (
        "- **Since latest**: 1 cell changed status (1 regression, 0 fixes), 0 new and 0 vanished cells; 1 new and 0"
        " gone regressions or fixes between releases ([since the previous report](#since-the-previous-report))."
        in index
    )
    section = index[index.index("## Since the previous report") :]
    # The section names what regressed since: the cell worse than in the baseline, and the new regression between
    # releases it makes; everything else is on the comparison's page.
    assert (
        "- Regressions new since then (2):\n"
        "  - [works](cases/works.md) strict on 2.6.0: ✅ pass → ❌ fail since the previous report.\n"
        "  - [works](cases/works.md) strict: ✅ pass → ❌ fail at [2.5.0 → 2.6.0](transition-2.5.0__2.6.0.md).\n"
        in section
    )
    assert "(baseline.md)" in section and (tmp_path / "next" / "baseline.md").is_file()

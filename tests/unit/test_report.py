"""The report command: pages, tables, escaping of hostile record text, determinism, baseline."""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Dict, List
from urllib.parse import unquote

import pandas as pd
import pytest
from markdown_it import MarkdownIt

from matrix import cli
from matrix.contract import records, schema
from matrix.records import record_file
from matrix.report import build as report
from matrix.report import case_page
from matrix.report import files as report_files
from matrix.report import markdown as md

from . import links_support
from .report_support import RELEASES, large_history
from conftest import history, make_cell, report_cell, report_environment, write_by_release


@pytest.fixture()
def built(tmp_path: Path) -> Path:
    folder = write_by_release(tmp_path / "records", history())
    out = tmp_path / "report"
    report.build_report([str(folder)], str(out), title="Nightly <b>matrix</b>")
    return out


def test_writes_index_case_pages_tables_and_charts(built: Path):
    index = (built / "index.md").read_text(encoding="utf-8")
    assert index.startswith("# Nightly &lt;b>matrix&lt;/b>\n")
    assert "| releases | 3 releases, 3 builds: 2.4.1, 2.5.0, 2.6.0 |" in index
    # Of 4 cases × 2 modes × 3 builds, only steady runs in non-strict mode (on two builds) and 2.6.0 runs 3 cases.
    assert (
        "| cells | 13 cells of 4 cases × 2 modes × 3 builds = 24 (11 without a record); from 13 cell records |" in index
    )
    assert "\n13 cells of 4 cases × 2 modes × 3 builds = 24 (11 without a record); 3 releases, 3 builds.\n" in index
    assert "| run on | 2025-03-01 to 2025-03-02 (UTC, from the environment records) |" in index
    assert "### Regressions (1 cell)" in index
    assert (
        "**1 regression** (1 status regression, **0 now wrong numbers**: an export that failed now gives other"
        " numbers than eager, 0 stage regressions), 1 fix (1 status fix, 0 stage fixes), 1 graph change, 0 op drifts;"
        in index
    )
    # One run per cell: no timing or flakiness claim either way, and the page says so instead of "0 slowdowns".
    assert "; slowdowns and speedups not assessed: 1 run each (" in index and "0 slowdowns" not in index
    assert "; flakiness not assessed: 1 run each;" in index and "0 flaky cells" not in index
    assert "[breaks](cases/breaks.md)" in index
    assert "[nested/case](cases/nested__case.md)" in (built / "grid.md").read_text(encoding="utf-8")
    assert "| status regressions | now wrong numbers | stage regressions | status fixes | stage fixes |" in index
    assert "| graph changes | op drift: exported | op drift: decomposed |" in index
    # Each count links the transition page's section that lists its rows.
    assert (
        "| [2.4.1 → 2.5.0](transition-2.4.1__2.5.0.md) | 5 | [1](transition-2.4.1__2.5.0.md#regressions) |   |   |"
        " [1](transition-2.4.1__2.5.0.md#fixes) |   | [1](transition-2.4.1__2.5.0.md#graph-changes) |   |   |" in index
    )
    assert "Slowdowns and speedups not assessed: 1 run each." in index and "| slower |" not in index
    assert "![Pass rate per release](charts/pass-rate.png)" in index
    step = (built / "transition-2.4.1__2.5.0.md").read_text(encoding="utf-8")
    assert "## Regressions (1)" in step and "## Fixes (1)" in step and "## Graph changes (1)" in step
    assert "## Now wrong numbers (0)" in step and "## Slowdowns and speedups (not assessed: 1 run each)" in step
    assert "+mul(x, 2)" in links_support.linked_diffs(built, "transition-2.4.1__2.5.0.md")  # the graph's diff
    for name in ("cells", "transitions", "summary", "status", "modes", "claims", "environments", "env_errors"):
        assert (built / (name + ".parquet")).is_file(), name
    moves = pd.read_parquet(built / "transitions.parquet")
    assert sorted(moves["kind"]) == ["fix", "graph-change", "regression"]
    assert sorted(p.name for p in (built / "cases").iterdir()) == [
        "breaks.md",
        "heals.md",
        "nested__case.md",
        "steady.diffs",  # its graph diff, the file its pages and the transition page link
        "steady.md",
    ]
    steady = (built / "cases" / "steady.md").read_text(encoding="utf-8")
    assert "<summary>2.4.1 → 2.5.0, strict (3 lines, +1 −0)</summary>" in steady
    assert "+mul(x, 2)" in steady
    assert all(p.stat().st_size > 0 for p in (built / "charts").iterdir())


class Cells(HTMLParser):
    """Collects each table's rows as lists of cell texts, <summary> texts, and every tag and link seen."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: List[List[str]] = []
        self.tags: List[str] = []
        self.links: List[str] = []
        self.summaries: List[str] = []
        self._cell: List[str] = []
        self._in_cell = False

    def handle_starttag(self, tag: str, attrs: List[Any]) -> None:
        self.tags.append(tag)
        if tag == "a":
            self.links.extend(v for k, v in attrs if k == "href")
        if tag == "tr":
            self.rows.append([])
        if tag in ("td", "th", "summary"):
            self._in_cell, self._cell = True, []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th"):
            self.rows[-1].append("".join(self._cell))
            self._in_cell = False
        if tag == "summary":
            self.summaries.append("".join(self._cell))
            self._in_cell = False

    def handle_data(self, data: str) -> None:
        if self._in_cell:
            self._cell.append(data)


def rendered(path: Path) -> Cells:
    html = MarkdownIt("commonmark").enable("table").render(path.read_text(encoding="utf-8"))
    parsed = Cells()
    parsed.feed(html)
    return parsed


def test_hostile_error_text_neither_breaks_tables_nor_injects(built: Path):
    for page in (built / "index.md", built / "cases" / "breaks.md", built / "transition-2.4.1__2.5.0.md"):
        parsed = rendered(page)
        assert "script" not in parsed.tags, page
        assert not [link for link in parsed.links if "evil" in link], page
        holding = [cell for row in parsed.rows for cell in row if "alert(1)" in cell]
        holding += [summary for summary in parsed.summaries if "alert(1)" in summary]
        assert holding, page
        for text in holding:
            # The message stayed in one cell: both sides of the "|"...
            assert "left | right `tick` <script>alert(1)</script> [x](http://evil)" in text
        # ...and of the line break, where the whole message is shown in a line (the transition page; the front page
        # and a signature show its first line); a case page groups its errors by their first line and shows the
        # whole message as it was.
        if page.name.startswith("transition-"):
            assert any("see http://evil.example.com ⏎ second line" in text for text in holding), page
        elif page.name == "index.md":
            assert not any("second line" in text for text in holding), page
        else:
            assert "see http://evil.example.com\nsecond line" in page.read_text(encoding="utf-8")
    raw = (built / "index.md").read_text(encoding="utf-8")
    assert "<script>" not in raw


def test_hostile_traceback_stays_inside_its_code_block(built: Path):
    page = built / "cases" / "breaks.md"
    html = MarkdownIt("commonmark").enable("table").render(page.read_text(encoding="utf-8"))
    assert "<script>" not in html
    assert "&lt;/details&gt;&lt;script&gt;alert(2)&lt;/script&gt;" in html
    assert html.count("<details>") == html.count("</details>")


def test_escaping_helpers():
    assert md.text("a|b") == "a\\|b"
    assert md.text("x\ny") == "x ⏎ y"
    assert md.text("<b>&") == "&lt;b>&"
    # Markdown needs no escape here: the text stays as it was.
    assert md.text("a < b && c > d, torch.compile @ 3.11") == "a < b && c > d, torch.compile @ 3.11"
    assert md.text("&amp; &#38; x@y.org <!-- x") == "&amp;amp; &amp;#38; x&#64;y.org &lt;!-- x"
    assert md.text("> quoted") == "\\> quoted" and md.text("a <") == "a &lt;"
    assert md.text("[x](y)") == "\\[x\\](y)"
    assert md.text("snake_case _emph_") == "snake_case \\_emph\\_"
    assert "://" not in md.text("http://evil.example.com")
    assert md.code("a`b") == "`` a`b ``"
    assert md.fence("``` inside\n`````\n").startswith("``````\n")
    assert md.release_spans(["2.1", "2.2", "2.4"], ["2.1", "2.2", "2.3", "2.4"]) == "2.1–2.2, 2.4"


def test_two_builds_are_byte_identical(tmp_path: Path):
    folder = write_by_release(tmp_path / "records", history())
    outs = [tmp_path / "one", tmp_path / "two"]
    for out in outs:
        report.build_report([str(folder)], str(out))
    files = sorted(p.relative_to(outs[0]) for p in outs[0].rglob("*") if p.is_file())
    assert any(p.suffix == ".png" for p in files) and any(p.suffix == ".svg" for p in files)
    assert files == sorted(p.relative_to(outs[1]) for p in outs[1].rglob("*") if p.is_file())
    for name in files:
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name
    # A build in side processes gives the same bytes: tests/integration/test_report.py.


def test_baseline_section_and_rebuilding_over_the_baseline(tmp_path: Path):
    old = write_by_release(tmp_path / "old", [r for r in history() if r.get("torch_version") != "2.6.0"])
    new = write_by_release(tmp_path / "new", history())
    out = tmp_path / "report"
    report.build_report([str(old)], str(out))
    report.build_report([str(new)], str(out), baseline=str(out))
    index = (out / "index.md").read_text(encoding="utf-8")
    section = index[index.index("## Since the previous report") :]
    assert "- 0 cells changed status (0 regressions, 0 fixes), 3 new cells, 0 vanished cells." in section
    assert "every change is on the [full comparison](baseline.md)" in section
    # The whole comparison is on its own page, not on the front page.
    page = (out / "baseline.md").read_text(encoding="utf-8")
    assert page.startswith("# Since the previous report\n\n[← back to the matrix](index.md)\n")
    assert "## New cells (3)" in page and "New cells (3)" not in index
    assert "| cpu | 3.11 | strict | 2.6.0 | 3 | breaks, heals, steady |" in page
    # Without a baseline there is no page to link, and the one an earlier build wrote goes.
    report.build_report([str(new)], str(out))
    assert not (out / "baseline.md").exists() and "baseline.md" not in (out / "index.md").read_text(encoding="utf-8")


def test_stale_case_pages_are_removed(tmp_path: Path):
    out = tmp_path / "report"
    report.build_report([str(write_by_release(tmp_path / "a", history()))], str(out), charts=False)
    assert (out / "cases" / "heals.md").exists()
    rows = [r for r in history() if r.get("case") != "heals"]
    report.build_report([str(write_by_release(tmp_path / "b", rows))], str(out), charts=False)
    assert not (out / "cases" / "heals.md").exists()
    assert (out / "cases" / "steady.md").exists()
    # A release gone from the records takes its transition page with it.
    assert (out / "transition-2.5.0__2.6.0.md").exists()
    rows = [r for r in history() if r.get("torch_version") != "2.6.0"]
    report.build_report([str(write_by_release(tmp_path / "c", rows))], str(out), charts=False)
    assert not (out / "transition-2.5.0__2.6.0.md").exists()
    assert (out / "transition-2.4.1__2.5.0.md").exists()


def test_env_errors_are_listed_and_break_the_series(tmp_path: Path):
    rows = [
        report_cell("2.4.1", "x"),
        report_cell("2.6.0", "x", "fail"),
        {
            "kind": "env-error",
            "schema_version": schema.SCHEMA_VERSION,
            "torch_version": "2.5.0",
            "variant": "cpu",
            "python": "3.11",
            "error_type": "InstallError",
            "error_message": "no wheel | for <this>",
            "installer_output": "resolver said no",
            "finished_at": "2025-01-01T00:00:00+00:00",
        },
    ]
    out = tmp_path / "report"
    result = report.build_report([str(write_by_release(tmp_path / "records", rows))], str(out), charts=False)
    index = (out / "index.md").read_text(encoding="utf-8")
    assert "## Environments that failed to install" in index
    assert "1 environment: 2.5.0 cpu py3.11 (torch alone); each with its error and what the installer said" in index
    assert "[install errors page](install-errors.md)" in index
    page = (out / "install-errors.md").read_text(encoding="utf-8")
    assert "no wheel \\| for &lt;this>" in page and "resolver said no" in page  # "<t" could open a tag
    assert result.regressions == 0  # 2.4.1 and 2.6.0 are not consecutive: 2.5.0 failed to install


def test_cli_report_and_its_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    folder = write_by_release(tmp_path / "records", history())
    out = tmp_path / "report"
    assert cli.main(["report", str(folder), "--out", str(out), "--no-charts"]) == 0
    assert "4 case pages, 1 regression, 1 fix" in capsys.readouterr().out
    assert cli.main(["report", str(tmp_path / "missing"), "--out", str(out)]) == 2
    assert "no such record folder" in capsys.readouterr().err
    assert cli.main(["report", str(folder), "--out", str(out), "--baseline", str(tmp_path)]) == 2
    assert "no cells.parquet" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "x.jsonl").write_text("", encoding="utf-8")
    assert cli.main(["report", str(empty), "--out", str(out)]) == 2
    assert "no cell or env-error records" in capsys.readouterr().err


def test_a_matrix_where_every_environment_failed_still_reports(tmp_path: Path):
    error = {
        "kind": "env-error",
        "schema_version": schema.SCHEMA_VERSION,
        "torch_version": "2.1.2",
        "variant": "cpu",
        "python": "3.11",
        "error_type": "InstallError",
        "error_message": "no wheel for this Python",
        "installer_output": "",
        "finished_at": "2025-01-01T00:00:00+00:00",
    }
    out = tmp_path / "report"
    result = report.build_report([str(write_by_release(tmp_path / "records", [error]))], str(out))
    index = (out / "index.md").read_text(encoding="utf-8")
    assert result.cells == 0 and result.pages == 0
    assert "| releases | 1 release, 1 build: 2.1.2 |" in index
    assert "1 environment: 2.1.2 cpu py3.11 (torch alone)" in index
    assert "no wheel for this Python" in (out / "install-errors.md").read_text(encoding="utf-8")


def test_the_report_removes_only_files_it_wrote(tmp_path: Path):
    out = tmp_path / "report"
    (out / "cases").mkdir(parents=True)
    (out / "charts").mkdir()
    (out / "cases" / "NOTES.md").write_text("notes kept by hand\n", encoding="utf-8")
    (out / "charts" / "mine.png").write_bytes(b"someone else's image")
    report.build_report([str(write_by_release(tmp_path / "a", history()))], str(out))
    listed = json.loads((out / report_files.MANIFEST).read_text(encoding="utf-8"))["files"]
    assert listed == sorted(listed)
    assert {"index.md", "cells.parquet", "cases/heals.md", "cases/nested__case.md", "charts/pass-rate.svg"} <= set(
        listed
    )
    on_disk = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert on_disk - set(listed) == {report_files.MANIFEST, "cases/NOTES.md", "charts/mine.png"}

    rows = [r for r in history() if r.get("case") != "heals"]
    report.build_report([str(write_by_release(tmp_path / "b", rows))], str(out))
    assert not (out / "cases" / "heals.md").exists()
    assert (out / "cases" / "steady.md").exists()
    assert (out / "cases" / "NOTES.md").read_text(encoding="utf-8") == "notes kept by hand\n"
    assert (out / "charts" / "mine.png").read_bytes() == b"someone else's image"
    assert "cases/heals.md" not in json.loads((out / report_files.MANIFEST).read_text(encoding="utf-8"))["files"]


def test_a_manifest_cannot_make_the_report_remove_other_files(tmp_path: Path):
    out = tmp_path / "report"
    (out / "cases").mkdir(parents=True)
    outside = tmp_path / "outside.md"
    outside.write_text("outside\n", encoding="utf-8")
    (out / "notes.txt").write_text("notes\n", encoding="utf-8")
    (out / "cases" / "link.md").symlink_to(outside)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.png").write_bytes(b"image")
    (out / "charts").symlink_to(elsewhere)
    forged = ["../outside.md", "cases/../../outside.md", str(outside), "notes.txt", "cases/link.md", ".", "cases"]
    forged.append("charts/x.png")
    (out / report_files.MANIFEST).write_text(json.dumps({"files": forged}), encoding="utf-8")
    report.build_report([str(write_by_release(tmp_path / "records", history()))], str(out), charts=False)
    assert outside.read_text(encoding="utf-8") == "outside\n"
    assert (out / "notes.txt").is_file()
    assert (out / "cases" / "link.md").is_symlink()
    assert (elsewhere / "x.png").read_bytes() == b"image"


def test_writes_that_would_leave_the_report_folder_are_refused(tmp_path: Path):
    out = tmp_path / "report"
    out.mkdir()
    (out / "cases").symlink_to(tmp_path)
    for relative in ("../x.md", "/tmp/x.md", "cases/x.md", "a\0b.md", ".", "charts/../../x.md"):
        with pytest.raises(report_files.OutsideError, match="refusing to write"):
            report_files.target(str(out), relative)
    assert report_files.target(str(out), "charts/x.png") == str((out / "charts" / "x.png").resolve())
    with pytest.raises(report_files.OutsideError):
        report.build_report([str(write_by_release(tmp_path / "records", history()))], str(out), charts=False)
    assert not (tmp_path / "heals.md").exists()


HOSTILE_NAMES = [
    "../escape",
    "../../etc/evil",
    "/absolute/name",
    "a/b",
    "a__b",
    "nul\0byte",
    "$\\macro$",
    "x" * 300,
    "x" * 299 + "y",
    "Upper",
    "upper",
    "..",
    "trailing/",
]


def test_case_names_become_distinct_file_names_inside_the_report(tmp_path: Path):
    rows = [report_cell("2.4.1", name) for name in HOSTILE_NAMES] + [
        report_cell("2.5.0", name, "fail") for name in HOSTILE_NAMES
    ]
    folder = write_by_release(tmp_path / "records", rows)
    out = tmp_path / "nested" / "report"
    result = report.build_report([str(folder)], str(out))
    assert result.pages == len(HOSTILE_NAMES)
    pages = sorted((out / "cases").iterdir())
    assert len(pages) == len(HOSTILE_NAMES)
    for page in pages:
        assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._~-]*\.md", page.name), page.name
        assert len(page.name) <= md.MAX_PAGE_NAME + 3
    # Nothing was written outside the report folder: every file is a record or under --out.
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert out in path.parents or folder in path.parents, path
    # Each case's link on the front page leads to its own page, titled with its (escaped) name.
    targets = [unquote(link) for link in rendered(out / "index.md").links if link.startswith("cases/")]
    titles = {(out / target).read_text(encoding="utf-8").splitlines()[0] for target in set(targets)}
    assert titles == {"# " + md.text(name) for name in HOSTILE_NAMES}


def test_page_file_names_are_plain_where_they_can_be_and_distinct():
    assert md.page_file("nested/case") == "nested__case"
    assert md.page_file("cond_predicate") == "cond_predicate"
    names = HOSTILE_NAMES + ["a_/b", "a/_b", "a_b", "a-b", "a.b", "a b", "A/b", "a\\b"]
    files = [md.page_file(name) for name in names]
    assert len(set(files)) == len(names)
    assert len({f.lower() for f in files}) == len(names)  # also on file systems that ignore case
    assert all("/" not in f and "\0" not in f and not f.startswith(".") and len(f) <= 100 for f in files)


def test_case_sources_are_shown_only_from_inside_the_case_roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-VALUE\n", encoding="utf-8")
    root = tmp_path / "mine" / "cases"
    (root / "tutorial").mkdir(parents=True)
    (root / "tutorial" / "good.py").write_text('"""A case of mine."""\n\nGOOD_SOURCE = 1\n', encoding="utf-8")
    (root / "tutorial" / "link.py").symlink_to(secret)
    work = tmp_path / "a" / "b"
    (work / "cases" / "tutorial").mkdir(parents=True)
    (work / "cases" / "tutorial" / "here.py").write_text('"""A case here."""\n', encoding="utf-8")
    monkeypatch.chdir(work)  # from here "../../secret.txt" names the secret
    refused = {
        "etc": "/etc/hostname",
        "up": "../../secret.txt",
        "absolute": str(secret),
        "linked": str(root / "tutorial" / "link.py"),
        "dotted": "cases/../../secret.txt",
        "nul": "cases/tutorial/good.py\0",
    }
    shown = {
        "relative": "cases/tutorial/good.py",
        "absolute_inside": str(root / "tutorial" / "good.py"),
        "project": "cases/tutorial/here.py",  # cases/ of the current folder is a root by default, as for `run`
    }
    rows = [report_cell("2.4.1", case, case_file=path) for case, path in {**refused, **shown}.items()]
    out = tmp_path / "report"
    report.build_report(
        [str(write_by_release(tmp_path / "records", rows))], str(out), charts=False, case_roots=[str(root)]
    )
    for case in refused:
        page = (out / "cases" / (md.page_file(case) + ".md")).read_text(encoding="utf-8")
        assert "TOP-SECRET" not in page and "```python" not in page, case
        assert "\nThe source is not available:" in page, case
    for case in ("relative", "absolute_inside"):
        page = (out / "cases" / (case + ".md")).read_text(encoding="utf-8")
        assert "GOOD_SOURCE = 1" in page and "\nA case of mine.\n" in page, case
    assert "```python\n" in (out / "cases" / "project.md").read_text(encoding="utf-8")
    assert case_page.read_source("/etc/hostname", [str(root)]) == (None, None)
    assert case_page.read_source("../../secret.txt", [str(root)]) == (None, None)


def test_a_tooltip_with_a_bar_stays_in_its_table_cell():
    # An error such as onnxscript's "where T=INT32 | INT16" in a grid square's tooltip: a bare "|" would end the cell.
    tip = md.html_text("ConversionError: dim: T where T=INT32 | INT16\nnext line")
    row = '| 2.5.1 | <span title="%s">❌</span> |' % tip
    rendered = MarkdownIt("commonmark").enable("table").render("| release | non-strict |\n| --- | --- |\n" + row + "\n")
    assert rendered.count("<td>") == 2  # as a browser reads the entity back:
    assert 'title="ConversionError: dim: T where T=INT32 | INT16 ⏎ next line"' in html.unescape(rendered)


def test_terminal_escapes_and_control_characters_never_reach_a_page(tmp_path: Path):
    assert md.text("\x1b[1;31mRuntimeError\x1b[0m: bad\x07 \x1b]0;title\x07value\0 \x9b2Jend") == (
        "RuntimeError: bad value end"
    )
    assert md.code("\x1b[31mValueError\x1b[0m") == "`ValueError`"
    assert md.html_text("\x1b[31m<x>\x1b(B\x1b[m") == "&lt;x&gt;"
    assert md.fence("\x1b[32mok\x1b[0m\tdone\x1b7\n") == "```\nok\tdone\n```\n"
    coloured = "\x1b[31mRuntimeError: \x1b[1mboom\x1b[0m\x08"
    rows = [
        report_cell("2.4.1", "x"),
        report_cell(
            "2.5.0",
            "x",
            "fail",
            error_type="\x1b[31mRuntimeError\x1b[0m",
            error_message=coloured,
            error_traceback="Traceback:\n" + coloured,
            stderr_tail=coloured + "\r\n",
        ),
    ]
    out = tmp_path / "report"
    report.build_report([str(write_by_release(tmp_path / "records", rows))], str(out), charts=False)
    for page in (out / "index.md", out / "cases" / "x.md"):
        text = page.read_text(encoding="utf-8")
        assert "boom" in text, page
        assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]", text), page


def test_cells_whose_identity_is_not_text_are_skipped_not_fatal(tmp_path: Path):
    no_case = report_cell("2.4.1", "gone")
    del no_case["case"]
    rows = [report_cell("2.4.1", "x"), no_case, report_cell("2.4.1", ["a", "list"]), report_cell("2.5.0", "x")]
    folder = write_by_release(tmp_path / "records", rows)
    result = report.build_report([str(folder)], str(tmp_path / "report"), charts=False)
    assert result.cells == 2 and result.pages == 1
    path = folder / records.env_file_name("2.4.1", "cpu", "3.11")
    assert [w.split(": ")[0] for w in result.warnings] == ["%s:2" % path, "%s:3" % path]


def test_cli_case_root_adds_a_folder_sources_are_shown_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "x.py").write_text('"""Mine."""\n\nMINE = 1\n', encoding="utf-8")
    folder = write_by_release(tmp_path / "records", [report_cell("2.4.1", "x", case_file="mine/x.py")])
    monkeypatch.chdir(tmp_path)
    assert cli.main(["report", str(folder), "--out", "without", "--no-charts"]) == 0
    assert "MINE = 1" not in (tmp_path / "without" / "cases" / "x.md").read_text(encoding="utf-8")
    assert cli.main(["report", str(folder), "--out", "with", "--no-charts", "--case-root", "mine"]) == 0
    assert "MINE = 1" in (tmp_path / "with" / "cases" / "x.md").read_text(encoding="utf-8")
    # The site's case page reads its source from the same folders.
    assert "MINE = 1" not in (tmp_path / "without" / "site" / "cases" / "x.html").read_text(encoding="utf-8")
    assert "MINE = 1" in (tmp_path / "with" / "site" / "cases" / "x.html").read_text(encoding="utf-8")


# --- the front page tells the story; the pages it links hold the detail --------------------------


def test_the_front_page_stays_short_and_the_transition_pages_hold_the_detail(tmp_path: Path):
    out = tmp_path / "report"
    report.build_report([str(write_by_release(tmp_path / "records", large_history()))], str(out), charts=False)
    index = (out / "index.md").read_text(encoding="utf-8")
    assert len(index.splitlines()) <= 300
    for heading in ("## Summary", "### Regressions", "## Top failure signatures", "## Strict vs non-strict"):
        assert heading + "\n" in index or heading + " (" in index, heading
    assert index.index("## Summary") < index.index("## Changes between releases") < index.index("### Regressions")
    moves = pd.read_parquet(out / "transitions.parquet")
    regressions = moves[moves["kind"].isin(["regression", "stage-regression"])]
    assert len(regressions) > 20 and (moves["kind"] == "stage-regression").sum() > 0
    lines = index.splitlines()
    for move in regressions.to_dict("records"):
        # Every regression has its row on the front page: release transition, case and mode together.
        link = "(transition-%s__%s.md#" % (move["before"], move["after"])  # its section on that page
        assert any(link in line and "(cases/%s.md)" % move["case"] in line and move["mode"] in line for line in lines)
    assert "| transition | case | mode | kind | change | error in the newer release |" in index
    assert "[status grid](grid.md)" in index and (out / "grid.md").is_file()

    pairs = list(zip(RELEASES, RELEASES[1:]))
    for before, after in pairs:
        assert "[%s → %s](transition-%s__%s.md)" % (before, after, before, after) in index
    for (before, after), found in moves.groupby(["before", "after"]):
        page = (out / ("transition-%s__%s.md" % (before, after))).read_text(encoding="utf-8")
        diffs = links_support.linked_diffs(out, "transition-%s__%s.md" % (before, after))
        assert page.startswith("# %s → %s\n" % (before, after))
        for move in found.to_dict("records"):
            assert "[%s](cases/%s.md)" % (move["case"], move["case"]) in page, move
            if move["kind"] == "graph-change":
                assert "`%s` → `%s`" % (move["hash_before"], move["hash_after"]) in page
                assert "\n+# scheme %d\n" % (RELEASES.index(move["after"]) // 5) in diffs
            if move["kind"] == "op-drift":
                assert (
                    "| %s | %s | %s | `aten.mul.Tensor` |"
                    % (
                        "[%s](cases/%s.md)" % (move["case"], move["case"]),
                        move["mode"],
                        move["stage"],
                    )
                    in page
                )
    # The timed case ×3 slower is claimed with its evidence; the steady one and single runs are not.
    timing = moves[moves["kind"].isin(["slowdown", "speedup"])]
    assert sorted(zip(timing["case"], timing["after"])) == [("case_010", "2.8.0"), ("case_010", "2.8.0")]
    page = (out / "transition-2.7.0__2.8.0.md").read_text(encoding="utf-8")
    assert "×3.00 (median 0.208 s → 0.624 s), 5 runs each, ranges disjoint, Mann-Whitney p = 0.004" in page
    assert {"exported", "decomposed"} >= set(moves.loc[moves["kind"] == "op-drift", "stage"])


def test_a_pass_whose_program_does_not_save_and_load_is_not_a_clean_pass(tmp_path: Path):
    broken = dict(serialize_status="error", serialize_error="load: RuntimeError: cannot load <it>")
    rows = [
        report_environment("2.4.1", "2025-03-01T10:00:00+00:00"),
        report_cell("2.4.1", "saves", serialize_status="ok", decompose_status="ok"),
        report_environment("2.5.0", "2025-03-02T10:00:00+00:00"),
        report_cell("2.5.0", "saves", decompose_status="ok", **broken),
    ]
    out = tmp_path / "report"
    report.build_report([str(write_by_release(tmp_path / "records", rows))], str(out), charts=False)
    index = (out / "index.md").read_text(encoding="utf-8")
    assert "- Passing cells whose program then fails a stage: 1 save/load (ˢ), 0 decomposition (ᵈ)" in index
    assert "| [2.4.1 → 2.5.0](transition-2.4.1__2.5.0.md#stages) | [saves](cases/saves.md) | strict |" in index
    assert "| stage-regression | ✅ pass, save/load ok → error | load: RuntimeError: cannot load &lt;it> |" in index
    assert "| 2.5.0 | 1 | 100.0% | 1 | 0 |" in index  # the pass rate counts it; the stage column says it
    grid = (out / "grid.md").read_text(encoding="utf-8")
    assert "| [saves](cases/saves.md) | ✅ | ✅ˢ |" in grid
    assert "| ˢ | save/load fails |" in grid
    case = (out / "cases" / "saves.md").read_text(encoding="utf-8")
    assert "| 2.5.0 | ✅ˢ pass · save/load fails |" in case
    assert "<summary>strict · save/load fails · load: RuntimeError: cannot load &lt;it&gt; — 2.5.0</summary>" in case
    assert "[2.4.1 → 2.5.0](../transition-2.4.1__2.5.0.md)" in case
    step = (out / "transition-2.4.1__2.5.0.md").read_text(encoding="utf-8")
    assert "| [saves](cases/saves.md) | strict | save/load | save/load ok → error |" in step
    moves = pd.read_parquet(out / "transitions.parquet")
    assert list(zip(moves["kind"], moves["stage"])) == [("stage-regression", "serialize")]
    assert list(pd.read_parquet(out / "cells.parquet")["serialize_outcome"]) == ["ok", "error"]


def test_a_build_of_another_variant_is_compared_with_pypis_build_never_in_the_release_chain(tmp_path: Path):
    rows = [
        report_cell("2.9.1", "x", variant="pypi"),
        report_cell("2.13.0", "x", variant="pypi"),
        report_cell("2.13.0+cpu", "x", "fail", variant="cpu", error_type="RuntimeError", error_message="boom"),
        report_cell("2.15.0", "x", variant="pypi", serialize_status="error", serialize_error="save: boom"),
    ]
    out = tmp_path / "report"
    report.build_report([str(write_by_release(tmp_path / "records", rows))], str(out), charts=False)
    index = (out / "index.md").read_text(encoding="utf-8")
    # PyPI's series goes 2.9.1 → 2.13.0 → 2.15.0; the CPU build is in no transition.
    assert sorted(p.name for p in out.glob("transition-*.md")) == [
        "transition-2.13.0__2.15.0.md",
        "transition-2.9.1__2.13.0.md",
    ]
    assert "2.13.0+cpu" not in pd.read_parquet(out / "transitions.parquet")[["before", "after"]].to_numpy()
    assert "2.13.0+cpu vs 2.13.0: 1 cells compared, 1 worse, 0 better" in index
    assert "[every difference](builds.md)" in index
    page = (out / "builds.md").read_text(encoding="utf-8")
    assert "## 2.13.0+cpu vs 2.13.0\n" in page
    assert "| [x](cases/x.md) | strict | worse on this build | pass → fail | boom |" in page
    # The pass rate table counts each environment's passes that do not save and load.
    assert "| 2.13.0+cpu cpu | 1 | 0.0% | 0 | 0 |" in index and "| 2.15.0 pypi | 1 | 100.0% | 1 | 0 |" in index


def test_an_incomplete_build_is_marked_and_left_out_of_transitions_and_verdicts(tmp_path: Path):
    failed = {
        **report_environment("2.13.0", "2026-01-01T08:00:00+00:00"),
        "kind": "env-error",
        "dependency_set": "torchvision",
        "error_type": "matrix.envs.install.InstallError",
        "error_message": "uv pip install torch==2.13.0 torchvision==0.28.0 failed: error: No solution found",
        "finished_at": "2026-01-01T08:00:00+00:00",
    }
    rows = [
        report_cell("2.12.0", "x"),
        report_cell("2.13.0", "x", "fail", error_type="RuntimeError", error_message="boom"),
        failed,
        report_cell("2.14.0", "x", "fail", error_type="RuntimeError", error_message="boom"),
    ]
    notes: List[str] = []
    out = tmp_path / "report"
    built = report.build_report(
        [str(write_by_release(tmp_path / "records", rows))], str(out), charts=False, notify=notes.append
    )
    assert notes == [
        "incomplete build 2.13.0 cpu: lacks the torchvision set (matrix.envs.install.InstallError);"
        " left out of transitions and verdicts"
    ]
    # 2.13.0's cells are not compared with anything: the series breaks there, so 2.12.0 → 2.14.0 is not a step.
    assert built.regressions == 0 and not list(out.glob("transition-*.md"))
    index = (out / "index.md").read_text(encoding="utf-8")
    assert "- **Incomplete builds**: marked (incomplete)" in index
    assert "2.13.0 cpu lacks `torchvision`: error: No solution found" in index
    assert "| 2.13.0 (incomplete) | 1 | 0.0% |" in index
    grid = (out / "grid.md").read_text(encoding="utf-8")
    assert "| case | 2.12.0 | 2.13.0 (incomplete) | 2.14.0 |" in grid
    cells = pd.read_parquet(out / "cells.parquet")
    assert list(zip(cells["release"], cells["incomplete"])) == [("2.12.0", False), ("2.13.0", True), ("2.14.0", False)]


def test_transition_page_names_are_plain_where_they_can_be_and_safe_otherwise():
    assert md.transition_page("2.8.0", "2.9.1") == "transition-2.8.0__2.9.1.md"
    assert md.transition_page("2.13.0+cpu", "2.15.0") == "transition-2.13.0+cpu__2.15.0.md"
    hostile = [("../x", "y"), ("a/b", "c"), ("a", "b__c"), ("a__b", "c"), ("x" * 200, "y"), ("a\0", "b"), ("", "")]
    names = [md.transition_page(b, a) for b, a in hostile]
    assert len(set(names)) == len(hostile)
    for name in names:
        assert re.fullmatch(r"transition-[A-Za-z0-9.+_~-]+\.md", name), name
        assert "/" not in name and ".." not in name.replace("...", "") and len(name) <= 120


def test_a_rebuild_over_the_same_records_reuses_parses_and_charts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from matrix.report import heatmaps, release_charts

    folder = write_by_release(tmp_path / "records", history())
    out = tmp_path / "out"
    report.build_report([str(folder)], str(out))
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    drawn: List[str] = []
    drawing = [(heatmaps, "status_heatmaps")] + [
        (release_charts, name) for name in ("pass_rate", "transition_counts", "export_times")
    ]
    for module, name in drawing:
        real = getattr(module, name)

        def watched(*args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
            drawn.append(_name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(module, name, watched)
    parsed: List[str] = []
    real_parse = record_file.read
    monkeypatch.setattr(record_file, "read", lambda path: parsed.append(path) or real_parse(path))
    report.build_report([str(folder)], str(out))
    assert drawn == [] and parsed == []
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    # New records: parsed again, and the charts whose data changed are drawn again.
    rows = history()
    rows[-1] = dict(rows[-1], status="crash")
    write_by_release(tmp_path / "records", rows)
    report.build_report([str(folder)], str(out))
    assert parsed and "status_heatmaps" in drawn


def test_a_failed_exports_diagnosis_shows_on_its_case_page_and_in_the_table(tmp_path: Path):
    problem = {
        "kind": "data-dependent-error",
        "message": "cannot decide u0 > 2",
        "frame": "m.py:9 in forward",
        "count": 2,
    }
    rows = [
        make_cell("2.9.1", "branchy", "fail", error_type="UserError", error_message="cannot guard",
                  diagnosis_status="done", diagnosis=[problem]),
        make_cell("2.9.1", "plain", "pass"),
    ]  # fmt: skip
    out = tmp_path / "out"
    report.build_report([str(write_by_release(tmp_path / "records", rows))], str(out), charts=False)
    page = (out / "cases" / "branchy.md").read_text(encoding="utf-8")
    assert "## What draft_export found" in page
    assert "| 2.9.1 | strict | data-dependent-error | cannot decide u0 > 2 | `m.py:9 in forward` | 2 |" in page
    assert "draft_export" not in (out / "cases" / "plain.md").read_text(encoding="utf-8")
    table = pd.read_parquet(out / "cells.parquet").set_index("case")
    assert (
        table.loc["branchy", "diagnosis_summary"]
        == "data-dependent-error ×2: cannot decide u0 > 2 at m.py:9 in forward"
    )
    assert pd.isna(table.loc["plain", "diagnosis_summary"])


def repeated(release: str, case: str, statuses: List[str], times: List[float], **extra: Any) -> List[Dict[str, Any]]:
    """A cell run once per status given, each run timed as ``times`` says."""
    return [
        report_cell(release, case, status, run=run, export_s=time, **extra)
        for run, (status, time) in enumerate(zip(statuses, times))
    ]


def test_the_front_page_counts_wrong_results_with_regressions_and_claims_timings_only_on_enough_runs(tmp_path: Path):
    fast, slow, even = [0.20, 0.21, 0.19, 0.20, 0.22], [0.60, 0.62, 0.61, 0.59, 0.63], [0.1] * 5
    wrong = dict(error_type="AssertionError", error_message="Tensor-likes are not close!")
    rows = [
        report_environment("2.4.1", "2025-03-01T10:00:00+00:00"),
        *repeated("2.4.1", "slower", ["pass"] * 5, fast),
        *repeated("2.4.1", "silent", ["fail"] * 5, even, error_type="RuntimeError", error_message="unsupported"),
        *repeated("2.4.1", "wobbly", ["pass"] * 5, even),
        report_cell("2.4.1", "once"),
        report_environment("2.5.0", "2025-03-02T10:00:00+00:00"),
        *repeated("2.5.0", "slower", ["pass"] * 5, slow),
        *repeated("2.5.0", "silent", ["mismatch"] * 5, even, **wrong),
        *repeated("2.5.0", "wobbly", ["pass"] * 4 + ["timeout"], even),
        report_cell("2.5.0", "once"),
    ]
    out = tmp_path / "report"
    report.build_report([str(write_by_release(tmp_path / "records", rows))], str(out), charts=False)
    index = (out / "index.md").read_text(encoding="utf-8")
    # A refused export that now gives wrong numbers is no fix: it is counted and listed with the regressions.
    assert "**1 regression** (0 status regressions, **1 now wrong numbers**: an export that failed now gives" in index
    assert "than eager, 0 stage regressions), 0 fixes (" in index and "### Regressions (1 cell)" in index
    now_wrong = (
        "| strict | wrong-result | ❌ fail → ⚠️ mismatch (now wrong numbers) | `AssertionError`: Tensor-likes are not"
        " close! |"
    )
    assert "| [silent](cases/silent.md) " + now_wrong in index
    # The upgrade's line counts the cases it breaks, and says why the regression in 2.5.0 is not one of them.
    assert (
        "- **Upgrading 2.4.1 → 2.5.0**: the upgrade breaks 0 cases of 4; saved program: not run for this pair;" in index
    )
    assert "regressed in 2.5.0: failing on 2.4.1 already: silent strict (export, since" in index
    assert "([per case](upgrade.md))." in index
    # Five runs a cell support a timing claim and a flakiness claim; the counts say what they rest on: of the
    # cells exported in both releases, the single-run one and the flaky one (four agreeing runs) are not timed.
    assert "; 1 slowdown, 0 speedups (timed on 1 of the 3 cells exported in both releases) (" in index
    assert "; 1 flaky cell (of 6 cells run more than once);" in index
    assert "| op drift: exported | op drift: decomposed | slower | faster |" in index
    step = (out / "transition-2.4.1__2.5.0.md").read_text(encoding="utf-8")
    assert "## Now wrong numbers (1)" in step and "## Fixes (0)" in step
    assert (
        "| [silent](cases/silent.md) | strict | ❌ fail → ⚠️ mismatch | `AssertionError`: Tensor-likes are not close! |"
        in step
    )
    assert "## Slowdowns and speedups (1)" in step


def test_the_claims_page_judges_an_exportdb_case_by_each_releases_own_claim_and_says_whose(tmp_path: Path):
    ours = dict(case_file="cases/exportdb/optional_input.py", expected="not-supported-yet")
    rows = [
        report_cell("2.1.2", "exportdb/optional_input", "fail", **ours),
        report_cell("2.9.1", "exportdb/optional_input", **ours, exportdb_claim="not-supported-yet"),
        report_cell("2.13.0", "exportdb/optional_input", **ours, exportdb_claim="supported"),
        report_cell("2.13.0", "exportdb/user_input_mutation", "fail", case_file="cases/exportdb/user_input_mutation.py",
                    expected="supported"),
    ]  # fmt: skip
    out = tmp_path / "report"
    report.build_report([str(write_by_release(tmp_path / "records", rows))], str(out), charts=False)
    index = (out / "index.md").read_text(encoding="utf-8")
    # The case file's claim would make 2.13.0's pass a contradiction; 2.13.0's own ExportDB documents support.
    assert "; 2 cells contradicting the documented claim (for an ExportDB case, that release's own ExportDB" in index
    page = rendered(out / "claims.md")
    assert page.rows[0] == ["case", "claim", "claimed by", "mode", "variant", "observed", "releases",
                            "error (newest release)"]  # fmt: skip
    # The claims table, then the counts per build of the cases documented to work (their own section).
    assert page.rows[3][0] == "release" and "## Documented to work" in (out / "claims.md").read_text(encoding="utf-8")
    assert [row[:7] for row in page.rows[1:3]] == [
        ["exportdb/optional_input", "not-supported-yet", "the release's own ExportDB", "strict", "cpu", "✅ pass",
         "2.9.1"],
        ["exportdb/user_input_mutation", "supported", "the case file (the release's ExportDB names none)", "strict",
         "cpu", "❌ fail", "2.13.0"],
    ]  # fmt: skip


def test_the_command_counts_every_kind_of_regression_and_fix_as_the_front_page_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    broken = dict(serialize_status="error", serialize_error="load-error: no")
    rows = [
        report_cell("2.4.1", "worse"),
        report_cell("2.4.1", "silent", "fail", error_type="RuntimeError", error_message="unsupported"),
        report_cell("2.4.1", "heals", "fail", error_type="RuntimeError", error_message="unsupported"),
        report_cell("2.4.1", "saves", serialize_status="ok"),
        report_cell("2.4.1", "saves-again", **broken),
        report_cell("2.5.0", "worse", "fail", error_type="RuntimeError", error_message="unsupported"),
        report_cell("2.5.0", "silent", "mismatch", error_type="AssertionError", error_message="not close"),
        report_cell("2.5.0", "heals"),
        report_cell("2.5.0", "saves", **broken),
        report_cell("2.5.0", "saves-again", serialize_status="ok"),
    ]
    folder = write_by_release(tmp_path / "records", rows)
    out = tmp_path / "report"
    assert cli.main(["report", str(folder), "--out", str(out), "--no-charts"]) == 0
    # A status regression, a wrong result and a stage regression; a status fix and a stage fix.
    assert "5 case pages, 3 regressions (1 now wrong numbers), 2 fixes" in capsys.readouterr().out
    index = (out / "index.md").read_text(encoding="utf-8")
    assert "## Regressions (3 cells)" in index


def test_cells_and_transitions_of_a_with_set_name_their_set(tmp_path: Path):
    pinned = "packaging==23.2"
    rows = [
        report_cell("2.4.1", "pkg"),
        report_cell("2.4.1", "pkg", with_set=pinned),
        report_cell("2.5.0", "pkg"),
        report_cell("2.5.0", "pkg", "fail", with_set=pinned, error_type="RuntimeError", error_message="boom"),
    ]
    out = tmp_path / "report"
    report.build_report([str(write_by_release(tmp_path / "records", rows))], str(out), charts=False)
    grid = rendered(out / "grid.md")
    header = next(row for row in grid.rows if row[:4] == ["release", "variant", "Python", "--with"])
    assert header[4] == "mode"
    # Two rows per release and mode, told apart by their set.
    assert [row[:5] for row in grid.rows if row[:1] == ["2.5.0"]] == [
        ["2.5.0", "cpu", "3.11", "", "strict"],
        ["2.5.0", "cpu", "3.11", pinned, "strict"],
    ]
    index = (out / "index.md").read_text(encoding="utf-8")
    assert "| [pkg](cases/pkg.md) \\[packaging==23.2\\] | strict | regression | ✅ pass → ❌ fail |" in index
    step = (out / "transition-2.4.1__2.5.0.md").read_text(encoding="utf-8")
    assert "| [pkg](cases/pkg.md) \\[packaging==23.2\\] | strict | ✅ pass → ❌ fail |" in step
    # Without a set anywhere, the counts have no column for one.
    plain = tmp_path / "plain"
    report.build_report([str(write_by_release(tmp_path / "plain-records", rows[::2]))], str(plain), charts=False)
    assert "--with" not in (plain / "grid.md").read_text(encoding="utf-8")


def test_the_aoti_stage_reaches_the_tables_and_the_case_page(tmp_path: Path):
    rows = [
        # A run that selected the stage: its record carries the aoti keys beside every cell's.
        dict(report_cell("2.13.0", "x"), aoti_status="ok", aoti_compile_s=22.06, aoti_package_bytes=1500000),
        report_cell("2.13.0", "y"),  # a run without the stage: none of its fields
    ]
    out = tmp_path / "report"
    report.build_report([str(write_by_release(tmp_path / "records", rows))], str(out), charts=False)
    cells = pd.read_parquet(out / "cells.parquet").set_index("case")
    assert cells.loc["x", "aoti_status"] == "ok" and cells.loc["x", "aoti_compile_s"] == 22.06
    assert pd.isna(cells.loc["y", "aoti_status"])
    page = (out / "cases" / "x.md").read_text(encoding="utf-8")
    # The stage's outcome beside the status, and its grid drawn from its declaration: the glyph, its meaning.
    assert "✅ pass · aoti ok" in page
    assert "## aoti outcome" in page and "| ✅ | ok | compiled with AOTInductor" in page
    assert "aoti ok" not in (out / "cases" / "y.md").read_text(encoding="utf-8")


def test_a_candidate_is_judged_first_on_the_front_page_and_fails_the_report_on_request(tmp_path: Path):
    rows = [
        report_cell("2.15.0", "x", variant="pypi"),
        report_cell("2.15.0", "y", "fail", variant="pypi", error_type="RuntimeError", error_message="old"),
        report_cell(
            "2.16.0.dev20260115", "x", "fail", variant="nightly", error_type="RuntimeError", error_message="new"
        ),
        report_cell("2.16.0.dev20260115", "y", variant="nightly"),
    ]
    records = write_by_release(tmp_path / "records", rows)
    out = tmp_path / "report"
    report.build_report([str(records)], str(out), charts=False)
    index = (out / "index.md").read_text(encoding="utf-8")
    verdicts = index.split("## Verdicts\n\n", 1)[1].splitlines()
    assert verdicts[0].startswith(
        "- **Candidate 2.16.0.dev20260115 (nightly) vs 2.15.0 (pypi)**: **regresses**: 1 cell broken (x strict);"
        " 1 cell fixed"
    )
    # The release verdicts judge the newest release, not the nightly.
    assert "**Still broken on 2.15.0**" in index
    page = (out / "candidates.md").read_text(encoding="utf-8")
    assert "### Broken (1)" in page and "| [x](cases/x.md) | strict | regression | pass → fail | new |" in page
    assert cli.main(["report", str(records), "--out", str(out), "--no-charts", "--fail-on", "regression"]) == 1
    assert cli.main(["report", str(records), "--out", str(out), "--no-charts"]) == 0
    site = (out / "site" / "index.html").read_text(encoding="utf-8")
    assert (  # the Markdown's words, drawn from the same document
        "<li><strong>Candidate 2.16.0.dev20260115 (nightly) vs 2.15.0 (pypi)</strong>: <strong>regresses</strong>:"
        " 1 cell broken (x strict)" in site
    )

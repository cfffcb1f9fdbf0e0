"""A case's page (its Markdown form, and its site form where it says more): graph diffs per --with set, each distinct
diff once, the case's source."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Dict

import pytest
from markdown_it import MarkdownIt

from matrix.records import graph_diffs
from matrix.report import build as report
from matrix.report import case_page, diff_files

from . import links_support
from conftest import report_cell

OLD, NEW = "packaging==23.2", "packaging==24.1"
MODES = ("strict", "non-strict")


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


ADD = "x = input\ny = aten.add(x, 1)\nout = y\n"
MUL = "x = input\ny = aten.mul(x, 2)\nout = y\n"
SUB = "x = input\ny = aten.sub(x, 3)\nout = y\n"
SOURCE = (
    '"""A case whose comment holds markup."""\n\n# keeps x < y & "z" </pre><script>alert(4)</script>\nimport torch\n'
)


def graph(release: str, case: str, text: str, mode: str = "strict") -> dict:
    digest = {ADD: "a", MUL: "b", SUB: "c"}[text] * 16
    return report_cell(release, case, mode=mode, graph_text=text, graph_hash=digest, case_file="cases/x.py")


@pytest.fixture()
def pages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The Markdown case pages of a report whose cases' file is ``cases/x.py`` of the current folder."""
    rows = [
        *(graph(r, "twin", text, mode) for r, text in (("2.4.1", ADD), ("2.5.0", MUL)) for mode in MODES),
        *(graph("2.4.1", "split", ADD, mode) for mode in MODES),
        graph("2.5.0", "split", MUL),
        graph("2.5.0", "split", SUB, "non-strict"),
        graph("2.4.1", "late", ADD),
        graph("2.5.0", "late", MUL),
        graph("2.6.0", "late", MUL),
        *(graph(r, "late", text, "non-strict") for r, text in (("2.4.1", ADD), ("2.5.0", ADD), ("2.6.0", MUL))),
        report_cell("2.4.1", "gone", case_file="cases/gone.py"),
    ]
    folder = tmp_path / "records"
    folder.mkdir()
    (folder / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "x.py").write_text(SOURCE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # the report shows sources from cases/ of the current folder
    report.build_report([str(folder)], str(tmp_path / "out"), charts=False)
    return tmp_path / "out" / "cases"


def diffs(page: str) -> Dict[str, str]:
    """Each graph diff of a page by its title."""
    changes = page.split("## Graph changes\n", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"<summary>(.*?) \(\d+ lines?, [^)]*\)</summary>\n\n```diff\n(.*?)```\n", changes, re.S))


def test_a_diff_shared_by_both_modes_is_shown_once_naming_both(pages: Path):
    page = (pages / "twin.md").read_text(encoding="utf-8")
    diff = "@@ -1,3 +1,3 @@\n x = input\n-y = aten.add(x, 1)\n+y = aten.mul(x, 2)\n out = y\n"
    assert diffs(page) == {"2.4.1 → 2.5.0, strict and non-strict": diff}
    # The transitions table still lists each transition.
    assert (
        len(re.findall(r"^\| \[2\.4\.1 → 2\.5\.0\]\(.*\) \| (?:non-)?strict \| cpu \| graph-change \|", page, re.M))
        == 2
    )


def test_different_diffs_are_each_shown_under_their_own_transition(pages: Path):
    found = diffs((pages / "split.md").read_text(encoding="utf-8"))
    assert list(found) == ["2.4.1 → 2.5.0, strict", "2.4.1 → 2.5.0, non-strict"]
    assert "+y = aten.mul(x, 2)" in found["2.4.1 → 2.5.0, strict"]
    assert "+y = aten.sub(x, 3)" in found["2.4.1 → 2.5.0, non-strict"]


def test_the_same_change_between_other_releases_is_shown_once_naming_each_transition(pages: Path):
    found = diffs((pages / "late.md").read_text(encoding="utf-8"))
    assert list(found) == ["2.4.1 → 2.5.0, strict; 2.5.0 → 2.6.0, non-strict"]


def test_the_source_is_a_python_block_that_renders_escaped(pages: Path):
    page = (pages / "twin.md").read_text(encoding="utf-8")
    assert page.endswith(
        "## Source\n\n<details><summary>cases/x.py, as it is where this report was built (the records keep no copy of"
        " the source that ran)</summary>\n\n```python\n%s```\n\n</details>\n" % SOURCE
    )
    html = MarkdownIt("commonmark").render(page)
    assert "<script>" not in html and "# keeps x &lt; y &amp; &quot;z&quot; &lt;/pre&gt;&lt;script&gt;" in html


def test_a_source_that_is_not_there_is_said_in_one_line(pages: Path):
    page = (pages / "gone.md").read_text(encoding="utf-8")
    assert page.endswith(
        "## Source\n\nThe source is not available: the case file cases/gone.py is not a file in the case folders"
        " this report was built with.\n"
    )


def test_every_case_page_states_its_claim_or_that_it_has_none(tmp_path: Path):
    rows = [report_cell("2.4.1", "claimed", expected="supported"), report_cell("2.4.1", "silent")]
    folder = tmp_path / "records"
    folder.mkdir()
    (folder / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    report.build_report([str(folder)], str(tmp_path / "out"), charts=False)
    claimed = (tmp_path / "out" / "cases" / "claimed.md").read_text(encoding="utf-8")
    silent = (tmp_path / "out" / "cases" / "silent.md").read_text(encoding="utf-8")
    assert "\n- **claim**: supported\n" in claimed
    assert "\n- **claim**: %s\n" % case_page.NO_CLAIM in silent
    site = (tmp_path / "out" / "site" / "cases" / "silent.html").read_text(encoding="utf-8")
    assert "<li><strong>claim</strong>: none: no source" in site


LONG_BEFORE = "".join("v%d = aten.add(x, %d)\n" % (n, n) for n in range(40))
LONG_AFTER = "".join("v%d = aten.mul(x, %d)\n" % (n, n) for n in range(40))


@pytest.fixture()
def long_diff(tmp_path: Path) -> Path:
    """A report of one case whose graph changes on every line between 2.4.1 and 2.5.0, in both modes."""
    rows = [
        report_cell(release, "long", mode=mode, graph_text=text, graph_hash=digest * 16)
        for release, text, digest in (("2.4.1", LONG_BEFORE, "a"), ("2.5.0", LONG_AFTER, "b"))
        for mode in MODES
    ]
    folder = tmp_path / "records"
    folder.mkdir()
    (folder / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    report.build_report([str(folder)], str(tmp_path / "out"), charts=False)
    return tmp_path / "out"


def test_a_long_diff_shows_its_first_lines_and_links_the_whole_stored_once(long_diff: Path):
    page = (long_diff / "cases" / "long.md").read_text(encoding="utf-8")
    shown = diffs(page)["2.4.1 → 2.5.0, strict and non-strict"].splitlines()
    whole = graph_diffs.diff_lines(LONG_BEFORE, LONG_AFTER)
    assert len(whole) == 81 and shown == whole[: diff_files.SHOWN_LINES] + ["…"]
    assert "<summary>2.4.1 → 2.5.0, strict and non-strict (81 lines, +40 −40)</summary>" in page
    linked = re.findall(r"\[the whole diff\]\(([^)]+)\)", page)
    assert len(linked) == 1 and linked[0].startswith("long.diffs/") and linked[0].endswith(".diff")
    stored = long_diff / "cases" / linked[0]
    assert stored.read_text(encoding="utf-8").splitlines() == whole
    # The site's page and the transition page link that very file; no other copy of the diff is written.
    site = (long_diff / "site" / "cases" / "long.html").read_text(encoding="utf-8")
    assert '<a href="../../cases/%s" download>the whole diff</a>' % linked[0] in site
    assert site.count("aten.add") == diff_files.SHOWN_LINES - 1 and "aten.mul" not in site  # the hunk line first
    transition = (long_diff / "transition-2.4.1__2.5.0.md").read_text(encoding="utf-8")
    assert transition.count("](cases/%s) (81 lines, +40 −40)" % linked[0]) == 2  # one line a mode
    assert "aten.mul" not in transition
    assert list((long_diff / "cases").glob("*.diffs/*")) == [stored]
    manifest = json.loads((long_diff / ".export-matrix-report.json").read_text(encoding="utf-8"))["files"]
    assert "cases/" + linked[0] in manifest


def test_a_diff_file_of_a_build_is_removed_by_the_next_that_does_not_show_it(long_diff: Path, tmp_path: Path):
    stored = list((long_diff / "cases").glob("*.diffs/*.diff"))
    assert len(stored) == 1
    rows = [report_cell("2.4.1", "long", mode=mode, graph_text=LONG_BEFORE, graph_hash="a" * 16) for mode in MODES]
    folder = tmp_path / "fewer"
    folder.mkdir()
    (folder / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    report.build_report([str(folder)], str(long_diff), charts=False)
    assert not stored[0].exists() and not stored[0].parent.exists()


def test_every_relative_link_of_a_report_with_diffs_names_a_file_of_it(long_diff: Path):
    assert links_support.relative(long_diff, r"\.diff$")  # the diffs' links are among those checked
    assert links_support.broken(long_diff) == []

"""A case's page on the site: each distinct graph diff once with every transition it applies to, and the source."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from matrix.report import build as report

from conftest import report_cell, write_by_release

ADD = "x = input\ny = aten.add(x, 1)\nout = y\n"
MUL = "x = input\ny = aten.mul(x, 2)\nout = y\n"
SUB = "x = input\ny = aten.sub(x, 3)\nout = y\n"
MODES = ("strict", "non-strict")
HASHES = {ADD: "a" * 16, MUL: "b" * 16, SUB: "c" * 16}
SOURCE = (
    '"""A case whose comment holds markup."""\n\n# keeps x < y & "z" </pre><script>alert(4)</script>\nimport torch\n'
)


def graph(release: str, case: str, text: str, mode: str = "strict") -> Dict[str, Any]:
    return report_cell(release, case, mode=mode, graph_text=text, graph_hash=HASHES[text], case_file="cases/x.py")


class Page(HTMLParser):
    """The text of each <summary>, of each <pre> by its class, and of each table row."""

    def __init__(self) -> None:
        super().__init__()
        self.summaries: List[str] = []
        self.pres: Dict[str, List[str]] = {}
        self.rows: List[str] = []
        self.tags: List[str] = []
        self._into: Optional[List[str]] = None
        self._parts: List[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self.tags.append(tag)
        if tag == "summary":
            self._into, self._parts = self.summaries, []
        elif tag == "pre":
            self._into, self._parts = self.pres.setdefault(dict(attrs).get("class") or "", []), []
        elif tag == "tr":
            self._into, self._parts = self.rows, []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("summary", "pre", "tr") and self._into is not None:
            self._into.append("".join(self._parts))
            self._into = None

    def handle_data(self, data: str) -> None:
        self._parts.append(data)


@pytest.fixture()
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A report of four cases, built where ``cases/x.py`` is the file the records name for all but two."""
    rows = [
        # The same change in both modes, between the same releases.
        *(graph(release, "twin", text, mode) for release, text in (("2.4.1", ADD), ("2.5.0", MUL)) for mode in MODES),
        # A different change in each mode.
        graph("2.4.1", "split", ADD),
        graph("2.4.1", "split", ADD, "non-strict"),
        graph("2.5.0", "split", MUL),
        graph("2.5.0", "split", SUB, "non-strict"),
        # The same change, one release later in non-strict.
        graph("2.4.1", "late", ADD),
        graph("2.5.0", "late", MUL),
        graph("2.4.1", "late", ADD, "non-strict"),
        graph("2.5.0", "late", ADD, "non-strict"),
        graph("2.6.0", "late", MUL),
        graph("2.6.0", "late", MUL, "non-strict"),
        report_cell("2.4.1", "gone", case_file="cases/gone.py"),
        report_cell("2.4.1", "unnamed"),
    ]
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "x.py").write_text(SOURCE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # the report shows sources from cases/ of the current folder
    out = tmp_path / "report"
    report.build_report([str(write_by_release(tmp_path / "records", rows))], str(out), charts=False)
    return out / "site" / "cases"


def parsed(folder: Path, case: str) -> Page:
    page = Page()
    page.feed((folder / (case + ".html")).read_text(encoding="utf-8"))
    return page


def test_a_diff_shared_by_both_modes_is_shown_once_naming_both(site: Path):
    page = parsed(site, "twin")
    assert page.pres["diff"] == ["@@ -1,3 +1,3 @@\n x = input\n-y = aten.add(x, 1)\n+y = aten.mul(x, 2)\n out = y"]
    assert "2.4.1 → 2.5.0, strict and non-strict (5 lines, +1 −1)" in page.summaries
    # The transitions table still lists each transition.
    moves = [r for r in page.rows if r.startswith("2.4.1 → 2.5.0")]
    assert [m.split("graph-change")[0] for m in moves] == ["2.4.1 → 2.5.0strict", "2.4.1 → 2.5.0non-strict"]


def test_different_diffs_are_each_shown_under_their_own_transition(site: Path):
    page = parsed(site, "split")
    assert len(page.pres["diff"]) == 2
    assert "+y = aten.mul(x, 2)" in page.pres["diff"][0] and "+y = aten.sub(x, 3)" in page.pres["diff"][1]
    assert [s for s in page.summaries if "→" in s] == ["2.4.1 → 2.5.0, %s (5 lines, +1 −1)" % m for m in MODES]


def test_the_same_change_between_other_releases_is_shown_once_naming_each_transition(site: Path):
    page = parsed(site, "late")
    assert len(page.pres["diff"]) == 1
    assert "2.4.1 → 2.5.0, strict; 2.5.0 → 2.6.0, non-strict (5 lines, +1 −1)" in page.summaries


def test_the_source_is_shown_collapsed_and_escaped(site: Path):
    html = (site / "twin.html").read_text(encoding="utf-8")
    assert "<h2>Source</h2>" in html
    assert "# keeps x &lt; y &amp; &quot;z&quot; &lt;/pre&gt;&lt;script&gt;alert(4)&lt;/script&gt;" in html
    page = parsed(site, "twin")
    assert page.pres["source"] == [SOURCE]
    assert "script" not in page.tags
    assert "cases/x.py, as it is where this report was built" in page.summaries[-1]


def test_a_source_that_is_not_there_is_said_in_one_line(site: Path):
    gone = (site / "gone.html").read_text(encoding="utf-8")
    assert (
        "<h2>Source</h2>\n<p>The source is not available: the case file <code>cases/gone.py</code> is not a file"
        " in the case folders this report was built with.</p>" in gone
    )
    unnamed = (site / "unnamed.html").read_text(encoding="utf-8")
    assert "<h2>Source</h2>\n<p>The records name no case file.</p>" in unnamed
    assert 'class="source"' not in gone + unnamed


class _Kinds(HTMLParser):
    """Each line of a ``pre.diff``'s text with the class of the span it sits in ("" outside one)."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: List[List[str]] = []  # [kind, text]
        self._kind = ""

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        assert tag == "span"
        self._kind = dict(attrs)["class"]

    def handle_endtag(self, tag: str) -> None:
        self._kind = ""

    def handle_data(self, data: str) -> None:
        self.parts.append([self._kind, data])

    def lines(self) -> List[List[str]]:
        found: List[List[str]] = [["", ""]]
        for kind, data in self.parts:
            for i, piece in enumerate(data.split("\n")):
                if i:
                    found.append(["", ""])
                if piece:
                    found[-1] = [kind, found[-1][1] + piece]
        return found


def test_a_diff_keeps_every_line_and_its_kind_with_one_span_per_run():
    from matrix.report.site import case as site_case

    lines = ["@@ -1,4 +1,5 @@", " x = input", "-y = add(x, 1)", "-z = mul(y, 2)", "+y = add(x, 2)", "+z = mul(y, 3)",
             "+w = <neg>(z) & 'q'", " return z", "@@ -9 +10 @@", "-out"]  # fmt: skip
    html = site_case.diff_lines(lines)
    parser = _Kinds()
    parser.feed(html)
    parser.close()
    kinds = {"+": "add", "-": "del", "@": "hunk", " ": ""}
    assert parser.lines() == [[kinds[line[0]], line] for line in lines]
    # A run of added (or removed) lines is one span, not one a line.
    assert html.count("<span") == 5
    assert '<span class="add">+y = add(x, 2)\n+z = mul(y, 3)\n+w = &lt;neg&gt;(z) &amp; &#x27;q&#x27;</span>' in html

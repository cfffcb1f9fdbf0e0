"""The site's front page holds what the Markdown front page holds, and the site works when its folder is published
alone: what changed in the newest release and between releases, the real models with their libraries' versions, the
saved programs' epochs, the charts, the run and how to run it again, a legend of every glyph, the glossary, and
links that all resolve inside the site's folder."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import unquote, urlsplit

import pytest

from matrix.contract import schema
from matrix.report import again
from matrix.report import build as report
from matrix.report import files as report_files
from matrix.report import glossary as report_glossary

from .test_site import embedded, records_with_everything
from conftest import report_cell, write_by_release

# A case that breaks in the newest release, with an error to search for; its case file is on disk, so that it
# has a repro script.
LATE_ERROR = "torch._dynamo.exc.UserError: Constraints violated (seq)! late breakage"
SOURCE = '"""A case."""\nimport torch\n'


def late_records(folder: Path) -> Path:
    late = {"case_file": "cases/late.py", "tags": ["late-tag"]}
    rows = [
        report_cell("2.4.1", "late", **late),
        report_cell("2.5.0", "late", **late),
        report_cell("2.6.0", "late", "fail", error_type="torch._dynamo.exc.UserError",
                    error_message="Constraints violated (seq)! late breakage\nmore", **late),
    ]  # fmt: skip
    return write_by_release(folder, rows)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sections")
    folders = records_with_everything(root / "records") + [late_records(root / "late")]
    (root / "cases").mkdir()
    (root / "cases" / "late.py").write_text(SOURCE, encoding="utf-8")
    out = root / "report"
    report.build_report([str(f) for f in folders], str(out), charts=False, case_roots=[str(root / "cases")])
    return out


class Page(HTMLParser):
    """Each section's id and text, each link and image, each table's header and rows, as text."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: List[str] = []
        self.text: Dict[str, List[str]] = {}
        self.links: List[str] = []
        self.sources: List[str] = []
        self.rows: List[Tuple[Dict[str, Optional[str]], List[str]]] = []  # a row's attributes and cells' text
        self._section = ""
        self._cell: Optional[List[str]] = None

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        found = dict(attrs)
        if tag == "section":
            self._section = found.get("id") or ""
            self.sections.append(self._section)
        elif tag == "a" and found.get("href"):
            self.links.append(found["href"])
        elif tag in ("img", "script", "link") and (found.get("src") or found.get("href")):
            self.sources.append(found.get("src") or found.get("href") or "")
        elif tag == "tr":
            self.rows.append((found, []))
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "br" and self._cell is not None:
            self._cell.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.rows:
            self.rows[-1][1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        self.text.setdefault(self._section, []).append(data)
        if self._cell is not None:
            self._cell.append(data)

    def said(self, section: str) -> str:
        return " ".join(" ".join(self.text.get(section, [])).split())


def parsed(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def section_html(index: str, name: str) -> str:
    found = re.search(r'<section id="%s">(.*?)</section>' % name, index, re.S)
    assert found is not None, name
    return found.group(1)


def test_the_front_page_has_a_section_for_each_part_of_the_markdown_front_page(built: Path):
    page = parsed(built / "site" / "index.html")
    names = ("verdicts", "the-run", "summary", "newest", "real-models", "changes")
    names += ("saved-programs-across-releases", "cases", "tables", "more")
    for name in names:
        assert name in page.sections, name
        assert "#" + name in page.links, name  # the page's navigation reaches it
    assert "glossary.html" in page.links
    # The grid follows the verdicts, high on the page, then what changed in the newest release; the table of every
    # change with its filters, the site's own, stands where the release transitions were.
    at = [page.sections.index(name) for name in ("verdicts", "cases", "newest", "the-run", "changes", "tables")]
    assert at == sorted(at)


def test_what_regressed_in_the_newest_release_is_listed_with_its_error_and_linked_from_the_verdicts(built: Path):
    index = (built / "site" / "index.html").read_text(encoding="utf-8")
    verdicts = section_html(index, "verdicts")
    regressed = verdicts[verdicts.index("<strong>Regressed in 2.6.0</strong>") :].split("</ul>")[0]
    assert '<a href="cases/late.html">late</a>' in regressed
    assert "breaks" not in regressed  # it broke at 2.4.1 → 2.5.0, not in the newest release
    rows = [r for r in section_html(index, "newest-regressed").split("<tr>") if 'href="cases/late.html"' in r]
    # Its error's first line on the front page; the error whole, on one line, its line breaks marked, on the
    # transition page the row links to (both forms are one document).
    assert len(rows) == 1 and "Constraints violated (seq)! late breakage</td>" in rows[0]
    assert 'href="transition-2.5.0__2.6.0.html#regressions"' in rows[0]
    transition = (built / "site" / "transition-2.5.0__2.6.0.html").read_text(encoding="utf-8")
    rows = [r for r in section_html(transition, "regressions").split("<tr>") if 'href="cases/late.html"' in r]
    assert len(rows) == 1 and "Constraints violated (seq)! late breakage ⏎ more" in rows[0]


def test_every_regression_between_releases_is_a_row_the_page_can_filter_and_fixes_are_counted(built: Path):
    html = (built / "site" / "index.html").read_text(encoding="utf-8")
    page = parsed(built / "site" / "index.html")
    # The table of regressions, a row per case and mode, then the filter keys the widget gives each row.
    rows = re.findall(r"<tr>(<td.*?)</tr>", section_html(html, "every-regression"))
    said = [[" ".join(re.sub("<[^>]+>", "", c).split()) for c in re.findall(r"<td[^>]*>(.*?)</td>", r)] for r in rows]
    keys = json.loads(re.search(r'<script type="application/json" id="change-keys">(.*?)</script>', html).group(1))
    assert len(keys["rows"]) == len(said) == 2
    table = {(cells[0], cells[1], into, change) for cells, (into, change) in zip(said, keys["rows"])}
    assert table == {
        ("2.4.1 → 2.5.0", "breaks", "2.5.0", "regressions regression"),
        ("2.5.0 → 2.6.0", "late", "2.6.0", "regressions regression"),
    }
    options = re.findall(r'<select id="c-into">(.*?)</select>', html)[0]
    assert re.findall(r'value="([^"]*)"', options) == ["", "2.5.0", "2.6.0"]
    # The fixes are counted, each on its transition's page, whose count the table of transitions links.
    assert "Fixes (1 cell)" in section_html(html, "every-fix") and "heals" not in section_html(html, "every-fix")
    assert '<a href="transition-2.4.1__2.5.0.html#regressions">1</a>' in html
    assert '<a href="transition-2.4.1__2.5.0.html#fixes">1</a>' in html
    assert "changes" in page.sections and "every-fix" in page.sections


def test_the_real_models_show_each_environment_and_the_version_it_resolved(built: Path):
    page = parsed(built / "site" / "index.html")
    html = section_html((built / "site" / "index.html").read_text(encoding="utf-8"), "real-models")
    head = re.findall(r"<thead><tr>(.*?)</tr></thead>", html)[0]
    assert head.count("<th") == 3 and "2.5.0" in head and "2.6.0" in head
    model = next(cells for _, cells in page.rows if cells and cells[0].startswith("real_models/hf_tiny"))
    assert model[0] == "real_models/hf_tiny (transformers)"  # its library, named once
    # Its status in its one mode, then the version resolved there: as the Markdown page says it.
    assert model[1:] == ["✅ 4.50.0", "✅ 4.57.1"]
    assert '<td class="l"><span class="st s0">✅</span> 4.50.0</td>' in html


def test_the_saved_programs_show_the_epochs(built: Path):
    page = parsed(built / "site" / "index.html")
    said = page.said("saved-programs-across-releases")
    assert "An epoch is a range of releases" in said
    # One epoch: programs saved on 2.5.0 and 2.6.0 load on 2.6.0, and 2.5.0 cannot read 2.6.0's.
    assert [
        "epoch",
        "programs loaded",
        "loads that match",
        "older read newer",
        "exceptions",
        "older programs fail",
    ] in [cells for _, cells in page.rows]
    assert ["2.5.0–2.6.0", "2", "3 of 3", "no", "none", "–"] in [cells for _, cells in page.rows]
    assert '<a href="#saved-programs-across-releases">epochs</a>' in section_html(
        (built / "site" / "index.html").read_text("utf-8"), "verdicts"
    )


def test_the_run_says_where_and_when_it_ran_and_how_to_run_it_again(built: Path):
    page = parsed(built / "site" / "index.html")
    facts = {cells[0]: cells[1] for _, cells in page.rows if len(cells) == 2}
    assert facts["machine"] == "x86_64"
    assert facts["run on"].startswith("2025-03-01 to 2025-03-02")
    assert facts["releases"].startswith("3 releases, 3 builds")
    assert facts["variants"] == "cpu" and facts["Python"] == "3.11"
    said = page.said("run-it-again")
    assert 'EXPORT_MATRIX_TORCH="2.4.1+cpu 2.5.0+cpu 2.6.0+cpu" nox -s run load -- --device cpu' in said
    assert "export-matrix report results/latest --out reports/local" in said
    assert said.index("git checkout ") < said.index("nox -s run") < said.index("export-matrix report")


def test_a_build_is_selected_by_its_release_on_pypi_and_by_its_local_tag_elsewhere():
    assert again.selection_word(("2.15.0+cu132", "pypi")) == "2.15.0"
    assert again.selection_word(("2.13.0+cpu", "cpu")) == "2.13.0+cpu"
    assert again.selection_word(("2.4.1", "cpu")) == "2.4.1+cpu"


def test_every_glyph_the_front_page_draws_is_in_the_glossary(built: Path):
    glossary = (built / "site" / "glossary.html").read_text(encoding="utf-8")
    shown = set(re.findall(r'<span class="st[^"]*"[^>]*>([^<]*)</span>', glossary))
    assert {s.symbol for s in schema.Status} | {s.symbol for s in schema.LoadStatus} <= shown
    index = (built / "site" / "index.html").read_text(encoding="utf-8")
    for name in ("verdicts", "newest-regressed", "real-models", "saved-programs-across-releases"):
        assert set(re.findall(r'<span class="st[^"]*"[^>]*>([^<]*)</span>', section_html(index, name))) <= shown
    data = embedded(index)
    assert set(data["glyphs"]) <= shown and data["letters"] == ["S", "N"]


def test_the_glossary_page_defines_every_term_of_the_report(built: Path):
    page = parsed(built / "site" / "glossary.html")
    terms = [cells[0] for _, cells in page.rows if cells]
    for term in report_glossary.TERMS:
        assert term.replace("`", "") in terms, term


def test_search_finds_a_case_by_its_error_text_and_tags(built: Path):
    data = embedded((built / "site" / "index.html").read_text(encoding="utf-8"))
    cases = {case["name"]: case for case in data["cases"]}
    assert cases["late"]["errors"] == [LATE_ERROR]  # the first line, whole
    assert cases["late"]["tags"] == ["late-tag"]
    assert cases["heals"]["errors"] == ["torch._dynamo.exc.Unsupported: graph break"]
    assert cases["steady"]["errors"] == []


def test_every_link_and_file_of_the_site_resolves_inside_the_reports_folder(built: Path):
    # The site links the report's charts, Parquet tables and repro scripts where the report wrote them, one
    # folder up: every link resolves inside the report's folder, published whole.
    folder = built.resolve()
    checked = 0
    for path in (folder / "site").rglob("*.html"):
        page = parsed(path)
        for target in page.links + page.sources:
            if target.startswith("#"):
                continue
            parts = urlsplit(target)
            assert not parts.scheme and not parts.netloc, (path, target)  # nothing from elsewhere
            resolved = (path.parent / unquote(parts.path)).resolve()
            assert resolved.is_relative_to(folder), (path, target)
            assert resolved.is_file(), (path, target)
            checked += 1
    assert checked > 50


def test_a_repro_script_is_the_one_the_markdown_page_links(built: Path):
    page = (built / "site" / "cases" / "late.html").read_text(encoding="utf-8")
    # The one script the report wrote beside the Markdown page (cases/late.repro/), linked from site/cases/.
    [link] = re.findall(r'<a href="\.\./\.\./(cases/late\.repro/[^"]+\.py)" download>', page)
    assert (built / "site" / "cases" / "../.." / link).resolve() == (built / link).resolve()
    assert (built / link).is_file() and not (built / "site" / link).exists()
    listed = set(json.loads((built / report_files.MANIFEST).read_text(encoding="utf-8"))["files"])
    assert link in listed and "site/" + link not in listed


def test_the_site_shows_the_reports_own_charts_and_stores_no_copy(tmp_path: Path):
    folders = records_with_everything(tmp_path / "records")
    out = tmp_path / "report"
    (out / "site" / "charts").mkdir(parents=True)  # a copy an earlier build made, listed in its manifest
    (out / "site" / "charts" / "pass-rate.png").write_bytes(b"old copy")
    (out / report_files.MANIFEST).write_text(json.dumps({"files": ["site/charts/pass-rate.png"]}), encoding="utf-8")
    report.build_report([str(f) for f in folders], str(out), charts=True)
    index = parsed(out / "site" / "index.html")
    images = [s for s in index.sources if s.endswith(".png")]
    assert "../charts/pass-rate.png" in images and "../charts/status-overview.png" in images
    assert any(s.startswith("../charts/loads-") for s in images)  # the saved programs' heatmap
    for image in images:
        assert (out / "site" / image).resolve() == (out / image[len("../") :]).resolve()
        assert (out / image[len("../") :]).is_file()
    listed = set(json.loads((out / report_files.MANIFEST).read_text(encoding="utf-8"))["files"])
    assert {image[len("../") :] for image in images} <= listed
    assert not (out / "site" / "charts" / "pass-rate.png").exists()  # the earlier build's copy went
    # Built again without charts: the site shows none.
    report.build_report([str(f) for f in folders], str(out), charts=False)
    assert not [s for s in parsed(out / "site" / "index.html").sources if s.endswith(".png")]


def test_a_page_without_loads_or_real_models_leaves_their_sections_out(tmp_path: Path):
    rows = [report_cell("2.5.0", "a"), report_cell("2.6.0", "a", "fail", error_type="E", error_message="x")]
    report.build_report([str(write_by_release(tmp_path / "records", rows))], str(tmp_path / "out"), charts=False)
    page = parsed(tmp_path / "out" / "site" / "index.html")
    assert "real-models" not in page.sections and "saved-programs-across-releases" not in page.sections
    assert "#real-models" not in page.links


def test_the_verdicts_name_incomplete_builds_and_compare_builds_of_one_release(tmp_path: Path):
    failed = {
        **report_cell("2.5.0+cpu", "x"),
        "kind": "env-error",
        "variant": "cpu",
        "dependency_set": "torchvision",
        "error_type": "matrix.envs.install.InstallError",
        "error_message": "uv pip install torch torchvision==0.20.0+cpu failed: error: No solution found",
    }
    rows = [
        report_cell("2.5.0", "x", variant="pypi"),
        report_cell("2.5.0+cpu", "x", "fail", variant="cpu", error_type="RuntimeError", error_message="boom"),
        failed,
    ]
    out = tmp_path / "out"
    report.build_report([str(write_by_release(tmp_path / "records", rows))], str(out), charts=False)
    verdicts = section_html((out / "site" / "index.html").read_text(encoding="utf-8"), "verdicts")
    assert "<strong>Incomplete builds</strong>" in verdicts
    assert "2.5.0+cpu cpu lacks <code>torchvision</code>: error: No solution found" in verdicts
    assert "2.5.0+cpu vs 2.5.0: 1 cells compared, 1 worse" in verdicts
    data = embedded((out / "site" / "index.html").read_text(encoding="utf-8"))
    assert "2.5.0+cpu cpu (incomplete)" in data["envs"]


class Boxes(HTMLParser):
    """Each table of a page that is not inside a ``div.wide`` (the box that scrolls sideways), by its class."""

    def __init__(self) -> None:
        super().__init__()
        self.open: List[Tuple[str, List[str]]] = []
        self.loose: List[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        found = dict(attrs)
        if tag == "table" and not any(t == "div" and "wide" in classes for t, classes in self.open):
            self.loose.append(found.get("class") or "table")
        if tag not in ("br", "img", "input", "meta", "link", "wbr", "hr", "col"):
            self.open.append((tag, (found.get("class") or "").split()))

    def handle_endtag(self, tag: str) -> None:
        for at in range(len(self.open) - 1, -1, -1):
            if self.open[at][0] == tag:
                del self.open[at:]
                break


def test_every_table_of_every_page_scrolls_in_a_box_of_its_own(built: Path):
    """A table wider than the window scrolls inside its ``div.wide``, never the page (site.css): so every table of
    every page of the site, the widgets' among them, sits in one."""
    pages = sorted((built / "site").rglob("*.html"))
    assert len(pages) > 10
    loose = {}
    for path in pages:
        boxes = Boxes()
        boxes.feed(path.read_text(encoding="utf-8"))
        if boxes.loose:
            loose[str(path.relative_to(built))] = boxes.loose
    assert loose == {}
    css = (built / "site" / "site.css").read_text(encoding="utf-8")
    assert ".wide { overflow-x: auto; max-width: 100%; }" in css and "img { max-width: 100%" in css

"""The transition pages, the front page's sections on transitions, the upgrade page and the detail pages: each built
once as a document, and its Markdown and its site page carry the same facts (a small report and the published one)."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from matrix.records import model, store
from matrix.report import document as d
from matrix.report import pages as pages_of_report
from matrix.report import transition_page
from matrix.report.build import build_report
from matrix.report.findings import Findings
from matrix.report.site import changes
from matrix.report.writers import html as html_writer
from matrix.report.writers import markdown as md_writer

from .forms_support import differences, facts, markdown_facts
from conftest import history, report_cell, write_by_release

PUBLISHED = Path(__file__).resolve().parents[2] / "reports" / "latest"


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("small")
    rows = history() + [
        # A case that breaks in both modes at one transition: two regressions (one per mode), never one merged row.
        report_cell("2.4.1", "twice"),
        report_cell("2.4.1", "twice", mode="non-strict"),
        report_cell("2.5.0", "twice", "fail", error_type="RuntimeError", error_message="both modes"),
        report_cell("2.5.0", "twice", "fail", mode="non-strict", error_type="RuntimeError", error_message="both modes"),
    ]
    out = root / "report"
    build_report([str(write_by_release(root / "records", rows))], str(out), charts=False)
    return out


def both_forms(out: Path, name: str) -> Tuple[List[Tuple[str, str]], List[Tuple[str, str]]]:
    markdown = (out / (name + ".md")).read_text(encoding="utf-8")
    site = (out / "site" / (name + ".html")).read_text(encoding="utf-8")
    return markdown_facts(markdown, name + ".md"), facts(site, "site/%s.html" % name)


def written_pages(out: Path, pattern: str = "*.md") -> List[str]:
    """The pages of the report's folder written in both forms (the front page aside)."""
    names = [p.stem for p in out.glob(pattern) if p.stem not in ("index", "glossary")]
    return sorted(n for n in names if (out / "site" / (n + ".html")).is_file())


def test_a_transition_page_says_the_same_in_both_forms(small: Path) -> None:
    names = written_pages(small, "transition-*.md")
    assert names == ["transition-2.4.1__2.5.0", "transition-2.5.0__2.6.0"]
    for name in names:
        markdown, site = both_forms(small, name)
        assert differences(markdown, site) is None, name
    markdown, _ = both_forms(small, "transition-2.4.1__2.5.0")
    words = " ".join(v for k, v in markdown if k == "text")
    # Each section counts its rows: "twice" broke in both modes, two rows; the order of the sections is the page's.
    assert words.index("Regressions (3)") < words.index("Fixes (1)") < words.index("Graph changes (1)")
    links = [v for k, v in markdown if k == "link"]
    assert links[0] == "page:index" and "page:cases/twice" in links and "page:cases/breaks" in links
    assert any(v.startswith("file:cases/steady.diffs/") for v in links)  # the graph's diff, as the case pages link it


def test_every_detail_page_says_the_same_in_both_forms(small: Path) -> None:
    names = written_pages(small)
    assert {"grid", "modes", "failures", "claims", "upgrade"} <= set(names)
    for name in names:
        markdown, site = both_forms(small, name)
        assert differences(markdown, site) is None, name
        assert markdown[1] == ("link", "page:index"), name  # each page leads back to the matrix
    # The upgrade page answers the newest pair in both forms; the site adds the chooser of any other pair.
    upgrade, _ = both_forms(small, "upgrade")
    said = " ".join(v for k, v in upgrade if k == "text")
    assert "From 2.5.0 to 2.6.0" in said and "Other cases the upgrade breaks" in said
    site = (small / "site" / "upgrade.html").read_text(encoding="utf-8")
    assert 'data-widget="pair-chooser"' in site and 'id="upgrade-data"' in site and "upgrade.js" in site
    grid, _ = both_forms(small, "grid")
    words = " ".join(v for k, v in grid if k == "text")
    # A case's cells: one glyph per mode (strict then non-strict) per build, ✅ where both modes pass.
    assert "Cells per status, release and mode" in words and "torch.cond (5)" in words
    assert "twice ✅ ✅ ❌ ❌ · ·" in words
    cases = [v for k, v in grid if k == "link" and v.startswith("page:cases/")]
    # Under its tag, each case once, in name order.
    assert cases == [
        "page:cases/breaks", "page:cases/heals", "page:cases/nested__case", "page:cases/steady", "page:cases/twice"
    ]  # fmt: skip


def _findings(out: Path) -> Tuple[model.Model, List[str]]:
    judged = model.build(store.load([str(out)]))
    return judged, list(judged.verdicts.regressions.newest)


def _front(sections: Tuple[d.Section, ...], widgets: Dict[str, str]) -> Tuple[list, list, str]:
    page = d.Page("index", "front", sections)
    site = html_writer.write(page, {"index"}, widgets)
    return markdown_facts(md_writer.write(page), "index.md"), facts(site, "site/index.html"), site


def test_regressions_and_fixes_are_rows_per_case_and_mode_counted_alike_in_both_forms(small: Path) -> None:
    judged, newest = _findings(small)
    sections = transition_page.sections(judged.steps, newest)
    markdown, site, html = _front(sections, changes.widget(judged.steps))
    assert differences(markdown, site) is None
    words = " ".join(v for k, v in markdown if k == "text")
    # twice (strict, non-strict) and breaks: three regressions, one row each; heals: one fix.
    assert "Regressions (3 cells)" in words and "Fixes (1 cell)" in words
    regressions = md_writer.write(d.Page("x", "x", (sections[1],))).split("### Regressions")[1].split("###")[0]
    assert regressions.count("[twice](cases/twice.md)") == 2
    assert "| strict |" in regressions and "| non-strict |" in regressions
    # The counts of the transitions table link the transition page's sections; op drift is two columns, not a sum.
    links = [v for k, v in markdown if k == "link"]
    assert "page:transition-2.4.1__2.5.0#regressions" in links and "page:transition-2.4.1__2.5.0#fixes" in links
    assert "op drift: exported" in words and "op drift: decomposed" in words
    # The site's filters key each row of the table of regressions, in its order; the fix is counted, not listed.
    assert html.count('"2.5.0","regressions regression"') == 3 and "fixes fix" not in html
    assert "What changed in 2.6.0" in words


def test_nothing_to_compare_says_so() -> None:
    newest, every = transition_page.sections((), ["2.6.0"])
    said = md_writer.write(d.Page("x", "x", (newest, every)))
    assert "Nothing to compare it with" in said and "No two releases compared." in said
    assert changes.widget(()) == {}


@pytest.fixture(scope="module")
def published() -> model.Model:
    if not (PUBLISHED / "cells.parquet").is_file():
        pytest.skip("no published report in this checkout")
    return model.build(store.load([str(PUBLISHED)]))


def test_the_published_reports_transitions_say_the_same_in_both_forms(published: model.Model) -> None:
    assert published.steps
    site_pages = {"index", *(transition_page.name(s) for s in published.steps)}
    for step in published.steps:
        page = transition_page.build(step)
        markdown = markdown_facts(md_writer.write(page), page.name + ".md")
        site = facts(html_writer.write(page, site_pages), "site/%s.html" % page.name)
        assert differences(markdown, site) is None, page.name
        words = " ".join(v for k, v in markdown if k == "text")
        assert "Regressions (%d)" % step.count("regression") in words
        assert "Fixes (%d)" % step.count("fix") in words
    newest = list(published.verdicts.regressions.newest)
    sections = transition_page.sections(published.steps, newest)
    markdown, site, _ = _front(sections, changes.widget(published.steps))
    assert differences(markdown, site) is None
    words = " ".join(v for k, v in markdown if k == "text")
    regressed = sum(s.count("regression", "wrong-result", "stage-regression") for s in published.steps)
    fixed = sum(s.count("fix", "stage-fix") for s in published.steps)
    assert "Regressions (%d cells)" % regressed in words and "Fixes (%d cells)" % fixed in words
    f = Findings.of(published, title="published")
    pages = pages_of_report.build(f)
    assert {"grid", "modes", "failures", "claims", "builds", "install-errors"} <= {p.name for p in pages}
    known = {"index", *(p.name for p in pages)}
    for page in pages:
        markdown = markdown_facts(md_writer.write(page), page.name + ".md")
        site = facts(html_writer.write(page, known), "site/%s.html" % page.name)
        assert differences(markdown, site) is None, page.name

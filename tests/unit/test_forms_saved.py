"""The saved-programs page (``artifacts``), built once as a document: both forms carry the same facts, on a small
report with every product and on the published report's tables, and what a reader relies on is there: per product
its counts, the squares of its shares, and the releases in version order."""

from __future__ import annotations

import re
from pathlib import Path
from typing import List, Tuple

import pytest

from matrix.contract.products import COMPILE, PACKAGE, PRODUCTS, PROGRAM
from matrix.records import model, store
from matrix.report import artifacts, case_grids
from matrix.report import build as report
from matrix.report import markdown as md
from matrix.report.writers import html as html_writer
from matrix.report.writers import markdown as md_writer

from .forms_support import Fact, differences, facts, markdown_facts
from .test_aoti_compiles import COMPILED
from .test_aoti_compiles import _records as compile_records
from .test_aoti_loads import RELEASES, html_rows, table_rows
from .test_aoti_loads import _records as package_records

PUBLISHED = Path(__file__).resolve().parents[2] / "reports" / "latest"


def words(found: List[Fact]) -> str:
    return " ".join(value for kind, value in found if kind == "text")


def between(text: str, start: str, end: str = "") -> str:
    """The part of a page from ``start`` up to ``end`` (the rest where it is not there)."""
    part = text[text.index(start) :]
    return part[: part.index(end)] if end and end in part else part


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A report whose records hold every product, with its charts."""
    here = tmp_path_factory.mktemp("saved")
    records = [compile_records(here / "compiles"), package_records(here / "packages")]
    report.build_report([str(r) for r in records], str(here / "out"), charts=True)
    return here / "out"


def both(markdown: str, html: str) -> List[Fact]:
    """The page's facts, after checking that its two forms carry the same ones."""
    shown = markdown_facts(markdown, "artifacts.md")
    assert differences(shown, facts(html, "site/artifacts.html")) is None
    return shown


def test_the_saved_programs_page_says_the_same_in_both_forms(small: Path) -> None:
    markdown = (small / "artifacts.md").read_text(encoding="utf-8")
    shown = both(markdown, (small / "site" / "artifacts.html").read_text(encoding="utf-8"))
    said = words(shown)
    # One section per product, in the declarations' order, each opening with its own words and its counts.
    places = [said.index(p.title) for p in PRODUCTS]
    assert places == sorted(places)
    assert "15 artifacts saved on 5 builds of 5 releases, loaded on 6 builds of 6 releases." in said
    assert "15 packages compiled on 5 builds of 5 releases, loaded on 6 builds of 6 releases." in said
    assert "9 programs exported on 3 builds of 3 releases, compiled on 3 builds of 3 releases." in said
    for p in PRODUCTS:
        assert p.about in said
    # Each product's heatmaps are shown where they are, and the product's table is linked nowhere twice.
    images = [value for kind, value in shown if kind == "image"]
    assert images == [
        "file:charts/loads-strict.png", "file:charts/loads-non-strict.png", "file:charts/aoti-loads-strict.png",
        "file:charts/aoti-loads-non-strict.png", "file:charts/aoti-compiles-strict.png",
        "file:charts/aoti-compiles-non-strict.png",
    ]  # fmt: skip
    # The squares of the shares, the releases in version order across and down.
    packages = table_rows(between(markdown, "## " + PACKAGE.title, "## " + COMPILE.title))
    strict = packages[packages.index(["compiled on ↓ / loaded on →", *RELEASES]) :]
    assert strict[1] == ["2.3.1", "➖", "2/2", "2/2", "0/2", "0/2", "0/2"]
    assert strict[3] == ["2.6.0", "➖", "➖", "0/2", "2/2", "2/2", "1/2"]
    compiles = table_rows(between(markdown, "## " + COMPILE.title))
    assert compiles[0] == ["exported on ↓ / compiled on →", *COMPILED]
    assert compiles[1] == ["2.6.0", "2/2/2 of 2", "2/2/2 of 2", "1/1/1 of 1"]
    assert compiles[2][:2] == ["2.8.0", "·"]  # not compiled there: no record
    # The site draws the same squares under the same headers.
    site = (small / "site" / "artifacts.html").read_text(encoding="utf-8")
    rows = html_rows(site[site.index('id="%s-shares"' % artifacts.anchor(COMPILE)) :])
    assert rows[0] == compiles[0] and rows[1] == compiles[1]
    # Each case's package grids are drawn once, on its page, which the product's section links at those grids; the
    # legend of each product ends with the square of no record.
    links = [value for kind, value in shown if kind == "link"]
    grids = "#" + case_grids.anchor(PACKAGE)
    assert "page:cases/cond" + grids in links and "page:cases/mlp" + grids in links
    assert 'href="cases/cond.html%s"' % grids in site
    assert said.count("no record") >= len(PRODUCTS)


def published_page(tmp: Path) -> Tuple[str, str, model.Model]:
    judged = model.build(store.load([str(PUBLISHED)]))
    written = artifacts.write(str(tmp), judged.uses, charts=False)
    page = artifacts.page(judged.uses, written.charts, judged.known_issues)
    site = {"index", artifacts.NAME, *("cases/" + md.page_file(case) for case in set(judged.cells["case"]))}
    return md_writer.write(page), html_writer.write(page, site), judged


@pytest.mark.slow
def test_the_published_reports_saved_programs_page_says_the_same_in_both_forms(tmp_path: Path) -> None:
    if not (PUBLISHED / "loads.parquet").is_file():
        pytest.skip("no published report with saved programs")
    markdown, html, judged = published_page(tmp_path)
    said = words(both(markdown, html))
    for uses in artifacts.shown(judged.uses):
        p = uses.product
        programs = len(uses.table.drop_duplicates(["saved", "case", "mode", "with_set"]))
        assert re.search(r"%d %ss %s on \d+ builds? of \d+ releases?" % (programs, p.noun, p.made), said), p.name
        # Each mode's squares: a row per making build, a column per using build, in version order.
        part = between(markdown, "## " + p.title, "\n## ")
        rows = table_rows(part)
        corner = "%s on ↓ / %s on →" % (p.made, p.used)
        head = next(row for row in rows if row[0] == corner)
        assert head[1:] == [u for u in uses.used if u in head[1:]] and len(head) > 2
        made = []
        for row in rows[rows.index(head) + 1 :]:
            if row[0] not in uses.made:
                break
            made.append(row[0])
            assert len(row) == len(head)  # a square under every column
        assert made and made == [m for m in uses.made if m in made]
    # The saved programs' numbers a reader checks against the front page: 3941 programs, 7 load regressions.
    assert "3941 artifacts saved on 16 builds of 15 releases" in said
    assert "7 load regressions, affecting 949 artifacts" in said
    assert PROGRAM.title in said and PACKAGE.title in said and COMPILE.title in said

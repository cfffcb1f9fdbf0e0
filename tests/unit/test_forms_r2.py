"""The case pages, built once as documents: both forms carry the same facts, on a small report with every product
and on the published report, and what a reader relies on (order, counts, links) is there."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List

import pytest

from matrix.contract.products import PACKAGE, PRODUCTS
from matrix.report import build as report
from matrix.report import case_grids, case_page
from matrix.report.writers import glyph

from .forms_support import Fact, differences, facts, markdown_facts
from .test_aoti_compiles import _records as compile_records
from .test_aoti_loads import _records as package_records
from conftest import report_cell, write_by_release

PUBLISHED = Path(__file__).resolve().parents[2] / "reports" / "latest"


def both_forms(out: Path) -> Dict[str, List[Fact]]:
    """Each case page's facts, after checking that its two forms carry the same ones."""
    found = {}
    pages = sorted((out / "cases").glob("*.md"))
    assert pages
    for page in pages:
        name = "cases/" + page.name
        shown = markdown_facts(page.read_text(encoding="utf-8"), name)
        site = out / "site" / "cases" / (page.stem + ".html")
        assert differences(shown, facts(site.read_text(encoding="utf-8"), "site/" + name[:-3] + ".html")) is None
        found[page.stem] = shown
    return found


def words(found: List[Fact]) -> str:
    return " ".join(value for kind, value in found if kind == "text")


@pytest.fixture(scope="module")
def products(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A report whose records hold every product: saved programs, compiled packages and compiles."""
    here = tmp_path_factory.mktemp("products")
    records = [compile_records(here / "compiles"), package_records(here / "packages")]
    report.build_report([str(r) for r in records], str(here / "out"), charts=False)
    return here / "out"


def test_every_case_page_of_a_report_with_every_product_says_the_same_in_both_forms(products: Path) -> None:
    found = both_forms(products)
    cond = found["cond"]
    said = words(cond)
    # One section per product, in the declarations' order, each titled by what its rows and columns did.
    places = [said.index(title) for title in ("Saved × loaded", "Compiled × loaded", "Exported × compiled")]
    assert places == sorted(places)
    # A compile's outcome is drawn with the glyph of the same idea, and says its own word where that glyph is another
    # status's.
    tips = [value for kind, value in cond if kind == "tip"]
    assert "ok" in tips and "skipped" in tips
    assert any(t.startswith("load error: RuntimeError") for t in tips)
    # Upstream's promise comes from the product's declaration.
    assert "Upstream promises that a package compiled on 2.6 or later is loaded on every newer release" in said


def test_the_failures_under_a_grid_are_counted_the_most_common_first(products: Path) -> None:
    page = (products / "cases" / "cond.md").read_text(encoding="utf-8")
    section = page.split("## Compiled × loaded\n", 1)[1].split("\n## ", 1)[0]
    summary = re.search(r"<summary>strict: (\d+) failures?</summary>\n\n(.*?)\n\n</details>", section, re.S)
    assert summary is not None
    lines = [line for line in summary.group(2).splitlines() if line.startswith("- ")]
    pairs = [len(line.split(" — ", 1)[1].split(", ")) for line in lines]
    assert pairs == sorted(pairs, reverse=True) and sum(pairs) == int(summary.group(1))


def test_errors_are_grouped_by_first_line_and_ordered_export_first_then_stages_by_mode(tmp_path: Path) -> None:
    rows = [
        report_cell("2.4.1", "c", "fail", "non-strict", error_type="RuntimeError", error_message="boom\nat 1"),
        report_cell("2.5.0", "c", "fail", "non-strict", error_type="RuntimeError", error_message="boom\nat 2"),
        report_cell("2.4.1", "c", "case-error", "strict", error_type="ImportError", error_message="no module"),
        report_cell("2.5.0", "c", "pass", "strict", serialize_status="error", serialize_error="load: bad"),
    ]
    out = tmp_path / "out"
    report.build_report([str(write_by_release(tmp_path / "records", rows))], str(out), charts=False)
    page = both_forms(out)["c"]
    said = words(page)
    summaries = [
        s.strip() for s in re.findall(r"(?:strict|non-strict) · [^—]* — [0-9.–, ]+", said.split("Errors", 1)[1])
    ]
    assert summaries == [
        "strict · case-error · ImportError: no module — 2.4.1",
        "non-strict · fail · RuntimeError: boom — 2.4.1–2.5.0",  # one group: the messages' first lines agree
        "strict · save/load fails · load: bad — 2.5.0",
    ]
    # A case-error has the schema's one glyph, in both forms alike.
    assert glyph("case-error") + " case-error" in said


def test_the_grid_tooltip_script_is_the_sites_alone(products: Path) -> None:
    site = (products / "site" / "cases" / "cond.html").read_text(encoding="utf-8")
    assert '<div data-widget="%s"><script src="../tips.js"></script></div>' % case_page.TIPS in site
    assert (products / "site" / "tips.js").is_file()
    assert "tips.js" not in (products / "cases" / "cond.md").read_text(encoding="utf-8")


def test_a_product_without_rows_has_no_section() -> None:
    import pandas as pd

    from matrix.records import product_uses

    for uses in (product_uses.judge(p, pd.DataFrame()) for p in PRODUCTS):
        assert case_grids.section(uses.product, uses.table, uses.orders) is None


def test_the_front_pages_product_parts_say_the_same_in_both_forms(tmp_path: Path) -> None:
    from matrix.records import model, store
    from matrix.report import artifacts
    from matrix.report import document as d
    from matrix.report.writers import html as html_writer
    from matrix.report.writers import markdown as md_writer

    judged = model.build(store.load([str(package_records(tmp_path / "packages"))]))
    parts = (artifacts.epochs(judged.uses_of(PACKAGE).epochs, "package"), d.Items(artifacts.verdict(judged.promises)))
    page = d.Page("index", "products", parts)
    shown = markdown_facts(md_writer.write(page), "index.md")
    assert differences(shown, facts(html_writer.write(page, {"index"}), "site/index.html")) is None
    said = words(shown)
    assert "packages loaded" in said and "2.6.0–2.10.0 9 17 of 18" in said
    # Each verdict line links the section with every pair.
    links = [value for kind, value in shown if kind == "link"]
    lines = [line for v in judged.promises for line in artifacts.lines(v)]
    assert links.count("page:artifacts#" + artifacts.anchor(PACKAGE)) == len(lines) > 0
    assert "AOTInductor packages, backward promise" in said

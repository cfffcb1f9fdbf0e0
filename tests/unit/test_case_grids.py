"""A case's grids of a product's uses, from hand-written rows and a product declared here: every square under its
column, the failures under each mode's grid, and the legend, as a reader of the Markdown form sees them."""

from __future__ import annotations

import pandas as pd
from markdown_it import MarkdownIt

from matrix.contract.products import Product
from matrix.contract.schema import NO_RECORD
from matrix.report import case_grids
from matrix.report import document as d
from matrix.report.writers import markdown as md_writer

from .test_aoti_loads import html_rows, table_rows

ORDERS = (("2.6.0", "2.8.0"), ("2.6.0", "2.8.0", "2.10.0"))
THING = Product(
    name="things", kind="thing", keys=(), statuses=("pass", "fail", "not-applicable"), tried=("pass", "fail"),
    meaning={"pass": "ran", "fail": "did not", "not-applicable": "could not try"}, noun="thing", made="made",
    used="tried", about="A thing made on one release, tried on another.",
)  # fmt: skip


def rows() -> pd.DataFrame:
    found = [
        ("strict", "2.6.0", "2.8.0", "pass"),
        ("strict", "2.6.0", "2.10.0", "fail"),
        ("strict", "2.8.0", "2.10.0", "not-applicable"),
        ("non-strict", "2.8.0", "2.10.0", "pass"),
    ]
    frame = pd.DataFrame(found, columns=["mode", "saved", "loaded", "status"])
    return frame.assign(
        saved_torch_version=frame["saved"], torch_version=frame["loaded"], with_set="", failed_step=None,
        error_type=["", "RuntimeError", "", ""], error_message=["", "boom", "", ""],
    )  # fmt: skip


def drawn(*blocks: d.Block) -> str:
    return md_writer.write(d.Page("cases/x", "x", tuple(blocks)))


def test_each_mode_has_its_grid_with_every_square_under_its_release_and_its_failures() -> None:
    text = drawn(*case_grids.grids(THING, rows(), ORDERS))
    strict, non_strict = text.split("| non-strict: ")
    assert table_rows(strict) == [
        ["strict: made on ↓ tried on →", "2.8.0", "2.10.0"],  # a release with no record in the mode is left out
        ["2.6.0", "✅", "❌"],
        ["2.8.0", NO_RECORD, "➖"],  # no record; a use not tried
    ]
    html = MarkdownIt("commonmark").render(strict)
    assert "<summary>strict: 1 failure</summary>" in html
    assert "<li>fail: RuntimeError: boom — 2.6.0 → 2.10.0</li>" in html
    assert "strict, not tried (no failure): ➖ not-applicable: 1 use" in strict
    grid = table_rows("| non-strict: " + non_strict)
    assert grid == [["non-strict: made on ↓ tried on →", "2.10.0"], ["2.8.0", "✅"]]
    assert "<details>" not in non_strict  # a grid without failures lists none


def test_a_case_section_opens_with_the_products_own_words_and_ends_with_its_legend() -> None:
    section = case_grids.section(THING, rows(), ORDERS)
    assert section is not None and section.title == "Made × tried"
    text = drawn(section)
    assert "A thing made on one release, tried on another. Rows: the release that made the thing" in text
    assert case_grids.section(THING, rows().iloc[0:0], ORDERS) is None  # no rows: no section


def test_a_failure_names_its_first_pairs_and_counts_the_rest() -> None:
    pairs = [("2.6.0", "2.8.0"), ("2.6.0", "2.10.0"), ("2.8.0", "2.10.0")]
    assert case_grids.named(pairs, 2) == "2.6.0 → 2.8.0, 2.6.0 → 2.10.0 … (+1)"
    assert case_grids.named(pairs) == "2.6.0 → 2.8.0, 2.6.0 → 2.10.0, 2.8.0 → 2.10.0"
    assert case_grids.named(pairs, 3) == case_grids.named(pairs)


def test_the_legend_lists_each_status_then_the_square_of_no_record() -> None:
    text = drawn(case_grids.legend(THING))
    assert html_rows(MarkdownIt("commonmark").enable("table").render(text)) == [
        ["", "status", "meaning"],
        ["✅", "pass", "ran"],
        ["❌", "fail", "did not"],
        ["➖", "not-applicable", "could not try"],
        [NO_RECORD, "no record", "this thing was not tried on this release"],
    ]

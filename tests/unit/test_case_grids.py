"""A case's grids in Markdown, from hand-written rows: every square under its column, the failures under each
mode's grid, and the legend."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Sequence, Tuple

import pandas as pd
from markdown_it import MarkdownIt

from matrix.contract.products import Product
from matrix.contract.schema import NO_RECORD
from matrix.report import case_grids

from .test_aoti_loads import html_rows, table_rows

SYMBOLS = {"pass": "P", "fail": "F"}
ORDERS = (("2.6.0", "2.8.0"), ("2.6.0", "2.8.0", "2.10.0"))


@dataclass(frozen=True)
class Failed:
    text: str


def rows() -> pd.DataFrame:
    found = [
        ("strict", "2.6.0", "2.8.0", "pass"),
        ("strict", "2.6.0", "2.10.0", "fail"),
        ("strict", "2.8.0", "2.10.0", "mystery"),
        ("non-strict", "2.8.0", "2.10.0", "pass"),
    ]
    return pd.DataFrame(found, columns=["mode", "saved", "loaded", "status"])


def failures(found: pd.DataFrame) -> List[Tuple[Failed, Sequence[Tuple[str, str]]]]:
    failing = found[found["status"] == "fail"]
    pairs = [(str(r["saved"]), str(r["loaded"])) for r in failing.to_dict("records")]
    return [(Failed("fail: RuntimeError: boom"), pairs)] if pairs else []


def test_each_mode_has_its_grid_with_every_square_under_its_release_and_its_failures() -> None:
    text = case_grids.per_mode(rows(), ORDERS, "made on ↓ / used on →", SYMBOLS, failures, "failing use")
    strict, non_strict = text.split("non-strict: ")
    assert table_rows(strict) == [
        ["strict: made on ↓ / used on →", "2.8.0", "2.10.0"],  # a release with no record in the mode is left out
        ["2.6.0", "P", "F"],
        ["2.8.0", NO_RECORD, "?"],  # no record, and a status the symbols do not know
    ]
    html = MarkdownIt("commonmark").render(strict)
    assert "<summary>strict: 1 failing use</summary>" in html
    assert "<li>fail: RuntimeError: boom — 2.6.0 → 2.10.0</li>" in html
    assert table_rows("non-strict: " + non_strict) == [["non-strict: made on ↓ / used on →", "2.10.0"], ["2.8.0", "P"]]
    assert "<details>" not in non_strict  # a grid without failures lists none


def test_a_failure_names_its_first_pairs_and_counts_the_rest() -> None:
    pairs = [("2.6.0", "2.8.0"), ("2.6.0", "2.10.0"), ("2.8.0", "2.10.0")]
    assert case_grids.named(pairs, 2) == "2.6.0 → 2.8.0, 2.6.0 → 2.10.0 … (+1)"
    assert case_grids.named(pairs) == "2.6.0 → 2.8.0, 2.6.0 → 2.10.0, 2.8.0 → 2.10.0"
    assert case_grids.named(pairs, 3) == case_grids.named(pairs)


def test_the_legend_lists_each_status_then_the_square_of_no_record() -> None:
    product = Product(
        name="things", kind="thing", keys=(), statuses=("pass", "fail"), tried=("pass", "fail"),
        meaning={"pass": "ran", "fail": "did not"}, noun="thing", made="made", used="tried",
    )  # fmt: skip
    text = case_grids.legend_markdown(product, SYMBOLS, "status", "try")
    assert html_rows(MarkdownIt("commonmark").enable("table").render(text)) == [
        ["", "status", "meaning"],
        ["P", "pass", "ran"],
        ["F", "fail", "did not"],
        [NO_RECORD, "no record", "this release did not try this thing"],
    ]

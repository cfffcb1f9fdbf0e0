"""The saved × loaded share table, in Markdown: for saved programs (``artifacts.md``) and compiled packages alike.

One row per saving (or compiling) build, one column per loading build; each square the loads that
passed of those the loading build tried (a row of :func:`matrix.records.artifacts.heatmap`), or the
glyph of why none was tried. :func:`per_mode` lays out such tables one mode after another, each under its
heatmap, for the compiles' squares as well.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence

import pandas as pd

from matrix.contract.schema import MODES, NO_RECORD, LoadStatus
from matrix.report import charts as charting
from matrix.report import markdown as md

# Each load status's glyph, for programs and packages.
SYMBOLS = {status.value: status.symbol for status in LoadStatus}
# The glyph and word of each load status that did not try: "➖ not-applicable", "🔒 untrusted".
NOT_APPLICABLE, UNTRUSTED = (
    "%s %s" % (SYMBOLS[s.value], s.value) for s in (LoadStatus.NOT_APPLICABLE, LoadStatus.UNTRUSTED)
)


def table(
    shares: pd.DataFrame,
    saved_order: Sequence[str],
    loaded_order: Sequence[str],
    corner: str,
    draw: Optional[Callable[[Optional[Dict[str, Any]]], str]] = None,
) -> str:
    """One mode's squares, rows and columns in the orders given; ``corner`` names the two axes; ``draw`` writes a
    square (:func:`square` by default)."""
    draw = draw or square
    cells = {(row["saved"], row["loaded"]): row for row in shares.to_dict("records")}
    loaded = [label for label in loaded_order if label in set(shares["loaded"])]
    rows = [
        [md.text(saved)] + [draw(cells.get((saved, label))) for label in loaded]
        for saved in saved_order
        if saved in set(shares["saved"])
    ]
    return md.table([corner] + [md.text(label) for label in loaded], rows, ["l"] + ["c"] * len(loaded))


def square(row: Optional[Dict[str, Any]]) -> str:
    """``3/4``; where nothing was tried, untrusted where any load was, else not-applicable (no loader)."""
    if row is None:
        return NO_RECORD
    if not row["total"]:
        untried = LoadStatus.UNTRUSTED if row.get("untrusted") else LoadStatus.NOT_APPLICABLE
        return SYMBOLS[untried.value]
    return "%d/%d" % (row["passed"], row["total"])


def per_mode(
    by_mode: pd.DataFrame,
    drawn: Sequence[charting.Chart],
    chart_title: Callable[[str], str],
    squares: Callable[[pd.DataFrame], str],
    heading: str = "####",
) -> List[str]:
    """Each mode's part of a page: its ``heading``, its heatmap where one was drawn (the chart ``chart_title(mode)``)
    and ``squares`` of its rows of ``by_mode`` (a share table, one row per pair and mode)."""
    charts = {chart.title: chart for chart in drawn}
    parts = []
    for mode in [m for m in MODES if m in set(by_mode["mode"])]:
        parts.append("%s %s\n" % (heading, md.text(mode)))
        chart = charts.get(chart_title(mode))
        if chart is not None:
            parts.append("![%s](%s)\n" % (md.text(chart.title), chart.path))
        parts.append(squares(by_mode[by_mode["mode"] == mode]))
    return parts

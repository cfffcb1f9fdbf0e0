"""A case's grids of a product's uses, one per mode: a program per row, a release per column, the failures under
each; drawn alike for every product (:mod:`matrix.contract.products`).

The saved programs (saved on × loaded on), the compiled packages (compiled on × loaded on) and the compiles
(exported on × compiled on) are one layout: :func:`section` builds a product's part of a case page from its
declaration (what its rows and columns did, its noun, its outcomes and their meanings, upstream's promise, and
its own words: what one use is). The site's ``tips.js`` adds the row and the column to each square's
tooltip.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import pandas as pd

from matrix.contract.products import COMPILE, Product
from matrix.contract.schema import LOAD_STATUSES, MODES, NO_RECORD, STATUSES
from matrix.records import alike
from matrix.records import artifacts as uses_table
from matrix.records import failures as known
from matrix.report import document as d
from matrix.report import phrases as say

# Pairs (made → used) named per failure before the rest are counted; the longest failure quoted.
SHOWN_PAIRS = 8
QUOTED = 300


def shown(status: Any) -> Tuple[Optional[str], str]:
    """A product's outcome as a status the writers draw, and its kind: a load's own, a cell's, or a stage's as the
    compile's (products.COMPILE.symbols: ``skipped`` has its own glyph); an outcome of none of them draws as unknown."""
    if not isinstance(status, str):
        return None, "cell"
    if status in LOAD_STATUSES:
        return status, "load"
    return status, "compile" if status in COMPILE.symbols and status not in STATUSES else "cell"


def anchor(product: Product) -> str:
    return "%s-%s" % (product.made, product.used)


def section(product: Product, rows: pd.DataFrame, orders: Sequence[Sequence[str]]) -> Optional[d.Section]:
    """A case's part of ``product``'s uses (``rows``, its rows of the product's table; ``orders`` the making and the
    using labels in order): what one use is, a grid per mode, each with its failures, then what the glyphs mean; None
    without rows."""
    if rows.empty:
        return None
    intro = "%s Rows: the release that %s the %s; columns: the release that %s it; its failures under each grid." % (
        product.about, product.made, product.noun, product.used,
    )  # fmt: skip
    if product.promised_from:
        intro += " Upstream promises that a %s %s on %s or later is %s on every newer release, not on older ones." % (
            product.noun, product.made, product.promised_from, product.used,
        )  # fmt: skip
    blocks = [d.Paragraph(d.phrase(intro)), *grids(product, rows, orders)]
    blocks.append(d.Details("What the glyphs mean", (legend(product),)))
    # ``Saved × loaded``: what the rows' release did and what the columns' did.
    return d.Section(anchor(product), "%s × %s" % (product.made.capitalize(), product.used), tuple(blocks))


def grids(product: Product, rows: pd.DataFrame, orders: Sequence[Sequence[str]]) -> List[d.Block]:
    """A grid per mode of a case's uses of ``product``, each followed by its failures."""
    found: List[d.Block] = []
    for mode in [m for m in MODES if m in set(rows["mode"])]:
        found += grid(product, rows[rows["mode"] == mode], orders, mode, product.stage)
    return found


def grid(product: Product, mine: pd.DataFrame, orders: Sequence[Sequence[str]], mode: str, stage: str) -> List[d.Block]:
    """One mode's grid of a case's uses, then its failures (the most pairs first) and the uses not tried."""
    records = mine.to_dict("records")
    found = {(uses_table.program_label(r), r["loaded"]): r for r in records}
    columns = tuple(label for label in orders[1] if label in set(mine["loaded"]))
    squares = tuple(
        (d.phrase(program), tuple(square(product, found.get((program, label)), stage) for label in columns))
        for program in uses_table.program_rows(records, list(orders[0]))
    )
    corner = "%s: %s on ↓ %s on →" % (mode, product.made, product.used)
    blocks: List[d.Block] = [d.Grid(corner, columns, squares)]
    # Failures that read alike once cut are one line; the most common first, each one's pairs in the grid's order.
    place = {label: i for i, label in enumerate([*orders[0], *orders[1]])}
    cut = ((say.clip(text, QUOTED), pairs) for text, pairs in failures(product, mine, stage))
    groups = [
        (text, sorted(pairs, key=lambda pair: tuple(place.get(label, len(place)) for label in pair)))
        for text, pairs in alike.joined(cut)
    ]
    groups.sort(key=lambda group: -len(group[1]))
    if groups:
        items = tuple(d.Item(d.phrase(text, " — ", named(pairs, SHOWN_PAIRS))) for text, pairs in groups)
        summary = "%s: %s" % (mode, d.Count(sum(len(pairs) for _, pairs in groups), "failure").words)
        blocks.append(d.Details(summary, (d.Items(items),)))
    untried = [s for s in product.statuses if s not in product.tried and s != product.statuses[0]]
    counted = mine["status"].value_counts()
    said = [d.phrase(d.Mark(*shown(s)), ": ", d.Count(int(counted[s]), "use")) for s in untried if s in counted]
    if said:
        blocks.append(d.Paragraph(d.phrase("%s, not tried (no failure): " % mode, d.joined(said, "; "))))
    return blocks


def square(product: Product, row: Optional[Dict[str, Any]], stage: str) -> d.Square:
    """A use's square: its outcome's glyph and, for a failure, a short tooltip (its outcome, error class and the
    known issue it matches; the messages are listed under the grid), so that a page of many squares stays small."""
    if row is None:
        return d.Square(None)
    status, kind = shown(row["status"])
    if not failing(product, row["status"]):
        # An outcome drawn with another status's glyph, or with none of its own, says its own word.
        plain = status == row["status"] and status in (LOAD_STATUSES if kind == "load" else STATUSES)
        return d.Square(status, kind, tip="" if plain else str(row["status"]))
    failure = uses_table.Failure.of(row)
    issue = known.use_issue(row, stage)
    tip = ": ".join(p for p in (failure.status, failure.error_type) if p)
    return d.Square(status, kind, tip=tip + (" (%s)" % issue.words if issue is not None else ""))


def failing(product: Product, status: Any) -> bool:
    """Whether a use tried the product and did not pass."""
    return status in product.tried and status != product.statuses[0]


def failures(product: Product, rows: pd.DataFrame, stage: str) -> List[Tuple[str, List[Tuple[str, ...]]]]:
    """The failures of a case's uses in one mode, grouped (:func:`matrix.records.artifacts.errors`), each with the
    (made, used) pairs it hit; those a known issue labels apart, their text naming it."""
    issues = [known.use_issue(row, stage) for row in rows.to_dict("records")]
    ids = pd.Series([issue.id if issue else "" for issue in issues], index=rows.index)
    by_id = {issue.id: issue for issue in issues if issue is not None}
    found = []
    for key in ["", *by_id]:
        named_issue = " (%s)" % by_id[key].words if key else ""
        for failure, pairs in uses_table.errors(rows[ids == key], product):
            found.append((failure.text + named_issue, pairs))
    return found


def named(pairs: Sequence[Tuple[str, ...]], shown_pairs: Optional[int] = None) -> str:
    """``2.8.0 → 2.10.0, …``: the first ``shown_pairs`` pairs (every one where None), the rest counted."""
    text = ", ".join("%s → %s" % pair for pair in pairs[:shown_pairs])
    if shown_pairs is not None and len(pairs) > shown_pairs:
        text += " … (+%d)" % (len(pairs) - shown_pairs)
    return text


def legend(product: Product) -> d.Table:
    """What a grid of ``product``'s uses shows: each outcome's glyph, name and meaning, then the square of no
    record."""
    rows = [(d.phrase(d.Mark(*shown(s), named=False)), s, product.meaning[s]) for s in product.statuses]
    rows.append((d.phrase(NO_RECORD), "no record", "this %s was not %s on this release" % (product.noun, product.used)))
    return say.legend(rows)

"""A case's grids of a product's uses, one per mode: a program per row, a release per column, the failures under
each; drawn alike for every product (:mod:`matrix.contract.products`).

The saved programs (saved on × loaded on), the compiled packages (compiled on × loaded on) and the compiles
(exported on × compiled on) are one layout: :func:`section` builds a product's part of a case page from its
declaration (what its rows and columns did, its noun, its outcomes and their meanings, upstream's promise) and
the few words of its own in :data:`WORDS`. The site's ``tips.js`` adds the row and the column to each square's
tooltip.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Protocol, Sequence, Tuple

import pandas as pd

from matrix.contract.products import COMPILE, PACKAGE, PROGRAM, Product
from matrix.contract.schema import AOTI_SYMBOL, LOAD_STATUSES, MODES, NO_RECORD, STATUSES
from matrix.records import alike
from matrix.records import artifacts as uses_table
from matrix.records import failures as known
from matrix.report import document as d
from matrix.report import markdown as md

# Pairs (made → used) named per failure before the rest are counted; the longest failure quoted.
SHOWN_PAIRS = 8
QUOTED = 300
# Each product's own words: the known-issue stage its failures are matched under, and what one use is.
WORDS: Dict[str, Tuple[str, str]] = {
    PROGRAM.name: (
        "load",
        "The exported program, saved with torch.export.save with its inputs and eager's outputs (run --artifacts),"
        " loaded on another release in a process of its own and run on those inputs.",
    ),
    PACKAGE.name: (
        "aoti",
        "The AOTInductor package compiled from the exported program (run with --stages …,aoti), loaded on another"
        " release in a process of its own and run on the saved inputs.",
    ),
    COMPILE.name: (
        "aoti",
        "The exported program saved on one release, compiled with AOTInductor on a newer one (load --aoti), its"
        " package loaded there in a process that never compiled and run on the saved inputs. A square without a"
        " record: that release compiled none of them (load --aoti-from nearest-and-oldest compiles on each release"
        " the programs of the newest older release and of the oldest of its serializer epoch only).",
    ),
}


Uses = Tuple[Tuple[Product, pd.DataFrame, Tuple[List[str], List[str]]], ...]


def uses(judged: Any) -> Uses:
    """Each product's table in the report's model (``records.model.Model``), with its making and using labels in
    order."""
    return (
        (PROGRAM, judged.loads, judged.load_orders),
        (PACKAGE, judged.packages.table, judged.packages.orders),
        (COMPILE, judged.compiles.table, judged.compiles.orders),
    )


def of_case(found: Uses, case: str) -> Uses:
    """Each product's rows of one case."""
    return tuple((p, table[table["case"] == case] if not table.empty else table, orders) for p, table, orders in found)


def shown(status: Any) -> Tuple[Optional[str], str]:
    """A product's outcome as a status the writers draw, and its kind: a load's own, a cell's, or a stage's as the
    compile's (schema.AOTI_SYMBOL: ``skipped`` has its own glyph); an outcome of none of them draws as unknown."""
    if not isinstance(status, str):
        return None, "cell"
    if status in LOAD_STATUSES:
        return status, "load"
    return status, "compile" if status in AOTI_SYMBOL and status not in STATUSES else "cell"


def title(product: Product) -> str:
    """``Saved × loaded``: what the rows' release did and what the columns' did."""
    return "%s × %s" % (product.made.capitalize(), product.used)


def anchor(product: Product) -> str:
    return "%s-%s" % (product.made, product.used)


def section(product: Product, rows: pd.DataFrame, orders: Sequence[Sequence[str]]) -> Optional[d.Section]:
    """A case's part of ``product``'s uses (``rows``, its rows of the product's table; ``orders`` the making and the
    using labels in order): a grid per mode, each with its failures, then what the glyphs mean; None without rows."""
    if rows.empty:
        return None
    stage, words = WORDS[product.name]
    intro = "%s Rows: the release that %s the %s; columns: the release that %s it; its failures under each grid." % (
        words, product.made, product.noun, product.used,
    )  # fmt: skip
    if product.promised_from:
        intro += " Upstream promises that a %s %s on %s or later is %s on every newer release, not on older ones." % (
            product.noun, product.made, product.promised_from, product.used,
        )  # fmt: skip
    blocks: List[d.Block] = [d.Paragraph(d.phrase(intro))]
    for mode in [m for m in MODES if m in set(rows["mode"])]:
        blocks += grid(product, rows[rows["mode"] == mode], orders, mode, stage)
    blocks.append(d.Details("What the glyphs mean", (legend(product),)))
    return d.Section(anchor(product), title(product), tuple(blocks))


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
    groups = [
        (text, sorted(pairs, key=lambda pair: tuple(place.get(label, len(place)) for label in pair)))
        for text, pairs in alike.joined((_clip(text, QUOTED), pairs) for text, pairs in failures(product, mine, stage))
    ]
    groups.sort(key=lambda group: -len(group[1]))
    if groups:
        items = tuple(d.Item(d.phrase(text, " — ", named(pairs, SHOWN_PAIRS))) for text, pairs in groups)
        summary = "%s: %s" % (mode, d.Count(sum(len(pairs) for _, pairs in groups), "failure").words)
        blocks.append(d.Details(summary, (d.Items(items),)))
    untried = [s for s in product.statuses if s not in product.tried and s != product.statuses[0]]
    counted = [(s, int((mine["status"] == s).sum())) for s in untried]
    said = [d.phrase(d.Mark(*shown(s)), ": ", d.Count(n, "use")) for s, n in counted if n]
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
    if rows.empty:
        return []
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
    rows = [
        (d.phrase(d.Mark(*shown(s), named=False)), d.phrase(s), d.phrase(product.meaning[s])) for s in product.statuses
    ]
    no_record = "this %s was not %s on this release" % (product.noun, product.used)
    rows.append((d.phrase(NO_RECORD), d.phrase("no record"), d.phrase(no_record)))
    return d.Table((d.Column(""), d.Column("status"), d.Column("meaning")), tuple(rows))


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# The Markdown of artifacts.md's grids, until that page is a document too.
class Failure(Protocol):
    @property
    def text(self) -> str: ...


Pair = Tuple[str, ...]


def per_mode(
    rows: pd.DataFrame,
    orders: Sequence[Sequence[str]],
    corner: str,
    symbols: Mapping[str, str],
    failures: Callable[[pd.DataFrame], Sequence[Tuple[Failure, Sequence[Pair]]]],
    failing: str,
    shown: Optional[int] = None,
    many: str = "",
) -> str:
    """One grid per mode of a case's ``rows``, each followed by the failures it shows.

    ``orders``: the rows' releases and the columns', in order; ``corner`` names the two axes; ``symbols`` are the
    statuses' glyphs; ``failures`` groups a mode's rows by failure, each with the pairs it
    hit (at most ``shown`` named, every one where None); ``failing`` is what the summary counts (``failing
    compile``), ``many`` its plural where it is not ``failing`` + s.
    """
    parts = []
    for mode in [m for m in MODES if m in set(rows["mode"])]:
        mine = rows[rows["mode"] == mode]
        records = mine.to_dict("records")
        status_of = {(uses_table.program_label(r), r["loaded"]): r["status"] for r in records}
        columns = [label for label in orders[1] if label in set(mine["loaded"])]
        grid = [
            [md.text(program)] + [glyph(symbols, status_of.get((program, label))) for label in columns]
            for program in uses_table.program_rows(records, list(orders[0]))
        ]
        header = "%s: %s" % (mode, corner)
        parts.append(md.table([md.text(header)] + [md.text(label) for label in columns], grid,
                              ["l"] + ["c"] * len(columns)))  # fmt: skip
        groups = failures(mine)
        if groups:
            said = alike.joined((md.text(failure.text, limit=300), pairs) for failure, pairs in groups)
            lines = ["- %s — %s" % (text, md.text(named(pairs, shown))) for text, pairs in said]
            summary = "%s: %s" % (mode, md.plural(sum(len(pairs) for _, pairs in groups), failing, many))
            parts.append(md.details(summary, "\n".join(lines)))
    return "\n".join(parts)


def glyph(symbols: Mapping[str, str], status: Any) -> str:
    """A square's glyph: its status's symbol, ``?`` for a status not in ``symbols``, the no-record mark for none."""
    return symbols.get(status, "?") if isinstance(status, str) else NO_RECORD


def legend_markdown(product: Product, symbols: Mapping[str, str], name: str = "status", verb: str = "load") -> str:
    """What a grid of ``product``'s uses shows: each of its statuses (a ``name``) with its symbol and meaning, then the
    no-record mark: this release did not ``verb`` this product."""
    rows = [[symbols[s], md.text(s), md.text(product.meaning[s])] for s in product.statuses]
    rows.append([NO_RECORD, "no record", "this release did not %s this %s" % (verb, product.noun)])
    return md.table(["", name, "meaning"], rows)

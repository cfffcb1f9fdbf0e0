"""A case's grids of outcomes in Markdown, one per mode: a program per row, a release per column, the failures
under each.

The saved programs' grid (saved on × loaded on, :mod:`matrix.report.artifacts`), the compiled packages' grid
(compiled on × loaded on, :mod:`matrix.report.aoti_loads`) and the compiles' grid (exported on × compiled on,
:func:`matrix.report.aoti_loads.compile_grids`) are this one layout, with one kind of legend;
each page says what its rows and columns mean, its statuses' glyphs and meanings and which of its records are
failures.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Protocol, Sequence, Tuple

import pandas as pd

from matrix.contract.products import Product
from matrix.contract.schema import MODES, NO_RECORD
from matrix.records import alike
from matrix.records import artifacts as loads_table
from matrix.report import markdown as md

# A row's release and a column's, as a failure lists where it was seen.
Pair = Tuple[str, ...]


class Failure(Protocol):
    """A failure as the records judge it; pages quote its text."""

    @property
    def text(self) -> str: ...


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
        status_of = {(loads_table.program_label(r), r["loaded"]): r["status"] for r in records}
        columns = [label for label in orders[1] if label in set(mine["loaded"])]
        grid = [
            [md.text(program)] + [glyph(symbols, status_of.get((program, label))) for label in columns]
            for program in loads_table.program_rows(records, list(orders[0]))
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


def named(pairs: Sequence[Pair], shown: Optional[int] = None) -> str:
    """``2.8.0 → 2.10.0, …``: the first ``shown`` pairs (every one where None), the rest counted."""
    text = ", ".join("%s → %s" % pair for pair in pairs[:shown])
    if shown is not None and len(pairs) > shown:
        text += " … (+%d)" % (len(pairs) - shown)
    return text


def glyph(symbols: Mapping[str, str], status: Any) -> str:
    """A square's glyph: its status's symbol, ``?`` for a status not in ``symbols``, the no-record mark for none."""
    return symbols.get(status, "?") if isinstance(status, str) else NO_RECORD


def legend(product: Product, symbols: Mapping[str, str], name: str = "status", verb: str = "load") -> str:
    """What a grid of ``product``'s uses shows: each of its statuses (a ``name``) with its symbol and meaning, then the
    no-record mark: this release did not ``verb`` this product."""
    rows = [[symbols[s], md.text(s), md.text(product.meaning[s])] for s in product.statuses]
    rows.append([NO_RECORD, "no record", "this release did not %s this %s" % (verb, product.noun)])
    return md.table(["", name, "meaning"], rows)

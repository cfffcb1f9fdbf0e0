"""The legend of a load's glyphs, which the site's case pages draw beside their grids; the glossary
(:func:`matrix.report.glossary.page`) has every glyph's."""

from __future__ import annotations

from typing import List, Sequence

from matrix.contract.schema import LOAD_STATUSES, LoadStatus
from matrix.report.site.markup import NO_RECORD, load_status, text

LOADS_ID = "legend-loads"  # the anchor of the load statuses' legend, on every page that shows it


def _rows(rows: Sequence[Sequence[str]]) -> str:
    return "".join("<tr><td>%s</td><th>%s</th><td>%s</td></tr>" % tuple(row) for row in rows)


def loads() -> str:
    """A load's statuses (a program saved on one release, loaded on another): glyph, name, meaning."""
    rows: List[List[str]] = []
    for value in LOAD_STATUSES:
        css, glyph = load_status(value)
        rows.append(['<span class="%s">%s</span>' % (css, glyph), text(value), text(LoadStatus(value).meaning)])
    rows.append(['<span class="st">%s</span>' % NO_RECORD, "no record", "this release did not load this program"])
    return '<table class="legend" id="%s">%s</table>' % (LOADS_ID, _rows(rows))

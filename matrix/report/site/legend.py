"""The site's legends: every glyph and mark its pages draw, with its name and meaning.

The glyphs are :mod:`.markup`'s (a cell's status, a load's status, no record); the stage marks and their
meanings are the Markdown's (:data:`matrix.report.markdown.STAGE_MARKS`), so that both views mark a pass whose
program does not save or decompose the same way. The meanings come from the schema.
"""

from __future__ import annotations

from typing import List, Sequence

from matrix.contract.schema import LOAD_STATUSES, STAGES, STATUSES, LoadStatus, NoCell, Status
from matrix.report import markdown as md
from matrix.report.site.markup import GLYPHS, NO_RECORD, load_status, text

LOADS_ID = "legend-loads"  # the anchor of the load statuses' legend, on every page that shows it


def mode_letter(mode: str) -> str:
    """The letter that heads a mode's column in the front page's grid: ``S`` for strict, ``N`` for non-strict."""
    return mode[:1].upper()


def _rows(rows: Sequence[Sequence[str]]) -> str:
    return "".join("<tr><td>%s</td><th>%s</th><td>%s</td></tr>" % tuple(row) for row in rows)


def statuses() -> str:
    """A cell's statuses: glyph on its colour, name, meaning; then no record."""
    rows = [
        ['<span class="st s%d">%s</span>' % (i, GLYPHS[s.value]), text(s.value), text(s.meaning)]
        for i, s in enumerate(Status)
    ]
    rows.append(['<span class="st">%s</span>' % NO_RECORD, "no record", "the cell was not run (or its environment"
                 " failed to install)"])  # fmt: skip
    return '<table class="legend">%s</table>' % _rows(rows)


def marks() -> str:
    """The marks after a status glyph (a stage that failed on the exported program) and the other signs."""
    rows = [[md.STAGE_MARKS[stage], text("%s fails" % label), text(md.STAGE_MEANING[stage])] for stage, label in STAGES]
    rows.append(
        [
            '<span class="st s%d staged">%s</span>' % (STATUSES.index(Status.PASS.value), GLYPHS[Status.PASS.value]),
            "a later stage fails",
            "in the grid, a cell outlined in red: it exported, but its program failed save/load, decomposition or"
            " AOTInductor; its tooltip says which, and the filter <em>any failure</em> finds it",
        ]
    )
    rows += [
        ["→", "changed to", "from the older release (left) to the newer one (right)"],
        [text(str(NoCell.ENV_ERROR)), "not installed", "the libraries this case needs failed to install there"],
        ['<span class="bar" style="width:30px"></span>', "pass rate", "a bar as long as the share of cells that pass"],
    ]
    return '<table class="legend">%s</table>' % _rows(rows)


def modes(names: Sequence[str]) -> str:
    """The letters that head the grid's mode columns."""
    rows = [[text(mode_letter(m)), text(m), "the cell in %s mode" % text(m)] for m in names]
    return '<table class="legend">%s</table>' % _rows(rows)


def loads() -> str:
    """A load's statuses (a program saved on one release, loaded on another): glyph, name, meaning."""
    rows: List[List[str]] = []
    for value in LOAD_STATUSES:
        css, glyph = load_status(value)
        rows.append(['<span class="%s">%s</span>' % (css, glyph), text(value), text(LoadStatus(value).meaning)])
    rows.append(['<span class="st">%s</span>' % NO_RECORD, "no record", "this release did not load this program"])
    return '<table class="legend" id="%s">%s</table>' % (LOADS_ID, _rows(rows))


def section(mode_names: Sequence[str], glossary: str) -> str:
    """The front page's legend: the grid's glyphs and letters, the marks and signs, the loads' glyphs."""
    return "\n".join(
        [
            '<section id="legend"><h2>Legend</h2>',
            '<p>Every glyph the pages draw. What the words mean: the <a href="%s">glossary</a>.</p>' % text(glossary),
            '<div class="legends"><div><h3>Cell statuses</h3>%s</div>' % statuses(),
            "<div><h3>Columns of the grid</h3>%s<h3>Marks and signs</h3>%s</div>" % (modes(mode_names), marks()),
            "<div><h3>Loads of saved programs</h3>%s</div></div>" % loads(),
            "</section>",
        ]
    )

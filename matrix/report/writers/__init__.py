"""The writers of a report page (:mod:`matrix.report.document`): Markdown and the site's HTML.

A writer draws a page as it is built: it escapes, marks up and resolves links, and decides nothing of what the
page says. Neither imports a builder.
"""

from __future__ import annotations

import posixpath
from typing import Callable

from matrix.contract.products import COMPILE
from matrix.contract.schema import (
    LOAD_STATUSES,
    NO_RECORD,
    STAGE_ERROR,
    STAGE_MISMATCH,
    STAGE_OK,
    STAGE_SKIPPED,
    STATUSES,
    LoadStatus,
    Status,
)
from matrix.report.document import Target

KINDS = {"cell": Status, "load": LoadStatus}
# A compile's outcome takes the colour of the load status that says the same of a program; its glyph is its product's
# (products.COMPILE.symbols), a skipped compile's its own.
COMPILE_AS_LOAD = {
    STAGE_OK: "pass", STAGE_MISMATCH: "mismatch", STAGE_ERROR: "run-error", STAGE_SKIPPED: "not-applicable",
}  # fmt: skip


def glyph(status: object, kind: str = "cell") -> str:
    """The one glyph of a status (the schema's), ``?`` for a value the schema does not know, a dot for no record.
    ``kind``: ``cell`` (Status), ``load`` (LoadStatus) or ``compile`` (products.COMPILE.statuses)."""
    if not isinstance(status, str):
        return NO_RECORD
    if kind == "compile":
        return COMPILE.symbols.get(status, "?")
    try:
        return KINDS[kind](status).symbol
    except ValueError:
        return "?"


def colour(status: object, kind: str = "cell") -> str:
    """The site's CSS class of a status's colour: ``s<i>`` for cell status i of STATUSES, ``l<i>`` for load status i
    of LOAD_STATUSES (a compile's outcome as the load status it reads as); "" for a value the schema does not know."""
    if kind == "compile":
        status, kind = COMPILE_AS_LOAD.get(str(status), status), "load"
    known = LOAD_STATUSES if kind == "load" else STATUSES
    return "%s%d" % ("l" if kind == "load" else "s", known.index(status)) if status in known else ""


def resolve(target: Target, here: str, page_path: Callable[[str], str]) -> str:
    """The address of ``target`` from the page at ``here`` (a path relative to the report's folder, as a page's or
    a file's target is); ``page_path`` maps a page's name to its file."""
    if target.url is not None:
        address = target.url
    else:
        path = page_path(target.page) if target.page is not None else target.file
        address = posixpath.relpath(path, posixpath.dirname(here) or ".") if path is not None else ""
    return address + ("#" + target.anchor if target.anchor else "")

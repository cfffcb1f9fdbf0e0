"""The writers of a report page (:mod:`matrix.report.document`): Markdown and the site's HTML.

A writer draws a page as it is built: it escapes, marks up and resolves links, and decides nothing of what the
page says. Neither imports a builder.
"""

from __future__ import annotations

import posixpath
from typing import Callable

from matrix.contract.schema import NO_RECORD, LoadStatus, Status
from matrix.report.document import Target

KINDS = {"cell": Status, "load": LoadStatus}


def glyph(status: object, kind: str = "cell") -> str:
    """The one glyph of a status (the schema's), ``?`` for a value the schema does not know, a dot for no record."""
    if not isinstance(status, str):
        return NO_RECORD
    try:
        return KINDS[kind](status).symbol
    except ValueError:
        return "?"


def relative(path: str, from_page_path: str) -> str:
    """``path`` (relative to the report's folder) as seen from the file ``from_page_path`` (also relative to it)."""
    return posixpath.relpath(path, posixpath.dirname(from_page_path) or ".")


def resolve(target: Target, here: str, page_path: Callable[[str], str]) -> str:
    """The address of ``target`` from the page at ``here``; ``page_path`` maps a page's name to its file."""
    if target.url is not None:
        address = target.url
    elif target.page is not None:
        address = relative(page_path(target.page), here)
    elif target.file is not None:
        address = relative(target.file, here)
    else:
        address = ""
    return address + ("#" + target.anchor if target.anchor else "")

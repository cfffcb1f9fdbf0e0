"""Phrases the report's pages share, as document parts: a case and its page, an error, a transition and its page,
a status, a count, a table.

Each is worded once here, so that every page that names a case, an error, a transition or a status names it alike,
and both forms of a page link them to the same page.
"""

from __future__ import annotations

import math
import re
from typing import Any, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from matrix.report import document as d
from matrix.report import markdown as md

# Every page but the front page leads back to it.
BACK = d.link("← back to the matrix", d.page("index"))


def plain(value: Any) -> str:
    """Record text, or "" for None and NaN (a table's missing value)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)


def listed(value: Any) -> List[str]:
    """A list field of a record (tags, missing capabilities) as text; anything else is empty."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return [str(v) for v in value]
    return []


def first_of(values: Sequence[str], shown: int = 3) -> str:
    """Names in their order, after ``shown`` of them a count of the rest: ``a, b, c and 2 more``."""
    return ", ".join(values[:shown]) + (" and %d more" % (len(values) - shown) if len(values) > shown else "")


def clip(value: Any, limit: Optional[int]) -> str:
    """Record text in one line (its line breaks shown as ``⏎``), cut to ``limit`` characters, the cut marked."""
    said = re.sub(r"\r\n|\r|\n", " ⏎ ", plain(value))
    return said if limit is None or len(said) <= limit else said[: limit - 1] + "…"


def case_page(case: Any, anchor: str = "") -> d.Target:
    """A case's page, or a section of it."""
    return d.page("cases/" + md.page_file(str(case)), anchor)


def case(name: Any, with_set: Any = None) -> d.Phrase:
    """A case linked to its page, then the ``--with`` set its cells ran with where they had one: ``case [pkg==1.0]``."""
    named = with_set if isinstance(with_set, str) and with_set else None
    return d.phrase(d.link(str(name), case_page(name)), " [%s]" % named if named else None)


def error(kind: Any, message: Any, limit: Optional[int] = 300) -> d.Phrase:
    """``KeyError: the message``, the message cut to ``limit``; either part may be missing."""
    head = d.Code(kind) if isinstance(kind, str) and kind else None
    said = clip(message, limit) if isinstance(message, str) else ""
    return d.phrase(head, ": " if head and said else None, said)


def transition_name(before: Any, after: Any) -> str:
    """The page of the transition between two releases."""
    return md.transition_page(before, after)[: -len(".md")]


def between(before: Any, after: Any, variant_before: Any = None, variant: Any = None, anchor: str = "") -> d.Link:
    """``2.4.1 → 2.5.1`` (with the variants where the two differ), linked to the transition's page."""
    title = md.transition_title(before, after, variant_before, variant)
    return d.link(title, d.page(transition_name(before, after), anchor))


def transition(move: Any, anchor: str = "") -> d.Link:
    """A transition row's releases, linked to its page (:func:`between`)."""
    return between(move["before"], move["after"], move.get("variant_before"), move.get("variant"), anchor)


def status(value: Any) -> d.Mark:
    """A cell status, its glyph and its name; no record where there is none."""
    return d.Mark(value if isinstance(value, str) else None)


def statuses(values: Iterable[Any]) -> d.Phrase:
    return d.joined(d.phrase(status(v)) for v in dict.fromkeys(values))


def table(headers: Sequence[str], rows: Iterable[Sequence[d.Phrase]], align: str = "", **options: Any) -> d.Table:
    """A table of ``rows`` under ``headers``; ``align``: a letter per column (``l``, ``r``, ``c``), else ``l``."""
    columns = tuple(d.Column(h, align[i] if i < len(align) else "l") for i, h in enumerate(headers))
    return d.Table(columns, tuple(tuple(row) for row in rows), **options)


def legend(rows: Iterable[Tuple[d.Phrase, str, str]], name: str = "status") -> d.Table:
    """A table of glyphs: each glyph (a phrase), its name and what it means."""
    return table(["", name, "meaning"], ((glyph, d.phrase(said), d.phrase(meaning)) for glyph, said, meaning in rows))


def count(number: int, one: str, many: str = "") -> d.Count:
    return d.Count(int(number), one, many)


def prose(words: str) -> d.Phrase:
    """The report's or a docstring's words, what they quote between backticks as code."""
    return d.phrase(*(d.Code(part) if i % 2 else part for i, part in enumerate(re.split(r"`([^`]+)`", words))))

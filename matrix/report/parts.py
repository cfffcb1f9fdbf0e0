"""The report's recurring phrases as document parts: a case with its page, a transition with its page, a status.

Each is said once here, so that every builder names a case, a release transition or a status alike, and both forms
of a page link them to the same page.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from matrix.report import document as d
from matrix.report import markdown as md


def case_page(case: Any) -> d.Target:
    return d.page("cases/" + md.page_file(str(case)))


def case(name: Any, with_set: Any = None) -> d.Phrase:
    """A case linked to its page, then the ``--with`` set its cells ran with where they had one."""
    named = with_set if isinstance(with_set, str) and with_set else None
    return d.phrase(d.link(str(name), case_page(name)), " [%s]" % named if named else None)


def transition_page(before: Any, after: Any) -> d.Target:
    return d.page(md.transition_page(before, after)[: -len(".md")])


def transition(before: Any, after: Any, variant_before: Any = None, variant: Any = None) -> d.Link:
    """``2.4.1 → 2.5.1`` linked to the transition's page."""
    return d.link(md.transition_title(before, after, variant_before, variant), transition_page(before, after))


def status(value: Any) -> d.Mark:
    """A cell status, its glyph and name."""
    return d.Mark(value if isinstance(value, str) else None)


def statuses(values: Iterable[Any]) -> d.Phrase:
    return d.joined(d.phrase(status(v)) for v in dict.fromkeys(values))


def table(headers: Sequence[str], rows: Iterable[Sequence[d.Phrase]], align: str = "", **options: Any) -> d.Table:
    """A table of ``rows`` under ``headers``; ``align``: a letter per column (``l``, ``r``, ``c``), else ``l``."""
    columns = tuple(d.Column(h, align[i] if i < len(align) else "l") for i, h in enumerate(headers))
    return d.Table(columns, tuple(tuple(row) for row in rows), **options)


def count(number: int, one: str, many: str = "") -> d.Count:
    return d.Count(int(number), one, many)

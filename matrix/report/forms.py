"""The two markups a verdict is said in: Markdown for the pages, HTML for the site (``markup.HTML``).

A verdict that both say alike is worded once, over a :class:`Form`; each form only marks it up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from matrix.report import markdown as md


@dataclass(frozen=True)
class Form:
    """How record text, the report's own words, code, links and list items are marked up."""

    text: Callable[[Any], str]  # record text, escaped
    clipped: Callable[[Any, int], str]  # record text cut to a length (the cut marked), escaped
    said: Callable[[str], str]  # the report's own words (counts in words): Markdown takes them as they are
    code: Callable[[Any], str]
    status: Callable[[Any], str]  # a cell status, marked and named
    strong: str  # a verdict's title
    item: str  # one verdict line
    link: Callable[[str, str], str]  # (label, target)


MARKDOWN = Form(
    text=md.text,
    clipped=md.text,
    said=str,
    code=md.code,
    status=md.status,
    strong="**%s**",
    item="- %s",
    link=md.link,
)

"""The site's words for a known upstream issue: a verdict's line, and a failure's label with its link."""

from __future__ import annotations

from typing import Sequence

from matrix.records.failures import Sighting
from matrix.records.known_issues import KnownIssue
from matrix.report.known_issues import verdict_words
from matrix.report.site.markup import text


def linked(issue: KnownIssue, said: str) -> str:
    """``said`` (plain text) escaped, the issue's reference in it turned into a link to the issue."""
    escaped = text(said)
    if not issue.link:
        return escaped
    anchor = '<a href="%s">%s</a>' % (text(issue.link), text(issue.reference))
    return escaped.replace(text(issue.reference), anchor, 1)


def stage_paragraph(found: Sequence[Sighting], stage: str) -> str:
    """A paragraph under a table of ``stage``'s failures naming the known upstream issues among them; "" for none."""
    mine = [s for s in found if stage in s.issue.stages]
    if not mine:
        return ""
    items = "".join("<li>%s</li>" % linked(s.issue, verdict_words(s)) for s in mine)
    return "<p>Known upstream issues behind these failures:</p><ul>%s</ul>" % items

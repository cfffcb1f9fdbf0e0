"""What the front page says of the products, as document parts: each product's epochs as a table, and the verdict on
upstream's promise for the compiled packages and the compiles, each line linking the page with every pair.

The epochs are :mod:`matrix.records.epochs`' and the verdict :mod:`matrix.records.aoti_loads`' (judged once, held
by the model); the verdict's words are :func:`matrix.report.aoti_verdict.lines`'. The front page's builder takes these
parts as they are.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

from matrix.records.epochs import Epoch
from matrix.report import aoti_verdict
from matrix.report import document as d
from matrix.report import markdown as md

# Cases named per epoch before the rest are counted; the longest failure quoted where an epoch starts.
SHOWN_EXCEPTIONS = 3
CAUSE_LIMIT = 120
# How an epoch's ``backward`` reads (records.epochs.BACKWARD).
OLDER_READ_NEWER = {"all": "yes", "some": "partly", "none": "no", "untried": "–"}
COLUMNS = (("epoch", "l"), ("%ss loaded", "r"), ("loads that match", "r"), ("older read newer", "l"),
           ("exceptions", "l"), ("older %ss fail", "l"))  # fmt: skip


def epochs(found: Sequence[Epoch], noun: str = "program") -> d.Table:
    """The epochs of a product whose items are ``noun`` (``program``, ``package``), a row each, oldest first; each
    exception's case linked to its page."""
    columns = tuple(d.Column(label % noun if "%s" in label else label, align) for label, align in COLUMNS)
    return d.Table(
        columns, tuple(_epoch(e) for e in found), empty="No %s was loaded on a release that made one." % noun
    )


def _epoch(e: Epoch) -> Tuple[d.Phrase, ...]:
    cut = d.phrase("–")
    if e.cut is not None and e.cut_from is not None:
        cut = d.phrase("%s → %s: %s" % (e.cut_from, e.first, _clip(e.cut.text, CAUSE_LIMIT)))
    exceptions = d.phrase("none")
    if e.exceptions:
        cases = list(dict.fromkeys(x.case for x in e.exceptions))
        named = [
            d.phrase(_case(name), " (%s)" % ", ".join(x.mode for x in e.exceptions if x.case == name))
            for name in cases[:SHOWN_EXCEPTIONS]
        ]
        more = " … (+%d)" % (len(cases) - SHOWN_EXCEPTIONS) if len(cases) > SHOWN_EXCEPTIONS else None
        exceptions = d.phrase(d.Count(len(cases), "case"), ": ", d.joined(named), more)
    return (
        d.phrase(e.first if len(e.releases) == 1 else "%s–%s" % (e.first, e.last)),
        d.phrase(str(e.programs) + (" (%d more not tried)" % e.untried if e.untried else "")),
        d.phrase("%d of %d" % (e.passed, e.tried)),
        d.phrase(OLDER_READ_NEWER.get(e.backward, e.backward)),
        exceptions,
        cut,
    )


def verdict(v: Optional[Any], page: str = "artifacts") -> Tuple[d.Item, ...]:
    """The verdict's lines on the compiled packages and the compiles (``Model.aoti``), each a titled item linking
    the section of ``page`` with every pair; none without packages or compiles."""
    every = d.link("every pair", d.page(page, aoti_verdict.ANCHOR))
    return tuple(d.Item(d.phrase(said, " (", every, ")"), title=title) for title, said in aoti_verdict.lines(v))


def _case(name: str) -> d.Link:
    return d.link(name, d.page("cases/" + md.page_file(name)))


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"

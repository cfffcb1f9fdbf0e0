"""How the pages word a known issue beside a failure it labels, and the verdicts about them.

The matching is :mod:`matrix.records.failures`' (judged once); this module only words it: a failure's line
gains ``(known upstream issue pytorch/pytorch#173706)``, and the verdicts list each issue the report's failures
show, on which releases and how many failures, all still counted as failures. An issue is *known upstream* only
where upstream confirms it (``KnownIssue.confirmed``); an entry without an upstream reference is *unconfirmed*.
"""

from __future__ import annotations

from matrix.contract.products import PRODUCTS
from matrix.records import failures as judged
from matrix.records.failures import Sighting
from matrix.records.known_issues import KnownIssue
from matrix.report import document as d

# The tables a sighting counts failures in (matrix.records.model names them: the cells, each product by its name), as
# one failure and as many.
ONE = {judged.CELLS: ("cell", "cells"), **{p.name: p.counted for p in PRODUCTS}}


def reference(issue: KnownIssue) -> d.Phrase:
    """The issue's upstream reference linked to it, or that none is on record."""
    if not issue.link:
        return d.phrase("no upstream issue on record")
    return d.phrase(d.link(issue.reference, d.url(issue.link)))


def verdict(s: Sighting) -> d.Item:
    """A verdict: ``2.10.0+cu128 cannot load …: pytorch/pytorch#173706. Labelled, still counted as failures: 9 cells'
    aoti stage, 9 package loads.``, titled by whether upstream confirms it."""
    counted = ", ".join(d.plural(n, *ONE.get(name, (name, name))) for name, n in s.counts)
    said = d.phrase(
        "%s %s: " % (" and ".join(s.releases), s.issue.summary), reference(s.issue),
        ". Labelled, and still counted as failures: %s." % counted,
    )  # fmt: skip
    return d.Item(said, s.issue.kind)

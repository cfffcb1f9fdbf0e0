"""How the pages word a known issue beside a failure it labels, and the verdicts about them.

The matching is :mod:`matrix.records.failures`' (judged once); this module only words it: a failure's line
gains ``(known upstream issue pytorch/pytorch#173706)``, and the verdicts list each issue the report's failures
show, on which releases and how many failures, all still counted as failures. An issue is *known upstream* only
where upstream confirms it (:func:`confirmed`); an entry without an upstream reference is *unconfirmed*.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List, Sequence, Tuple, TypeVar

import pandas as pd

from matrix.records import failures as judged
from matrix.records.failures import Sighting
from matrix.records.known_issues import KnownIssue
from matrix.report import document as d
from matrix.report import markdown as md
from matrix.report.case_grids import Failure as Said

P = TypeVar("P")
# The tables a sighting counts failures in (matrix.records.model names them), as one failure and as many.
ONE = {
    judged.CELLS: ("cell", "cells"),
    judged.LOADS: ("load of a saved program", "loads of saved programs"),
    judged.PACKAGE_LOADS: ("package load", "package loads"),
    judged.COMPILES: ("compile of a saved program", "compiles of saved programs"),
}


@dataclass(frozen=True)
class Labelled:
    """A failure of a grid with the known issue it matches: its text ends with the issue."""

    failure: Said
    issue: KnownIssue

    @property
    def text(self) -> str:
        return "%s (%s)" % (self.failure.text, self.issue.words)


def labelled(
    stage: str, grouped: Callable[[pd.DataFrame], Sequence[Tuple[Said, Sequence[P]]]]
) -> Callable[[pd.DataFrame], List[Tuple[Said, Sequence[P]]]]:
    """``grouped`` (a table's failures, grouped) with each group's text naming the known issue its rows match: the
    rows that match an issue are grouped apart, so that a group never mixes failures an issue labels with others."""

    def found(rows: pd.DataFrame) -> List[Tuple[Said, Sequence[P]]]:
        if rows.empty:
            return list(grouped(rows))
        issues = [judged.use_issue(row, stage) for row in rows.to_dict("records")]
        ids = pd.Series([issue.id if issue else "" for issue in issues], index=rows.index)
        result: List[Tuple[Said, Sequence[P]]] = list(grouped(rows[ids == ""])) if (ids == "").any() else []
        by_id = {issue.id: issue for issue in issues if issue is not None}
        for key, issue in by_id.items():
            result += [(Labelled(failure, issue), pairs) for failure, pairs in grouped(rows[ids == key])]
        return result

    return found


def confirmed(issue: KnownIssue) -> bool:
    """Whether upstream confirms the issue: the entry's own word where it has one, else whether it names an upstream
    reference (an entry without one is a signature of ours, unconfirmed)."""
    said = getattr(issue, "confirmed", None)
    return bool(issue.link) if said is None else bool(said)


def label(issue: KnownIssue) -> str:
    """What a failure the issue matches is called: ``known upstream issue`` or ``unconfirmed issue``."""
    return "known upstream issue" if confirmed(issue) else "unconfirmed issue"


def reference(issue: KnownIssue) -> d.Phrase:
    """The issue's upstream reference linked to it, or that none is on record."""
    if not issue.link:
        return d.phrase("no upstream issue on record")
    return d.phrase(d.link(issue.reference, d.url(issue.link)))


def verdict(s: Sighting) -> d.Item:
    """A verdict: ``2.10.0+cu128 cannot load …: pytorch/pytorch#173706. Labelled, still counted as failures: 9 cells'
    aoti stage, 9 package loads.``, titled by whether upstream confirms it."""
    counted = ", ".join(md.plural(n, *ONE.get(name, (name, name))) for name, n in s.counts)
    said = d.phrase(
        "%s %s: " % (" and ".join(s.releases), s.issue.summary), reference(s.issue),
        ". Labelled, and still counted as failures: %s." % counted,
    )  # fmt: skip
    return d.Item(said, label(s.issue)[0].upper() + label(s.issue)[1:])


def verdict_words(s: Sighting) -> str:
    """A verdict's line, plain text, for the site's pages still written on their own."""
    where = " and ".join(s.releases)
    said = "%s %s: %s." % (where, s.issue.summary, s.issue.reference or "no upstream issue on record")
    counted = ", ".join(md.plural(n, *ONE.get(name, (name, name))) for name, n in s.counts)
    return "%s Labelled, and still counted as failures: %s." % (said, counted)

"""How the pages word a known upstream issue beside a failure it labels, and the verdicts' lines about them.

The matching is :mod:`matrix.records.failures`' (judged once); this module only words it: a failure's line
gains ``(known upstream issue pytorch/pytorch#173706)``, and the verdicts list each issue the report's failures
show, on which releases and how many failures, all still counted as failures.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List, Sequence, Tuple, TypeVar

import pandas as pd

from matrix.records import failures as judged
from matrix.records.failures import Sighting
from matrix.records.known_issues import KnownIssue
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


def verdict_words(s: Sighting) -> str:
    """A verdict's line, plain text: ``2.10.0+cu128 cannot load …: pytorch/pytorch#173706. Labelled, still counted
    as failures: 9 cells' aoti stage, 9 package loads.``"""
    where = " and ".join(s.releases)
    said = (
        "%s %s: %s." % (where, s.issue.summary, s.issue.reference)
        if s.issue.link
        else "%s %s (no upstream issue on record)." % (where, s.issue.summary)
    )
    counted = ", ".join(md.plural(n, *ONE.get(name, (name, name))) for name, n in s.counts)
    return "%s Labelled, and still counted as failures: %s." % (said, counted)


def markdown_lines(found: Sequence[Sighting]) -> List[str]:
    """The verdicts' lines of known upstream issues, Markdown list items; none where the report shows none."""
    lines = []
    for s in found:
        line = md.text(verdict_words(s))
        if s.issue.link:
            line = line.replace(md.text(s.issue.reference), "[%s](%s)" % (md.text(s.issue.reference), s.issue.link), 1)
        lines.append("- **%s**: %s" % (s.issue.kind, line))
    return lines

"""Where a cell failed, stage by stage, and the known upstream issue each failure matches.

A cell's status says how its export ended; a passing cell can still fail a later stage (save/load,
decomposition, each stage whose outcome is declared: :mod:`.stage_outcomes`). :func:`failed_stages` names those,
so that a view that lists failing cells lists these too; :func:`cell_issues` labels each failure of a cell, and
:func:`use_issue` a row of a load or compile table, with :func:`matrix.records.known_issues.label`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import pandas as pd

from matrix.contract.schema import STAGE_ERROR, STAGE_OK, STAGES
from matrix.records import known_issues, stage_outcomes, store
from matrix.records.columns import FAILING
from matrix.records.known_issues import KnownIssue

EXPORT = "export"


def failed_stages(row: Mapping[str, Any]) -> Tuple[str, ...]:
    """The stages after the export that failed on a cell, by the report's names (``save/load``, ``ONNX``)."""
    found = [label for stage, label in STAGES if row.get(stage + "_outcome") == STAGE_ERROR]
    return tuple(found + [stage_outcomes.shown(stage).label for stage in stage_outcomes.failed(row)])


def stage_line(row: Mapping[str, Any], stage: str) -> str:
    """A failed stage's error in one line, as a page shows it and a known issue is searched for in."""
    if stage in stage_outcomes.BY_LABEL:
        return stage_outcomes.error_line(row, stage_outcomes.BY_LABEL[stage])
    return next((_text(row.get(name + "_error")) for name, label in STAGES if label == stage), "")


def cell_issues(row: Mapping[str, Any], issues: Optional[Iterable[KnownIssue]] = None) -> Dict[str, KnownIssue]:
    """Per failure of a cell (``export`` where its status fails, else each failed stage), the issue it matches."""
    chosen = tuple(known_issues.load() if issues is None else issues)
    release = row.get("release")
    found: Dict[str, KnownIssue] = {}
    failures: List[Tuple[str, Optional[str], str]] = []
    if row.get("status") in FAILING:
        kind = row.get("error_type")
        failures.append((EXPORT, kind if isinstance(kind, str) else None, _text(row.get("error_message"))))
    failures += [(stage, None, stage_line(row, stage)) for stage in failed_stages(row)]
    for stage, kind, text in failures:
        issue = known_issues.label(stage, kind, text, release, issues=chosen)
        if issue is not None:
            found[stage] = issue
    return found


def use_issue(
    row: Mapping[str, Any], stage: str, issues: Optional[Iterable[KnownIssue]] = None
) -> Optional[KnownIssue]:
    """The issue a failed load or compile matches: a row of a load table (``stage`` ``load``) or of a package
    table, with its loading release in ``torch_version`` and the making one in ``saved_torch_version``."""
    if row.get("status") in (None, "pass", STAGE_OK) or not row.get("error_type") and not row.get("error_message"):
        return None
    kind = row.get("error_type")
    return known_issues.label(
        stage,
        kind if isinstance(kind, str) else None,
        _text(row.get("error_message")),
        row.get("torch_version"),
        row.get("saved_torch_version"),
        issues=issues,
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


@dataclass(frozen=True)
class Sighting:
    """A known issue as a report's tables show it: the releases it failed on and the failures it labels, each
    still counted as a failure."""

    issue: KnownIssue
    releases: Tuple[str, ...]  # the failing releases' builds, in version order
    counts: Tuple[Tuple[str, int], ...]  # per table that shows it (``cells``, or a use's name), its failures

    @property
    def failures(self) -> int:
        return sum(n for _, n in self.counts)


# The columns a cell's or a use's failures are labelled from.
CELL_COLUMNS = (
    "release", "status", "error_type", "error_message", *stage_outcomes.COLUMNS,
    *(stage + suffix for stage, _ in STAGES for suffix in ("_outcome", "_error")),
)  # fmt: skip
USE_COLUMNS = ("status", "error_type", "error_message", "torch_version", "saved_torch_version")


def _rows(table: pd.DataFrame, columns: Sequence[str]) -> List[Dict[str, Any]]:
    """The rows of ``table`` as records of those of ``columns`` it has (a table's other columns are not read)."""
    if table.empty:
        return []
    return table[[c for c in columns if c in table.columns]].to_dict("records")


# What :func:`sightings` calls the tables it counts failures in.
CELLS = "cells"
LOADS = "loads of saved programs"
PACKAGE_LOADS = "package loads"
COMPILES = "compiles of saved programs"


def sightings(
    cells: pd.DataFrame,
    uses: Sequence[Tuple[str, str, pd.DataFrame]] = (),
    issues: Optional[Iterable[KnownIssue]] = None,
) -> Tuple[Sighting, ...]:
    """The known issues that label some failure of ``cells`` or of ``uses`` ((stage, name, table): a load table
    under ``load``, a package or compile table under its product's stage), in the file's order."""
    chosen = tuple(known_issues.load() if issues is None else issues)
    releases: Dict[str, List[str]] = {issue.id: [] for issue in chosen}
    counts: Dict[str, Dict[str, int]] = {issue.id: {} for issue in chosen}

    def seen(issue: KnownIssue, release: Any, name: str) -> None:
        releases[issue.id].append(str(release))
        counts[issue.id][name] = counts[issue.id].get(name, 0) + 1

    for row in _rows(cells, CELL_COLUMNS):
        for issue in cell_issues(row, chosen).values():
            seen(issue, row["release"], CELLS)
    for stage, name, table in uses:
        if table.empty or not any(stage in issue.stages for issue in chosen):
            continue
        # Only a failure can be labelled: the passing rows (most of a load table) are not looked at.
        for row in _rows(table[~table["status"].isin(("pass", STAGE_OK))], USE_COLUMNS):
            found = use_issue(row, stage, chosen)
            if found is not None:
                seen(found, row["torch_version"], name)
    return tuple(
        Sighting(issue, tuple(store.ordered(set(releases[issue.id]))), tuple(counts[issue.id].items()))
        for issue in chosen
        if releases[issue.id]
    )

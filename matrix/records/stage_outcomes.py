"""A stage's outcome on a cell, read and judged from its declaration alone (``Stage.shown``, contract/stages.py).

Every view of a stage that declares ``shown`` (the case pages, the failures and their known issues, the upgrade
answer, ``check``'s table, the glossary) reads it through these functions, so that a new stage is drawn and judged
everywhere with no code of its own: its outcome in ``status_key``, what failed in ``detail_keys`` and, in one line,
``error_keys``; an outcome that did not try (not-applicable, skipped) is never a failure.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Tuple

from matrix.contract.schema import STATUSES, Status
from matrix.contract.stages import SHOWN, Shown, Stage

# Each stage of SHOWN by its label: what a page, a known issue and the upgrade answer call it.
BY_LABEL = {stage.shown.label: stage for stage in SHOWN if stage.shown}
# Every field a view of the shown stages reads from a cell's row.
COLUMNS = tuple(dict.fromkeys(key for s in SHOWN if s.shown for key in (s.shown.status_key, *s.shown.detail_keys)))


def shown(stage: Stage) -> Shown:
    """The declaration of a stage of :data:`SHOWN`."""
    if stage.shown is None:
        raise ValueError("stage %s declares no shown outcome" % stage.name)
    return stage.shown


def outcome(row: Mapping[str, Any], stage: Stage) -> Optional[str]:
    """The stage's outcome on a cell's row; None where the run did not select it."""
    value = row.get(shown(stage).status_key)
    return value if isinstance(value, str) and value else None


def ran(rows: Any) -> Tuple[Stage, ...]:
    """The stages of :data:`SHOWN` with an outcome on some of ``rows``, in declared order."""
    found = list(rows)
    return tuple(stage for stage in SHOWN if any(outcome(row, stage) for row in found))


def ran_in(table: Any) -> Tuple[Stage, ...]:
    """The stages of :data:`SHOWN` with an outcome in some row of ``table`` (a DataFrame), in declared order."""
    return tuple(s for s in SHOWN if shown(s).status_key in table and table[shown(s).status_key].notna().any())


def said(row: Mapping[str, Any]) -> Tuple[Tuple[str, str, str], ...]:
    """Each stage with an outcome on the row, as (label, outcome, error line: "" where it did not fail)."""
    found = ((stage, outcome(row, stage)) for stage in SHOWN)
    return tuple(
        (shown(stage).label, value, error_line(row, stage) if shown(stage).failed(value) else "")
        for stage, value in found
        if value is not None
    )


def failed(row: Mapping[str, Any]) -> Tuple[Stage, ...]:
    """The stages that tried the cell's program and did not pass."""
    return tuple(stage for stage in SHOWN if shown(stage).failed(outcome(row, stage)))


def error_line(row: Mapping[str, Any], stage: Stage) -> str:
    """What failed, in one line: the values of its ``error_keys`` joined by ": " (``export: TypeError: boom``)."""
    said = (_said(row.get(key)) for key in shown(stage).error_keys)
    return ": ".join(part for part in said if part)


def details(row: Mapping[str, Any], stage: Stage) -> Tuple[Tuple[str, str], ...]:
    """The detail fields that have a value, as (field, value), in the declared order."""
    found = ((key, _said(row.get(key))) for key in shown(stage).detail_keys)
    return tuple((key, value) for key, value in found if value)


def tip(row: Mapping[str, Any], stage: Stage) -> str:
    """A square's tooltip: the stage, its outcome and what that means, and where it failed, the detail fields."""
    declared, found = shown(stage), outcome(row, stage)
    said = "%s: %s — %s" % (declared.label, found, declared.meanings.get(str(found), ""))
    if declared.failed(found):
        said += "".join("; %s: %s" % pair for pair in details(row, stage))  # one line: a tooltip of either form
    return said


def drawn(stage: Stage, found: Optional[str]) -> Optional[str]:
    """The cell status whose glyph draws an outcome: the outcome itself where it is one, else ``pass`` for the
    passing outcome, ``fail`` for another that tried, ``not-applicable`` for one that did not (None: no record)."""
    if found is None or found in STATUSES:
        return found
    declared = shown(stage)
    if found == declared.passing:
        return Status.PASS.value
    return Status.FAIL.value if found in declared.tried else Status.NOT_APPLICABLE.value


def _said(value: Any) -> str:
    if isinstance(value, bool) or value is None or value != value:  # NaN: a published table's missing value
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    # A value's first line: a record's error keeps its traceback's first line, a page shows no more.
    return str(value).strip().split("\n", 1)[0] if isinstance(value, (str, int, float)) else ""

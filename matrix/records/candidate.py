"""The candidate verdict: a nightly or a release candidate against the newest release, before it ships.

A *candidate* is a build from a pre-release channel: a variant named after its channel
(``nightly-cpu``, ``test-cu128``, ``rc``; see :data:`CHANNELS`), or a torch version that is a
pre-release or a development build (``2.16.0.dev20260115+cpu``, ``2.16.0rc1``). Its *reference*
is the newest build of a release that is no candidate, of the candidate's own family where
there is one (``cpu`` for ``nightly-cpu``), else PyPI's, else the first other.

For each candidate, cell by cell (case, mode, ``--with`` set; the newest Python of each side),
with the rules of a transition (:func:`transitions.compare`):

- *broken*: what a release manager must look at first: a cell that passes on the reference and
  is worse on the candidate, gives other numbers than eager where the reference refused, or
  passes with a stage (save/load, decomposition) that stopped working;
- *fixed*: the reverse;
- *changed*: a graph or an op set that changed, both passing;
- *unloadable*: saved programs that load and match on the reference and do not on the
  candidate (from the load table, :func:`matrix.records.artifacts.table`).

The candidate *regresses* when anything is broken or unloadable: what ``--fail-on regression``
turns into a non-zero exit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import pandas as pd

from matrix.contract.options import FAIL_ON
from matrix.contract.schema import LoadStatus
from matrix.records import store, transitions
from matrix.records.artifacts import tried
from matrix.records.builds import Build, Row, cells_by_build, compared
from matrix.records.channel import REFERENCE_VARIANT, family, is_candidate
from matrix.records.columns import FAILING

CHANGES = ("graph-change", "op-drift")


@dataclass(frozen=True)
class Verdict:
    """One candidate build against its reference."""

    candidate: str  # the candidate's torch version, e.g. 2.16.0.dev20260115+cpu
    variant: str
    reference: str  # the reference's torch version
    reference_variant: str
    compared: int  # cells both builds hold
    broken: Tuple[Row, ...]  # transitions of kinds transitions.REGRESSIONS, reference → candidate
    fixed: Tuple[Row, ...]
    changed: Tuple[Row, ...]  # graph changes and op drift
    unloadable: Tuple[Row, ...] = ()  # load-table rows: a program that loads on the reference and not here

    @property
    def regresses(self) -> bool:
        return bool(self.broken or self.unloadable)


def judge(cells: pd.DataFrame, loads: Optional[pd.DataFrame] = None) -> Tuple[Verdict, ...]:
    """Each candidate of a cell table (``tables.cells``: release, variant, python, with_set, case, mode, status,
    graph fields) against its reference, in version order; ``loads`` the load table, where there is one."""
    if cells.empty:
        return ()
    pairs = cells[["release", "variant"]].drop_duplicates().itertuples(index=False, name=None)
    if not any(is_candidate(release, variant) for release, variant in pairs):
        return ()  # a matrix of releases: nothing to judge, and nothing to lay out for it
    by_build = cells_by_build(cells)
    candidates = [b for b in by_build if is_candidate(*b)]
    releases = [b for b in by_build if not is_candidate(*b)]
    found = []
    for build in sorted(candidates, key=lambda b: (store.release_key(b[0]), b[1])):
        reference = _reference(build, releases)
        if reference is None:
            continue
        theirs, mine = by_build[reference], by_build[build]
        shared, moves = compared(theirs, mine)
        found.append(
            Verdict(
                candidate=build[0],
                variant=build[1],
                reference=reference[0],
                reference_variant=reference[1],
                compared=len(shared),
                broken=tuple(m for m in moves if m["kind"] in transitions.REGRESSIONS),
                fixed=tuple(m for m in moves if m["kind"] in transitions.FIXES),
                changed=tuple(m for m in moves if m["kind"] in CHANGES),
                unloadable=tuple(_unloadable(loads, reference, build)),
            )
        )
    return tuple(found)


def failing(cells: pd.DataFrame) -> int:
    """The cells that fail (mismatch, fail, crash, timeout): what ``--fail-on failing`` counts."""
    if cells.empty:
        return 0
    return int(cells["status"].isin(FAILING).sum())


def should_fail(policy: str, failing_cells: int, verdicts: Sequence[Verdict]) -> Optional[str]:
    """Why a command with ``--fail-on policy`` (one of FAIL_ON) exits non-zero, or None: one line for the log.

    ``failing_cells``: the cells that fail (:func:`failing`); ``verdicts``: :func:`judge`'s.
    """
    assert policy in FAIL_ON, policy
    if policy == "regression":
        bad = [v for v in verdicts if v.regresses]
        if bad:
            return "; ".join(
                "%s regresses against %s: %d cell(s) broken, %d saved program(s) no longer load"
                % (v.candidate, v.reference, len(v.broken), len(v.unloadable))
                for v in bad
            )
    elif policy == "failing" and failing_cells:
        return "%d failing cell(s)" % failing_cells
    return None


def _reference(build: Build, releases: Sequence[Build]) -> Optional[Build]:
    if not releases:
        return None
    newest = max(store.release_key(transitions.base(r)) for r, _ in releases)
    mine = [b for b in releases if store.release_key(transitions.base(b[0])) == newest]
    for wanted in (family(build[1]), REFERENCE_VARIANT):
        chosen = [b for b in mine if b[1] == wanted]
        if chosen:
            return chosen[0]
    return sorted(mine)[0]


def _unloadable(loads: Optional[pd.DataFrame], reference: Build, candidate: Build) -> List[Row]:
    """Load-table rows on the candidate of programs that pass on the reference and do not pass here."""
    if loads is None or loads.empty:
        return []
    program = ["saved_torch_version", "saved_variant", "saved_python", "case", "mode", "with_set"]
    on = {b: loads[(loads["torch_version"] == b[0]) & (loads["variant"] == b[1])] for b in (reference, candidate)}
    passed = {tuple(r[k] for k in program) for r in on[reference].to_dict("records") if r["status"] == LoadStatus.PASS}
    # A load the candidate could not try (not-applicable, untrusted) says nothing of whether it loads.
    return [
        r
        for r in on[candidate].to_dict("records")
        if tuple(r[k] for k in program) in passed and r["status"] != LoadStatus.PASS and tried(r["status"])
    ]

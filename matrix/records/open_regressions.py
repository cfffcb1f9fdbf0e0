"""Regressions between releases judged on the newest release: still open, fixed since, or not judged.

:func:`open_regressions` takes the regressions of a transition table (``transitions.REGRESSIONS``) and
follows each cell on the releases after it: of those still broken on the newest release, per cell the one
since which it never worked again (the last release that worked → the first that broke since), how many
were fixed since, and those that broke in the newest release.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

import pandas as pd

from matrix.contract.schema import MODES, STAGE_ERROR, STAGE_OK, rank
from matrix.records import store
from matrix.records.confounds import changes_build
from matrix.records.transitions import REGRESSIONS, base


@dataclass(frozen=True)
class OpenRegression:
    """A regression between two releases that the newest release still shows, its modes together."""

    case: str
    modes: Tuple[str, ...]
    kind: str  # one of transitions.REGRESSIONS
    before: str  # the transition where it broke (last broke: nothing after it worked again), last release that worked
    after: str  # and the first that broke since
    variant_before: str
    variant: str
    status_before: str
    status_after: str
    stage: Optional[str]  # the stage that started failing, for a stage regression
    now: Tuple[str, ...]  # each mode's status on the newest release
    across_build_change: bool  # the transition also changed the build (CPU / CUDA)
    with_set: str = ""  # the cells' ``--with`` set, "" for none
    # For a stage regression, each mode's outcome of that stage on the newest release (``ok``, ``error``,
    # ``skipped``), "" where it did not run (the cell did not export); "" for every other kind.
    stage_now: Tuple[str, ...] = ()


@dataclass(frozen=True)
class Regressions:
    """The regressions found between releases, judged on the newest release."""

    newest: Tuple[str, ...]  # the newest release's builds in the table (usually one)
    found: int  # cells that got worse between two releases (each transition of each cell once)
    # Where the open ones broke: per cell the oldest open regression (the one since which it never worked
    # again), modes that broke alike together.
    open: Tuple[OpenRegression, ...]
    open_count: int  # of ``found``, those still worse on the newest release
    open_cells: int  # the cells (case, mode, variant, --with set) those are in
    fixed: int  # of ``found``, those as good as before again on a later release (maybe broken again since)
    unknown: int  # of ``found``, those the newest release did not run, or ran without a rank
    # What regressed in the newest release: the open regressions that broke there, modes together.
    in_newest: Tuple[OpenRegression, ...] = ()


def open_regressions(
    cells: pd.DataFrame, moves: pd.DataFrame, builds: Optional[Mapping[str, str]] = None
) -> Regressions:
    """The regressions of ``moves`` (``transitions.REGRESSIONS``) judged on the releases of ``cells`` after each.

    Each is open, fixed or not judged as :func:`_state` says: fixed where a release after the one it
    broke in works again (its status as good as before, its stage working again), else judged on the
    newest release. So a cell that broke, was fixed and broke again cites the second regression:
    the last release where it worked → the first one where it broke since. The cell of a release is
    the one of the same case and mode, of the regression's variant and ``--with`` set where that
    release has them, under its newest Python.
    """
    found = moves[moves["kind"].isin(REGRESSIONS)] if not moves.empty else moves
    releases = store.ordered(cells["release"]) if not cells.empty else []
    if not releases:
        return Regressions((), len(found), (), 0, 0, 0, len(found))
    newest_base = base(releases[-1])
    ranked = cells.assign(_python=store.rank(cells["python"].astype(object))).sort_values("_python", kind="stable")
    # Per case and mode, per release (its builds together): the cells, newest Python last.
    chain: Dict[Tuple[str, str], Dict[str, List[Dict[str, Any]]]] = {}
    for row in ranked.to_dict("records"):
        by_release = chain.setdefault((str(row["case"]), str(row["mode"])), {})
        by_release.setdefault(base(str(row["release"])), []).append(row)
    newest = cells[cells["release"].map(lambda r: base(str(r)) == newest_base)]
    fixed = unknown = 0
    still: List[Dict[str, Any]] = []
    for move in found.to_dict("records"):
        by_release = chain.get((str(move["case"]), str(move["mode"])), {})
        broke = store.release_key(base(str(move["after"])))
        between = [r for r in by_release if broke < store.release_key(r) < store.release_key(newest_base)]
        fixed_between = any(_state(move, _cell_of(by_release[r], move, strict=True)) == "fixed" for r in between)
        cell = _cell_of(by_release.get(newest_base, []), move)
        state = "fixed" if fixed_between else _state(move, cell)
        if state == "fixed":
            fixed += 1
        elif state == "unknown":
            unknown += 1
        else:
            assert cell is not None
            outcome = cell.get("%s_outcome" % move.get("stage")) if move["kind"] == "stage-regression" else None
            still.append(
                {**move, "_now": str(cell["status"]), "_stage_now": outcome if isinstance(outcome, str) else ""}
            )
    still.sort(key=lambda m: (store.release_key(str(m["after"])), store.release_key(str(m["before"]))))
    # Per cell the oldest still open: nothing after it worked again, so it is where the cell last broke.
    oldest: Dict[Tuple[str, str, str, str], Dict[str, Any]] = {}
    for move in still:
        oldest.setdefault((str(move["case"]), str(move["mode"]), str(move["variant"]), _with_set(move)), move)
    names = builds or {}
    in_newest = [m for m in still if base(str(m["after"])) == newest_base]
    return Regressions(
        tuple(store.ordered(newest["release"])),
        len(found),
        _grouped(oldest.values(), names),
        len(still),
        len(oldest),
        fixed,
        unknown,
        in_newest=_grouped(in_newest, names),
    )


def _grouped(moves: Iterable[Dict[str, Any]], names: Mapping[str, str]) -> Tuple[OpenRegression, ...]:
    """Open regressions (with ``_now`` and ``_stage_now``), the modes that broke alike together, by release and case."""
    groups: Dict[Tuple[str, ...], List[Dict[str, Any]]] = {}
    fields = ("case", "kind", "before", "after", "variant_before", "variant", "stage", "status_before", "status_after")
    for move in moves:
        groups.setdefault((*(str(move.get(k)) for k in fields), _with_set(move)), []).append(move)
    listed = []
    for members in groups.values():
        first = members[0]
        stage = first.get("stage")
        by_mode = {str(m["mode"]): m for m in members}
        modes = tuple(m for m in MODES if m in by_mode)
        listed.append(
            OpenRegression(
                case=str(first["case"]),
                modes=modes,
                kind=str(first["kind"]),
                before=str(first["before"]),
                after=str(first["after"]),
                variant_before=str(first.get("variant_before") or first["variant"]),
                variant=str(first["variant"]),
                status_before=str(first["status_before"]),
                status_after=str(first["status_after"]),
                stage=stage if isinstance(stage, str) else None,
                now=tuple(str(by_mode[m]["_now"]) for m in modes),
                across_build_change=changes_build(names, str(first["before"]), str(first["after"])),
                with_set=_with_set(first),
                stage_now=tuple(str(by_mode[m].get("_stage_now") or "") for m in modes),
            )
        )
    listed.sort(key=lambda o: (store.release_key(o.after), o.case))
    return tuple(listed)


def _cell_of(
    candidates: List[Dict[str, Any]], move: Mapping[str, Any], strict: bool = False
) -> Optional[Dict[str, Any]]:
    """The last candidate (newest Python) of the regression's variant and ``--with`` set, else the nearest.

    ``strict``: of the regression's ``--with`` set only (a release between, where another set's cell
    says nothing of this series).
    """
    chosen = [c for c in candidates if c["variant"] == move.get("variant")] or candidates
    same_set = [c for c in chosen if _with_set(c) == _with_set(move)]
    chosen = same_set if strict else same_set or chosen
    return chosen[-1] if chosen else None


def _with_set(row: Mapping[str, Any]) -> str:
    value = row.get("with_set")
    return value if isinstance(value, str) else ""


def _state(move: Dict[str, Any], cell: Optional[Dict[str, Any]]) -> str:
    """``open``, ``fixed`` or ``unknown``: where the regression stands on a later release's cell.

    A status regression is open while the status ranks below the one before it broke; a wrong result
    (a refusal turned into wrong numbers) while the cell still gives wrong numbers; a stage regression
    while the cell does not pass with that stage working.
    """
    if cell is None:
        return "unknown"
    now = rank(cell["status"])
    if now is None:
        return "unknown"
    if move["kind"] == "stage-regression":
        outcome = cell.get("%s_outcome" % move.get("stage"))
        if cell["status"] != "pass" or outcome == STAGE_ERROR:
            return "open"
        return "fixed" if outcome == STAGE_OK else "unknown"
    if move["kind"] == "regression":
        before = rank(move["status_before"])
        if before is None:
            return "unknown"
        return "open" if now < before else "fixed"
    return "open" if cell["status"] == move["status_after"] else "fixed"

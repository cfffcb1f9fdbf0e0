"""The answers a report opens with, judged from its tables: data only, the front page words them.

- :func:`expected`: per environment and mode, how the cells of cases documented to work there
  end: a case whose claim requires a pass in that mode, the claim being the release's own
  (:func:`claims`: for an ExportDB case, that release's ExportDB; else the case's ``expected``).
  The denominator is every case of the table documented to work on that release, whether the
  release ran it or not (a case it did not run is judged by its own ``expected``): a cell an
  environment did not run, or that was not applicable there, counts as not passing, so a
  release that ran fewer cells never gets a better-looking rate for it. A mode the release lacks
  (every cell of it not applicable, :func:`exists`) has no row: "0 of N" would read as N failures.
  Where no release's ExportDB names a claim, the denominator is the same for every environment.
- :func:`passes`: whether a release passes a case (every mode that exists there passes), as ``check`` says too.
- :func:`best`: per mode, the environments that pass the largest share of those cells.
- :func:`since_baseline`: what changed since an earlier report, in counts.

:func:`judge` gathers them, with the regressions still open on the newest release
(:mod:`matrix.records.open_regressions`), the saved-program epochs (:mod:`matrix.records.epochs`) and the
sample's confounds (:mod:`matrix.records.confounds`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

import pandas as pd

from matrix.contract.schema import MODES, Status, passes, rank  # noqa: F401 (passes: the report's rule, kept here)
from matrix.records import epochs as saved_epochs
from matrix.records import store, tables
from matrix.records.baseline import BaselineComparison
from matrix.records.columns import FAILING
from matrix.records.confounds import Sample, build_names, sample
from matrix.records.figures import Since
from matrix.records.open_regressions import Regressions, open_regressions
from matrix.records.transitions import FIXES, REGRESSIONS

ENV = ["release", "variant", "python"]
# The part of an environment's name a cell adds where it ran with ``--with`` packages.
WITH_SET = "with_set"
# The claims that say a case works, and the modes they say it works in.
WORKS_IN: Mapping[str, Tuple[str, ...]] = {
    "supported": MODES,
    "strict-only": ("strict",),
    "non-strict-only": ("non-strict",),
}


@dataclass(frozen=True)
class Expected:
    """One environment and mode: how the cells of the cases documented to work there end."""

    environment: str  # its label, as tables.environment_labels names it
    release: str
    variant: str
    python: str
    mode: str
    cases: int  # the denominator: every case documented to work in this mode on this release (see expected)
    ran: int  # of those, the cells this environment ran (an applicable status)
    passed: int
    unexpected: int  # of those, the cells that fail (mismatch, fail, crash, timeout)
    failing: int  # every failing cell of this environment and mode, documented to work or not
    unclaimed: int = 0  # of those, the cells of cases with no claim there: neither expected nor unexpected

    @property
    def rate(self) -> float:
        return self.passed / self.cases if self.cases else math.nan


@dataclass(frozen=True)
class Best:
    """Per mode, the environments passing the largest share of the cells documented to work (ties all given, in
    version order)."""

    mode: str
    environments: Tuple[str, ...]
    passed: int
    cases: int


@dataclass(frozen=True)
class SinceBaseline:
    """What changed since an earlier report (``--baseline``), in counts."""

    name: str
    changed: int
    regressions: int  # of those, cells whose status got worse or turned into wrong numbers (REGRESSIONS)
    fixes: int
    new_cells: int
    vanished_cells: int
    new_transitions: int  # regressions and fixes between releases the baseline did not show
    gone_transitions: int
    figures: Optional[Since] = None  # the headline figures that moved since the baseline's, and why


@dataclass(frozen=True)
class Verdicts:
    """Everything the front page opens with."""

    regressions: Regressions
    expected: Tuple[Expected, ...]  # environments in version order, then mode
    best: Tuple[Best, ...]  # one per mode with cases documented to work
    epochs: Tuple[saved_epochs.Epoch, ...]
    sample: Sample
    baseline: Optional[SinceBaseline] = None
    modes: Tuple[str, ...] = MODES  # the modes any cell ran in, in MODES order


def judge(
    cells: pd.DataFrame,
    moves: pd.DataFrame,
    environments: pd.DataFrame,
    loads: pd.DataFrame,
    compared: Sequence[Tuple[str, str]] = (),
    baseline: Optional[BaselineComparison] = None,
    baseline_name: Optional[str] = None,
    known_releases: Sequence[str] = (),
    names: Optional[Mapping[Tuple[str, ...], str]] = None,
) -> Verdicts:
    """The verdicts over a cell table, its transitions, the environment records and a load table.

    ``loads`` is :func:`matrix.records.artifacts.table` (empty when nothing was loaded); ``compared``
    the release transitions (older, newer) the transitions were looked for on; ``known_releases``
    the releases of the matrix, to tell which minor series were not run; ``names`` the environments'
    labels where ``cells`` leaves some of the report's environments out (see :func:`expected`).
    """
    builds = build_names(cells, environments)
    found = expected(cells, names)
    return Verdicts(
        regressions=open_regressions(cells, moves, builds),
        expected=tuple(found),
        best=tuple(best(found)),
        epochs=tuple(saved_epochs.epochs(loads)),
        sample=sample(cells, moves, environments, compared, known_releases, builds),
        baseline=since_baseline(baseline, baseline_name),
        modes=tuple(m for m in MODES if not cells.empty and (cells["mode"] == m).any()),
    )


# --- whether a release passes ------------------------------------------------------------------------


def exists(statuses: Iterable[Any]) -> bool:
    """Whether a mode exists on a release, from its cells' statuses there: one cell that is not not-applicable
    (a release that lacks the mode, as 2.1 lacks non-strict, has every cell of it not applicable)."""
    return any(str(s) != Status.NOT_APPLICABLE.value for s in statuses)


# --- cells of cases documented to work ---------------------------------------------------------------


def case_claims(cells: pd.DataFrame) -> Dict[str, str]:
    """Each case's own claim (``expected``): the one its newest cell carries (the catalogue may change between runs)."""
    claimed = cells[cells["expected"].map(lambda v: isinstance(v, str)).astype(bool)]
    if claimed.empty:
        return {}
    ordered = claimed.assign(_release=store.rank(claimed["release"].astype(object))).sort_values(
        "_release", kind="stable"
    )
    return {str(case): str(claim) for case, claim in zip(ordered["case"], ordered["expected"])}


def claims(cells: pd.DataFrame) -> pd.Series:
    """Per cell of ``cells`` (same index), the claim it is judged against; None where nothing is claimed.

    As :func:`matrix.records.tables.documented_claims` says: for a case that stands for an ExportDB
    example, the support level that release's own ExportDB gives it; where the release names none, and
    for every other case, the case's own claim (:func:`case_claims`).
    """
    if cells.empty:
        return pd.Series(dtype=object)
    own = tables.documented_claims(cells)
    newest = case_claims(cells)
    found = [
        claim if by == tables.BY_RELEASE else newest.get(str(case))
        for claim, by, case in zip(own["claim"], own["claimed_by"], cells["case"])
    ]
    return pd.Series(found, index=cells.index, dtype=object)


def environment_names(cells: pd.DataFrame) -> Dict[Tuple[str, ...], str]:
    """Each environment's label (``tables.environment_labels``), by its key (release, variant, python and the
    ``--with`` set where the table has one), in report order."""
    env = ENV + ([WITH_SET] if WITH_SET in cells.columns else [])
    table = cells.assign(**{WITH_SET: cells[WITH_SET].fillna("")}) if WITH_SET in cells.columns else cells
    envs = store.sort_cells(table[env].drop_duplicates(), release="release")
    keys = list(envs[env].astype(str).itertuples(index=False, name=None))
    return dict(zip(keys, tables.environment_labels(envs)))


def expected(cells: pd.DataFrame, names: Optional[Mapping[Tuple[str, ...], str]] = None) -> List[Expected]:
    """Per environment and mode, the cells of cases documented to work there (see the module docstring).

    ``names``: the environments' labels (:func:`environment_names`) where ``cells`` is part of a larger table
    whose labels the report uses everywhere; by default, those of ``cells``.
    """
    if cells.empty:
        return []
    said = case_claims(cells)
    env = ENV + ([WITH_SET] if WITH_SET in cells.columns else [])
    table = cells.assign(_claim=claims(cells))
    if WITH_SET in cells.columns:
        table = table.assign(**{WITH_SET: cells[WITH_SET].fillna("")})
    own = environment_names(cells)
    keys = list(own)
    named = {key: (names or {}).get(key, label) for key, label in own.items()}
    by_env = {tuple(str(v) for v in key): group for key, group in table.groupby(env, sort=False)}
    working: Dict[Tuple[Tuple[str, ...], str], Set[str]] = {}
    claimed: Dict[Tuple[str, ...], Set[str]] = {}
    for key in keys:
        group = by_env[key]
        # A case this environment has no claim for (it did not run it) is judged by the case's own claim.
        on_env = dict(said)
        on_env.update({str(c): claim for c, claim in zip(group["case"], group["_claim"]) if isinstance(claim, str)})
        claimed[key] = {case for case, claim in on_env.items() if isinstance(claim, str)}
        for mode in MODES:
            working[(key, mode)] = {case for case, claim in on_env.items() if mode in WORKS_IN.get(claim, ())}
    # A mode no cell ran in is not counted at all: "0 of 5" would read as five failures.
    ran_modes = set(map(str, cells["mode"]))
    found = []
    for key in keys:
        group = by_env[key]
        for mode in MODES:
            if mode not in ran_modes or not any(working[(k, mode)] for k in keys):
                continue
            mine = group[group["mode"] == mode]
            if not mine.empty and not exists(mine["status"]):
                continue  # the release lacks the mode: "0 of N" would read as N failures
            of_work = mine[mine["case"].astype(str).isin(working[(key, mode)])]
            ran = of_work[of_work["status"].map(lambda s: rank(s) is not None).astype(bool)]
            found.append(
                Expected(
                    environment=str(named[key]),
                    release=key[0],
                    variant=key[1],
                    python=key[2],
                    mode=mode,
                    cases=len(working[(key, mode)]),
                    ran=len(ran),
                    passed=int((ran["status"] == "pass").sum()),
                    unexpected=int(ran["status"].isin(FAILING).sum()),
                    failing=int(mine["status"].isin(FAILING).sum()),
                    unclaimed=int(mine[~mine["case"].astype(str).isin(claimed[key])]["status"].isin(FAILING).sum()),
                )
            )
    return found


def best(found: Sequence[Expected]) -> List[Best]:
    """Per mode, the environments of :func:`expected` that pass the largest share of the cases documented to work
    there (at least one pass); where every environment has the same cases, those that pass the most."""
    result = []
    for mode in MODES:
        mine = [e for e in found if e.mode == mode and e.passed]
        if not mine:
            continue
        top = max(mine, key=lambda e: (e.rate, e.passed))
        tied = tuple(e.environment for e in mine if (e.passed, e.cases) == (top.passed, top.cases))
        result.append(Best(mode, tied, top.passed, top.cases))
    return result


# --- since the baseline -----------------------------------------------------------------------------


def since_baseline(comparison: Optional[BaselineComparison], name: Optional[str]) -> Optional[SinceBaseline]:
    """The counts of a baseline comparison; None where no baseline was given."""
    if comparison is None:
        return None
    kinds = comparison.changed["kind"] if not comparison.changed.empty else pd.Series(dtype=object)
    return SinceBaseline(
        name=name or "the baseline",
        changed=len(comparison.changed),
        regressions=int(kinds.isin(REGRESSIONS).sum()),
        fixes=int(kinds.isin(FIXES).sum()),
        new_cells=len(comparison.new_cells),
        vanished_cells=len(comparison.vanished_cells),
        new_transitions=len(comparison.new_transitions),
        gone_transitions=len(comparison.gone_transitions),
    )

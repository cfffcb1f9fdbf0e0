"""The AOTInductor verdict: upstream's backward promise for packages, pair by pair, and the compiles of older
programs, with their exceptions named; judged from the package and compile tables for the verdicts.

Upstream promises that a package compiled on ``aoti_loads.PROMISED_FROM`` or later loads on every newer release.
Each (compiled-on, loaded-on) pair with a load tried is one of:

- **covered**: loaded on a newer release, compiled on the promise's first release or later: *kept* where every
  package tried loaded and matched, else *broken*, with the most common failure;
- **own**: loaded on the release that compiled it, which the promise takes for granted: one that fails is an
  exception, named (a release that cannot load its own packages);
- **before the promise**: compiled on an older release than the promise's first, loaded on a newer one;
- **older**: loaded on an older release than the one that compiled it, which nothing promises.

The compiles (a program exported on an older release compiled on a newer one) are kept or broken per pair the
same way. The modes the packages were made in are named, so that a mode that did not run is said, not counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

import pandas as pd

from matrix.contract.schema import AOTI_TRIED, MODES, STAGE_OK, LoadStatus
from matrix.envs import releases
from matrix.records import aoti_compiles, aoti_loads, artifacts


@dataclass(frozen=True)
class Pair:
    """One (made-on, used-on) pair: how many tried, how many loaded and matched, and the most common failure."""

    made: str  # the making build's label
    used: str
    passed: int
    tried: int
    failure: str = ""  # the most common failure's text, "" where every one passed

    @property
    def kept(self) -> bool:
        return self.passed == self.tried


@dataclass(frozen=True)
class AotiVerdict:
    """What the package and compile tables say, pair by pair (each tuple in making, then using, order)."""

    promised_from: str
    covered: Tuple[Pair, ...]  # newer release, compiled on promised_from or later
    own: Tuple[Pair, ...]  # each release loading its own packages
    before: Tuple[Pair, ...]  # compiled before promised_from, loaded on a newer release
    older: Tuple[Pair, ...]  # loaded on an older release than the compiling one
    compiles: Tuple[Pair, ...]  # exported on an older release, compiled on a newer one
    modes: Tuple[str, ...]  # the modes packages or compiles were tried in

    @property
    def broken(self) -> Tuple[Pair, ...]:
        return tuple(p for p in self.covered if not p.kept)

    @property
    def own_failing(self) -> Tuple[Pair, ...]:
        return tuple(p for p in self.own if not p.kept)


def _pairs(table: pd.DataFrame, tried: pd.Series, passed: pd.Series, compile_table: bool) -> List[Tuple[Any, Pair]]:
    """Each (saved, loaded) pair of a table with a try: its release keys and counts, in the table's orders."""
    made_order, used_order = artifacts.orders(table)
    found = []
    mine = table[tried]
    ok = passed[tried]
    for (made, used), group in mine.groupby(["saved", "loaded"], sort=False):
        won = int(ok[group.index].sum())
        failure = ""
        if won < len(group):
            if compile_table:
                failure = aoti_compiles.failures(group)[0][0].text
            else:
                common = artifacts.common_failure(group)
                failure = common.text if common is not None else ""
        keys = tuple(aoti_loads.version(group[column].iloc[0]) for column in ("saved_torch_version", "torch_version"))
        place = (made_order.index(str(made)), used_order.index(str(used)))
        found.append(((keys, place), Pair(str(made), str(used), won, len(group), failure)))
    found.sort(key=lambda item: item[0][1])
    return [(keys, pair) for (keys, _), pair in found]


def judge(packages: aoti_loads.PackageLoads, compiles: aoti_compiles.Compiles) -> Optional[AotiVerdict]:
    """The verdict of a report's packages and compiles (``Model.packages``, ``Model.compiles``); None with neither."""
    if packages.empty and compiles.empty:
        return None
    floor = releases.version_key(aoti_loads.PROMISED_FROM)
    groups: Dict[str, List[Pair]] = {"covered": [], "own": [], "before": [], "older": []}
    modes = set()
    if not packages.empty:
        table = packages.table
        tried = table["status"].map(artifacts.tried).astype(bool)
        passed = table["status"] == LoadStatus.PASS.value
        modes |= set(map(str, table.loc[tried, "mode"]))
        for (made, used), pair in _pairs(table, tried, passed, compile_table=False):
            if made is None or used is None:
                continue
            kind = "own" if made == used else "older" if used < made else "covered" if made >= floor else "before"
            groups[kind].append(pair)
    crossed: List[Pair] = []
    if not compiles.empty:
        table = compiles.table
        tried = table["status"].isin(AOTI_TRIED)
        modes |= set(map(str, table.loc[tried, "mode"]))
        crossed = [pair for _, pair in _pairs(table, tried, table["status"] == STAGE_OK, compile_table=True)]
    return AotiVerdict(
        promised_from=aoti_loads.PROMISED_FROM,
        covered=tuple(groups["covered"]),
        own=tuple(groups["own"]),
        before=tuple(groups["before"]),
        older=tuple(groups["older"]),
        compiles=tuple(crossed),
        modes=tuple(m for m in MODES if m in modes),
    )

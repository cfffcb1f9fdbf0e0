"""Saved-program epochs: ranges of releases on which each release loads the programs of the older ones.

A pure function over a load table (:func:`matrix.records.artifacts.table`: one row per saving
environment, loading environment, case and mode). Releases are the table's environment labels
(``saved`` and ``loaded``) in version order.

A pair of releases (saved on *s*, loaded on *l*) is *compatible* when the loading release tried
some of the programs saved on *s* (a load with a status rank: not ``not-applicable``, not
``untrusted``) and at least :data:`COMPATIBLE_SHARE` of those load and reproduce the saved
outputs (``pass``). The rest are the exceptions: single cases, not a change of format.

An *epoch* is a range of consecutive releases in which every pair *s* ≤ *l* is compatible: a
program saved on any release of the range loads on that release and on every newer one of the
range. A release that saved nothing (it only loaded) puts no condition on the range; a pair
with no load tried (the loading release has no ``torch.export.load``, or did not load them)
breaks it: there is no evidence that those programs load.

:func:`epochs` gives the maximal ranges, oldest first; a release none of whose neighbours reads
its programs is an epoch of its own. Maximal ranges may share releases (C reads nothing of A,
but B reads A's and C reads B's: A–B and B–C), and then both are given.

The same pairs, of any product (``matrix.contract.products``), judge upstream's promise where it makes one
(:func:`promise`: the compiled packages') and the compiles of older programs (:func:`.product_uses.verdicts`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

import pandas as pd

from matrix.contract.products import PROGRAM, Product
from matrix.contract.schema import MODES, LoadStatus, load_rank
from matrix.envs import releases as torch_releases
from matrix.records import store
from matrix.records.artifacts import LOADED_ENV, SAVED_ENV, Failure, common_failure, orders

# A pair of releases is compatible when at least this share of the programs tried loads and matches.
COMPATIBLE_SHARE = 0.5
# What older releases of an epoch make of its newer releases' programs.
BACKWARD = ("all", "some", "none", "untried")


@dataclass(frozen=True)
class Pair:
    """The uses of the products made on one release by another (a program saved on one, loaded on the other): how
    many were tried, how many passed, and the most common failure's text where it was asked for."""

    made: str  # the making environment's label (``saved``)
    used: str  # the using one's (``loaded``)
    tried: int
    passed: int
    failure: str = ""

    @property
    def compatible(self) -> bool:
        return self.tried > 0 and self.passed >= COMPATIBLE_SHARE * self.tried

    @property
    def kept(self) -> bool:
        return self.passed == self.tried


@dataclass(frozen=True)
class FailingCase:
    """A case whose program fails to load (or to match) within an epoch: its (saved, loaded) pairs and failure."""

    case: str
    mode: str
    pairs: Tuple[Tuple[str, str], ...]  # (saved, loaded), saving release then loading release in version order
    failure: Failure  # the most common failure among those loads


@dataclass(frozen=True)
class Epoch:
    """A range of releases whose programs load on the range's newer (and same) releases."""

    releases: Tuple[str, ...]  # version order
    programs: int  # (release, case, mode) saved on the range and tried on it
    untried: int  # those saved on the range whose loads there were none tried (untrusted, no torch.export.load)
    tried: int  # loads within the range, saved on a release no newer than the loading one
    passed: int
    # Whether the range's older releases read its newer releases' programs: every such pair
    # compatible ("all"), some ("some"), none ("none"), or no such load tried ("untried").
    backward: str
    exceptions: Tuple[FailingCase, ...]  # by case, then mode
    # Why the programs of the release just before the range do not load on its first release:
    # the most common failure there; None for the oldest epoch, or where that pair loads.
    cut: Optional[Failure] = None
    cut_from: Optional[str] = None  # that release
    # The programs saved on releases older than the range, loaded on its last release: tried, passed.
    older_tried: int = 0
    older_passed: int = 0

    @property
    def first(self) -> str:
        return self.releases[0]

    @property
    def last(self) -> str:
        return self.releases[-1]


def releases(loads: pd.DataFrame) -> List[str]:
    """Every release of a load table, saving or loading, in version order."""
    if loads.empty:
        return []
    keys: Dict[str, Tuple[Any, ...]] = {}
    for label_column, env in (("saved", SAVED_ENV), ("loaded", LOADED_ENV)):
        for row in loads[[label_column, *env]].drop_duplicates().itertuples(index=False, name=None):
            label, release, variant, python = (str(v) for v in row)
            keys.setdefault(label, (store.release_key(release), variant, store.release_key(python)))
    return sorted(keys, key=lambda label: keys[label])


def pairs(
    loads: pd.DataFrame, product: Product = PROGRAM, failure: Optional[Callable[[pd.DataFrame], str]] = None
) -> Dict[Tuple[str, str], Pair]:
    """Per (saved, loaded) of a ``product``'s table: the uses tried, those that passed, and ``failure`` of the pair's
    rows where given."""
    found: Dict[Tuple[str, str], Pair] = {}
    if loads.empty:
        return found
    tried = loads["status"].isin(product.tried)
    flags = loads.assign(_tried=tried.astype(int), _passed=(loads["status"] == product.statuses[0]).astype(int))
    for (saved, loaded), group in flags.groupby(["saved", "loaded"], sort=False):
        key = (str(saved), str(loaded))
        count, passed = int(group["_tried"].sum()), int(group["_passed"].sum())
        said = failure(group) if failure is not None and passed < count else ""
        found[key] = Pair(key[0], key[1], count, passed, said)
    return found


def epochs(loads: pd.DataFrame) -> List[Epoch]:
    """The maximal epochs of a load table, oldest first (see the module docstring)."""
    order = releases(loads)
    if not order:
        return []
    known = pairs(loads)
    savers = set(loads["saved"].astype(str))

    def fits(first: int, last: int) -> bool:
        # A release that saved nothing has no programs to fail: its pairs hold whatever they are.
        return all(
            known.get((order[s], order[t]), Pair(order[s], order[t], 0, 0)).compatible
            for s in range(first, last + 1)
            if order[s] in savers
            for t in range(s, last + 1)
        )

    # The furthest release each start reaches; a range that fits holds only ranges that fit,
    # so a start's reach never falls below its predecessor's.
    reach: List[int] = []
    for first in range(len(order)):
        last = max(first, reach[-1] if reach else first)
        while last + 1 < len(order) and fits(first, last + 1):
            last += 1
        reach.append(last)
    found = []
    for first, last in enumerate(reach):
        if first and last <= reach[first - 1]:
            continue  # inside the range of the start before
        found.append(_epoch(loads, order, first, last, known))
    return found


def _epoch(loads: pd.DataFrame, order: List[str], first: int, last: int, known: Dict[Tuple[str, str], Pair]) -> Epoch:
    span = order[first : last + 1]
    position = {label: i for i, label in enumerate(span)}
    inside = loads[loads["saved"].isin(span) & loads["loaded"].isin(span)]
    older_or_same = [position[s] <= position[t] for s, t in zip(inside["saved"], inside["loaded"])]
    forward = inside[pd.Series(older_or_same, index=inside.index, dtype=bool)]
    tried = forward[forward["status"].map(lambda s: load_rank(s) is not None).astype(bool)]
    backward_pairs = [known[(s, t)] for s in span for t in span if position[s] > position[t] and (s, t) in known]
    backward_tried = [p for p in backward_pairs if p.tried]
    if not backward_tried:
        backward = "untried"
    elif all(p.compatible for p in backward_tried):
        backward = "all"
    elif any(p.compatible for p in backward_tried):
        backward = "some"
    else:
        backward = "none"
    cut = cut_from = None
    if first:
        before = order[first - 1]
        pair = known.get((before, order[first]))
        if pair is not None and pair.tried and not pair.compatible:
            cut_from = before
            cut = common_failure(loads[(loads["saved"] == before) & (loads["loaded"] == order[first])])
    older = [known[(s, span[-1])] for s in order[:first] if (s, span[-1]) in known]
    program = ["saved", "case", "mode", "with_set"]
    programs = len(tried.drop_duplicates(program))
    return Epoch(
        releases=tuple(span),
        programs=programs,
        untried=len(forward.drop_duplicates(program)) - programs,
        tried=len(tried),
        passed=int((tried["status"] == LoadStatus.PASS.value).sum()),
        backward=backward,
        exceptions=tuple(_exceptions(tried, position)),
        cut=cut,
        cut_from=cut_from,
        older_tried=sum(p.tried for p in older),
        older_passed=sum(p.passed for p in older),
    )


def _exceptions(tried: pd.DataFrame, position: Dict[str, int]) -> List[FailingCase]:
    failing = tried[tried["status"] != LoadStatus.PASS.value]
    found = []
    mode_order = {m: i for i, m in enumerate(MODES)}
    groups = sorted(
        failing.groupby(["case", "mode"], sort=False), key=lambda g: (str(g[0][0]), mode_order.get(str(g[0][1]), 99))
    )
    for (case, mode), group in groups:
        where = sorted(
            {(str(s), str(t)) for s, t in zip(group["saved"], group["loaded"])},
            key=lambda pair: (position[pair[0]], position[pair[1]]),
        )
        failure = common_failure(group)
        if failure is not None:
            found.append(FailingCase(str(case), str(mode), tuple(where), failure))
    return found


@dataclass(frozen=True)
class Promise:
    """What the records say of upstream's promise for a product (``Product.promised_from``: one made on that release
    or later is usable on every newer release), each (made-on, used-on) pair with a use tried in one of these,
    each tuple in making, then using order (two builds of one release are that release's own)."""

    promised_from: str
    covered: Tuple[Pair, ...]  # used on a newer release, made on promised_from or later: kept or broken
    own: Tuple[Pair, ...]  # each release using its own products, which the promise takes for granted
    before: Tuple[Pair, ...]  # made before promised_from, used on a newer release
    older: Tuple[Pair, ...]  # used on an older release than the making one, which nothing promises

    @property
    def broken(self) -> Tuple[Pair, ...]:
        return tuple(p for p in self.covered if not p.kept)

    @property
    def own_failing(self) -> Tuple[Pair, ...]:
        return tuple(p for p in self.own if not p.kept)


def version(value: Any) -> Optional[Any]:
    """A release's version (``releases.version_key``), None for what is not a torch version."""
    try:
        return torch_releases.version_key(str(value))
    except torch_releases.ReleaseError:
        return None


def tried_pairs(
    found: pd.DataFrame, product: Product, failure: Callable[[pd.DataFrame], str]
) -> List[Tuple[Tuple[Any, Any], Pair]]:
    """Each (made, used) :func:`pairs` of a product's table with a use tried, in the table's orders, with the two
    releases' :func:`version`; ``failure`` names the most common failure of a pair's rows."""
    made_order, used_order = orders(found)
    made = dict(zip(found["saved"], found["saved_torch_version"]))
    used = dict(zip(found["loaded"], found["torch_version"]))
    tried = [p for p in pairs(found, product, failure).values() if p.tried]
    tried.sort(key=lambda p: (made_order.index(p.made), used_order.index(p.used)))
    return [((version(made[p.made]), version(used[p.used])), p) for p in tried]


def promise(found: pd.DataFrame, product: Product, failure: Callable[[pd.DataFrame], str]) -> Promise:
    """Upstream's promise for ``product`` against its table: each pair tried, by what the promise says of it."""
    floor = torch_releases.version_key(str(product.promised_from))
    groups: Dict[str, List[Pair]] = {"covered": [], "own": [], "before": [], "older": []}
    for (made, used), pair in tried_pairs(found, product, failure):
        if made is not None and used is not None:
            kind = "own" if made == used else "older" if used < made else "covered" if made >= floor else "before"
            groups[kind].append(pair)
    return Promise(str(product.promised_from), **{kind: tuple(found) for kind, found in groups.items()})

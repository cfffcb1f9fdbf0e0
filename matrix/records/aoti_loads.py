"""AOTInductor packages compiled on one release and loaded on another: the package table, its shares and epochs.

Pure functions over ``Store.aoti_loads`` (one row per ``aoti-load`` record, columns
``schema.AOTI_LOAD_KEYS``). A package is compiled on the release that saved its program, and the
records name that release as a program's load does (``saved_*``), so the package table has the
saved-program table's shape and its functions apply: one row per (compiled-on, loaded-on, case,
mode, ``--with`` set), the latest record winning (:func:`matrix.records.artifacts.table`), the share
that loads and matches per mode (:func:`matrix.records.artifacts.heatmap`), and the epochs
(:func:`matrix.records.epochs.epochs`) with the programs' rule: a range of releases where a package
compiled on any of them loads and matches on that release and every newer one of the range (for
each pair, at least half of the packages tried). A load not tried (the loading release has no
loader for the file, the machine no C++ compiler, the folder is untrusted) is no failure, and a
pair with none tried breaks a range, as for programs.

Upstream promises that a package loads on newer releases from 2.6 on and not on older ones
(backward compatibility, not forward): an epoch that starts at 2.6 or later and whose older
releases do not read its newer ones' packages is what that promise predicts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

import pandas as pd

from matrix.contract.products import PACKAGE
from matrix.contract.schema import LoadStatus
from matrix.envs import releases
from matrix.records import artifacts, epochs

# The first release whose packages upstream promises to load on newer releases.
PROMISED_FROM = str(PACKAGE.promised_from)


@dataclass(frozen=True)
class Broken:
    """A pair the promise covers where some package tried did not load and match: how many, and why."""

    compiled: str
    loaded: str
    failed: int
    tried: int
    failure: Optional[artifacts.Failure]  # the most common failure of the pair


@dataclass(frozen=True)
class Promise:
    """What the records say of upstream's promise: packages compiled on PROMISED_FROM or later load and match on
    every newer release. ``pairs``: (compiled-on, loaded-on) pairs it covers with a load tried; ``broken`` those
    where some package did not load and match, in version order; ``forward``: the pairs the other way (loaded
    on an older release) tried, and ``forward_passed`` those where every package tried loaded and matched."""

    pairs: int
    broken: Tuple[Broken, ...]
    forward: int
    forward_passed: int

    @property
    def kept(self) -> int:
        return self.pairs - len(self.broken)


@dataclass(frozen=True)
class PackageLoads(artifacts.Uses):
    """The package loads of a set of records: made is compiled-on, used loaded-on; shares is artifacts.heatmap."""

    epochs: Tuple[epochs.Epoch, ...]
    promise: Promise


def table(records: pd.DataFrame) -> pd.DataFrame:
    """One row per (compiled-on, loaded-on, case, mode, with_set) of ``Store.aoti_loads``, the latest record
    winning; columns ``saved`` (the compiling environment's label), ``loaded`` and AOTI_LOAD_KEYS."""
    return artifacts.product_table(records, PACKAGE)[0]


def judge(records: pd.DataFrame) -> PackageLoads:
    """The package loads of ``Store.aoti_loads``: the table, its orders, shares and epochs."""
    found, compiled, loaded = artifacts.product_table(records, PACKAGE)
    shares = artifacts.heatmap(found)
    return PackageLoads(found, tuple(compiled), tuple(loaded), shares, tuple(epochs.epochs(found)), promise(found))


def version(value: Any) -> Optional[Any]:
    """A release's version (``releases.version_key``), None for what is not a torch version."""
    try:
        return releases.version_key(str(value))
    except releases.ReleaseError:
        return None


def promise(found: pd.DataFrame) -> Promise:
    """Upstream's promise (see the module docstring) against a package :func:`table`: each pair of releases it
    covers, and the pairs loaded on an older release than the one that compiled (builds of one release are
    neither)."""
    if found.empty:
        return Promise(0, (), 0, 0)
    floor = releases.version_key(PROMISED_FROM)
    compiled_order, loaded_order = artifacts.orders(found)
    tried = found[found["status"].map(artifacts.tried).astype(bool)]
    broken: List[Broken] = []
    pairs = forward = forward_passed = 0
    for (compiled, loaded), group in tried.groupby(["saved", "loaded"], sort=False):
        made, used = version(group["saved_torch_version"].iloc[0]), version(group["torch_version"].iloc[0])
        if made is None or used is None or made == used:
            continue
        passed = int((group["status"] == LoadStatus.PASS.value).sum())
        if used < made:
            forward += 1
            forward_passed += int(passed == len(group))
        elif made >= floor:
            pairs += 1
            if passed < len(group):
                cause = artifacts.common_failure(group)
                broken.append(Broken(str(compiled), str(loaded), len(group) - passed, len(group), cause))
    position = {label: i for i, label in enumerate(compiled_order)}
    across = {label: i for i, label in enumerate(loaded_order)}
    broken.sort(key=lambda b: (position.get(b.compiled, 0), across.get(b.loaded, 0)))
    return Promise(pairs, tuple(broken), forward, forward_passed)

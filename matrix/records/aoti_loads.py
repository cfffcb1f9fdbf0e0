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

The AOTInductor verdict (:func:`verdict`) is that promise pair by pair (:class:`.epochs.Promise`: each
(compiled-on, loaded-on) pair with a load tried is covered, the release's own, before the promise, or loaded on
an older release), then the compiles of older programs (:mod:`.aoti_compiles`), kept or broken per pair the same
way; the modes tried are named, so that a mode that did not run is said, not counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Set, Tuple

import pandas as pd

from matrix.contract.products import COMPILE, PACKAGE
from matrix.contract.schema import MODES
from matrix.records import aoti_compiles, artifacts, epochs
from matrix.records.epochs import Pair, Promise

# The first release whose packages upstream promises to load on newer releases.
PROMISED_FROM = str(PACKAGE.promised_from)


@dataclass(frozen=True)
class PackageLoads(artifacts.Uses):
    """The package loads of a set of records: made is compiled-on, used loaded-on; shares is artifacts.heatmap."""

    epochs: Tuple[epochs.Epoch, ...]
    promise: Promise


def judge(records: pd.DataFrame) -> PackageLoads:
    """The package loads of ``Store.aoti_loads``: the table, its orders, shares, epochs and :func:`promise`."""
    found, compiled, loaded = artifacts.product_table(records, PACKAGE)
    shares = artifacts.heatmap(found)
    return PackageLoads(found, tuple(compiled), tuple(loaded), shares, tuple(epochs.epochs(found)), promise(found))


def promise(found: pd.DataFrame) -> Promise:
    """Upstream's promise (see the module docstring) against a package :func:`.artifacts.table`, each pair's
    failure the most common one (:func:`.artifacts.common_failure`)."""
    return epochs.promise(found, PACKAGE, _common_failure)


def _common_failure(rows: pd.DataFrame) -> str:
    found = artifacts.common_failure(rows, PACKAGE)
    return found.text if found is not None else ""


@dataclass(frozen=True)
class AotiVerdict(Promise):
    """What the package and compile tables say, pair by pair: the packages' promise, then the compiles (each tuple in
    making, then using order)."""

    compiles: Tuple[Pair, ...]  # exported on an older release, compiled on a newer one
    modes: Tuple[str, ...]  # the modes packages or compiles were tried in


def verdict(packages: PackageLoads, compiles: aoti_compiles.Compiles) -> Optional[AotiVerdict]:
    """The verdict of a report's packages and compiles (``Model.packages``, ``Model.compiles``); None with neither."""
    if packages.empty and compiles.empty:
        return None
    modes: Set[str] = set()
    for uses, product in ((packages, PACKAGE), (compiles, COMPILE)):
        if not uses.empty:
            modes |= set(map(str, uses.table.loc[uses.table["status"].isin(product.tried), "mode"]))
    crossed = epochs.tried_pairs(compiles.table, COMPILE, aoti_compiles.common_failure) if not compiles.empty else []
    compiled = tuple(pair for _, pair in crossed)
    return AotiVerdict(**vars(packages.promise), compiles=compiled, modes=tuple(m for m in MODES if m in modes))

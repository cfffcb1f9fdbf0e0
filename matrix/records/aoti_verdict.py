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
from typing import Optional, Set, Tuple

from matrix.contract.products import COMPILE, PACKAGE
from matrix.contract.schema import MODES
from matrix.records import aoti_compiles, aoti_loads
from matrix.records.epochs import Pair, Promise, tried_pairs


@dataclass(frozen=True)
class AotiVerdict(Promise):
    """What the package and compile tables say, pair by pair: the packages' :class:`.epochs.Promise`, then the
    compiles (each tuple in making, then using order)."""

    compiles: Tuple[Pair, ...]  # exported on an older release, compiled on a newer one
    modes: Tuple[str, ...]  # the modes packages or compiles were tried in


def judge(packages: aoti_loads.PackageLoads, compiles: aoti_compiles.Compiles) -> Optional[AotiVerdict]:
    """The verdict of a report's packages and compiles (``Model.packages``, ``Model.compiles``); None with neither."""
    if packages.empty and compiles.empty:
        return None
    modes: Set[str] = set()
    for uses, product in ((packages, PACKAGE), (compiles, COMPILE)):
        if not uses.empty:
            modes |= set(map(str, uses.table.loc[uses.table["status"].isin(product.tried), "mode"]))
    crossed = tried_pairs(compiles.table, COMPILE, aoti_compiles.common_failure) if not compiles.empty else []
    compiled = tuple(pair for _, pair in crossed)
    return AotiVerdict(**vars(packages.promise), compiles=compiled, modes=tuple(m for m in MODES if m in modes))

"""Builds of one release compared: a CPU or CUDA-index build against PyPI's build of that release.

Two builds of one release (``2.13.0+cpu`` from the CPU index and PyPI's ``2.13.0+cu130``) run the
same torch source; where their cells differ, the difference is the build's, not the release's.
So they are never in one release series (:mod:`matrix.records.transitions`): each build of
another variant is compared with PyPI's build of its release, cell by cell (same case, mode and
``--with`` set, newest Python of each), with the same rules as a transition
(:func:`transitions.compare`): a status difference only between ranked statuses, a graph
difference only between hashes of one scheme, an op difference per program, a timing difference
only on enough runs. Read "regression" as "worse on this build than on PyPI's", "fix" as "better".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Tuple

import pandas as pd

from matrix.contract.schema import rank
from matrix.records import completeness, store, transitions

# The variant every other build of a release is compared with.
REFERENCE = "pypi"

Row = Dict[str, Any]
Build = Tuple[str, str]  # (torch version, variant)
Cell = Tuple[str, str, str]  # (case, mode, --with set)


@dataclass(frozen=True)
class BuildComparison:
    """One build compared with PyPI's build of its release."""

    release: str  # the release without its local tag, e.g. 2.13.0
    reference: str  # PyPI's build, e.g. 2.13.0+cu130
    build: str  # the other build, e.g. 2.13.0+cpu
    variant: str  # the other build's variant
    compared: int  # cells (case, mode, --with set) both builds hold
    differences: Tuple[Row, ...]  # transitions.compare's rows, from the reference to the build
    incomplete: bool = False  # one of the two builds lacks a dependency set (completeness)
    # Cells whose statuses differ where one has no rank (case-error, not-applicable): not compared, but counted.
    unranked: Tuple[Row, ...] = ()

    def count(self, *kinds: str) -> int:
        return sum(1 for d in self.differences if d["kind"] in kinds)

    @property
    def worse(self) -> int:
        """Cells worse on the build than on PyPI's: a worse status, wrong numbers, a stage that fails."""
        return self.count(*transitions.REGRESSIONS)

    @property
    def better(self) -> int:
        return self.count(*transitions.FIXES)


def compare(cells: pd.DataFrame) -> Tuple[BuildComparison, ...]:
    """Every build of a variant other than REFERENCE whose release PyPI's build also ran, in version order.

    ``cells`` is the cell table (``tables.cells``), with completeness's column where the model marked it.
    """
    if cells.empty or cells["variant"].nunique() < 2:
        return ()  # one variant: no build of a release to compare with another
    by_build = cells_by_build(cells)
    references = {transitions.base(r): (r, v) for r, v in by_build if v == REFERENCE}
    found = []
    for release, variant in sorted(by_build, key=lambda b: (store.release_key(b[0]), b[1])):
        reference = references.get(transitions.base(release))
        if variant == REFERENCE or reference is None:
            continue
        theirs, mine = by_build[reference], by_build[(release, variant)]
        shared, differences = compared(theirs, mine)
        found.append(
            BuildComparison(
                release=transitions.base(release),
                reference=reference[0],
                build=release,
                variant=variant,
                compared=len(shared),
                differences=tuple(differences),
                incomplete=_incomplete(theirs.values()) or _incomplete(mine.values()),
                unranked=tuple(mine[key] for key in shared if _unranked(theirs[key], mine[key])),
            )
        )
    return tuple(found)


def cells_by_build(cells: pd.DataFrame) -> Dict[Build, Dict[Cell, Row]]:
    """Each build's cells (release, variant), by case, mode and ``--with`` set; of each, the newest Python's."""
    by_build: Dict[Build, Dict[Cell, Row]] = {}
    for row in store.newest_python(cells).to_dict("records"):
        with_set = row.get("with_set")
        key = (str(row["case"]), str(row["mode"]), with_set if isinstance(with_set, str) else "")
        by_build.setdefault((str(row["release"]), str(row["variant"])), {})[key] = row
    return by_build


def compared(theirs: Mapping[Cell, Row], mine: Mapping[Cell, Row]) -> Tuple[List[Cell], List[Row]]:
    """The cells two builds both hold, and the transitions (:func:`transitions.compare`) from ``theirs`` to ``mine``."""
    shared = sorted(set(theirs) & set(mine))
    return shared, [move for key in shared for move in transitions.compare(theirs[key], mine[key])]


def _unranked(reference: Row, build: Row) -> bool:
    """Whether two cells' statuses differ and one of them has no rank, so that neither is better."""
    before, after = reference.get("status"), build.get("status")
    return before != after and (rank(before) is None or rank(after) is None)


def _incomplete(rows: Iterable[Row]) -> bool:
    return any(bool(row.get(completeness.COLUMN) or False) for row in rows)

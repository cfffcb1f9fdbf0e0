"""What a matrix covers, counted apart: releases, builds, environments, cases, modes and cells.

A release is a torch version without its local tag; a build is one release from one variant
(``2.13.0+cpu`` from the cpu index and ``2.13.0+cu130`` from PyPI are two builds of 2.13.0); an
environment is a build under one Python with one ``--with`` set. A cell is one case in one
mode in one environment, so a matrix holds at most cases × modes × environments cells: those
without a record are cases not run there, or whose environment failed to install.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Set, Tuple

import pandas as pd

from matrix.records import store, transitions

Build = Tuple[str, str]  # (torch version, variant)
Environment = Tuple[str, str, str, str]  # (torch version, variant, python, --with set or "")


@dataclass(frozen=True)
class Scope:
    """The counts behind "N cells of C cases × M modes × B builds", each counted once."""

    releases: Tuple[str, ...]  # torch versions without their local tag, in version order
    builds: Tuple[Build, ...]  # in version order
    environments: int  # builds × Pythons × --with sets that have a cell or a failed install
    cases: int
    modes: int
    cells: int  # cells with a record

    @property
    def possible(self) -> int:
        """Cells the matrix would hold with a record for every case, mode and environment."""
        return self.cases * self.modes * self.environments

    @property
    def unrecorded(self) -> int:
        """Cells of :attr:`possible` without a record."""
        return self.possible - self.cells

    @property
    def one_environment_per_build(self) -> bool:
        """Whether each build ran under one Python with no ``--with`` set, so that builds and environments agree."""
        return self.environments == len(self.builds)


# The scope of no records.
NONE = Scope(releases=(), builds=(), environments=0, cases=0, modes=0, cells=0)


def of(cells: pd.DataFrame, env_errors: pd.DataFrame) -> Scope:
    """The scope of a cell table (``tables.cells``) and the env-errors beside it.

    A build or environment whose install failed counts: the matrix tried it, and its cells are the ones without
    a record. An env-error of a dependency set alone (``dependency_set``) adds no environment: torch installed.
    """
    environments: Set[Environment] = {
        (str(release), str(variant), str(python), with_set if isinstance(with_set, str) else "")
        for release, variant, python, with_set in _rows(cells, "release", "variant", "python", "with_set")
    }
    builds: Set[Build] = {(release, variant) for release, variant, _, _ in environments}
    for version, variant, python, dependency_set in _rows(
        env_errors, "torch_version", "variant", "python", "dependency_set"
    ):
        builds.add((str(version), str(variant)))
        if not (isinstance(dependency_set, str) and dependency_set):
            environments.add((str(version), str(variant), str(python), ""))
    ordered = sorted(builds, key=lambda b: (store.release_key(b[0]), b[1]))
    return Scope(
        releases=tuple(dict.fromkeys(transitions.base(version) for version, _ in ordered)),
        builds=tuple(ordered),
        environments=len(environments),
        cases=int(cells["case"].nunique()) if "case" in cells.columns else 0,
        modes=int(cells["mode"].nunique()) if "mode" in cells.columns else 0,
        cells=len(cells),
    )


def _rows(frame: pd.DataFrame, *names: str) -> Iterable[Tuple[Any, ...]]:
    """The values of the columns ``names``, row by row; None for a column the frame lacks."""
    if frame.empty:
        return []
    columns = [frame[n] if n in frame.columns else pd.Series(None, index=frame.index, dtype=object) for n in names]
    return zip(*(c.tolist() for c in columns))

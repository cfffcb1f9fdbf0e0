"""Builds whose environments did not all install: what an incomplete build lacks, and which cells are its.

A build (a torch version from one variant) is *incomplete* when torch installed, so that it has
cells, but a dependency set of its cases could not be had: an env-error record names the set
(``dependency_set``), and no environment of that set was made after it. Its cells are real,
but the cases of the missing set are not there, and what its cells say of the cases that ran
is not comparable with a build that ran them all. So the report marks the build wherever it
names it, and leaves it out of every transition and every headline count: an installer or
network failure never reads as a change of torch.

A build whose install failed for torch itself has no cells at all: it is listed with the
environments that failed to install and breaks the release series; it is not *incomplete*.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, FrozenSet, Iterable, List, Tuple

import pandas as pd

from matrix.records import store

Build = Tuple[str, str]  # (torch version, variant)
# The column of the cell table that says its build is incomplete (see :func:`mark`).
COLUMN = "incomplete"
# What an environment's label carries where its build is incomplete.
MARK = "(incomplete)"


@dataclass(frozen=True)
class Missing:
    """A dependency set a build could not install, and why."""

    dependency_set: str
    python: str
    error_type: str
    error_message: str


@dataclass(frozen=True)
class IncompleteBuild:
    """A build with cells and at least one dependency set that could not be had."""

    release: str  # the torch version, e.g. 2.13.0+cpu
    variant: str
    missing: Tuple[Missing, ...]

    @property
    def build(self) -> Build:
        return (self.release, self.variant)

    @property
    def sets(self) -> Tuple[str, ...]:
        """The names of the sets it lacks, each once, in order."""
        return tuple(dict.fromkeys(m.dependency_set for m in self.missing))


def find(cells: pd.DataFrame, env_errors: pd.DataFrame, environments: pd.DataFrame) -> Tuple[IncompleteBuild, ...]:
    """The incomplete builds of a cell table (``tables.cells``), in version order.

    An env-error of a set counts while no environment record of the same build, Python and set
    started after it finished: a set that installed on a later try is not missing.
    """
    if cells.empty or env_errors.empty or "dependency_set" not in env_errors.columns:
        return ()
    with_cells = set(zip(cells["release"].astype(str), cells["variant"].astype(str)))
    installed: Dict[Tuple[str, ...], str] = {}
    for row in _records(environments):
        key = _set_key(row)
        started = _text(row.get("started_at"))
        installed[key] = max(installed.get(key, ""), started)
    found: Dict[Build, List[Missing]] = {}
    for row in _records(env_errors):
        dependency_set = _text(row.get("dependency_set"))
        build = (_text(row.get("torch_version")), _text(row.get("variant")))
        if not dependency_set or build not in with_cells:
            continue
        finished = _text(row.get("finished_at"))
        later = installed.get(_set_key(row))
        if later is not None and later > finished:
            continue
        found.setdefault(build, []).append(
            Missing(
                dependency_set=dependency_set,
                python=_text(row.get("python")),
                error_type=_text(row.get("error_type")),
                error_message=_text(row.get("error_message")),
            )
        )
    ordered = sorted(found, key=lambda b: (store.release_key(b[0]), b[1]))
    return tuple(IncompleteBuild(release, variant, tuple(found[(release, variant)])) for release, variant in ordered)


def builds(incomplete: Iterable[IncompleteBuild]) -> FrozenSet[Build]:
    return frozenset(found.build for found in incomplete)


def mark(cells: pd.DataFrame, incomplete: Iterable[IncompleteBuild]) -> pd.DataFrame:
    """The cell table with the column COLUMN: True for the cells of an incomplete build."""
    left_out = builds(incomplete)
    if cells.empty:
        return cells.assign(**{COLUMN: pd.Series(dtype=bool)})
    flags = [(str(r), str(v)) in left_out for r, v in zip(cells["release"], cells["variant"])]
    return cells.assign(**{COLUMN: pd.Series(flags, index=cells.index, dtype=bool)})


def superseded(rows: pd.DataFrame, incomplete: Iterable[IncompleteBuild], release: str = "release") -> pd.DataFrame:
    """The cells (or the loads, whose build is ``torch_version``: pass ``release``) without those of a set whose
    latest install failed: they ran in an environment made before that failure (another resolution, another
    index), and the set's env-error, not those rows, says what installing the set gives now. Running the set
    again, once it installs, brings them back."""
    # An env-error that names no Python (an older record) stands for every Python of its build and set.
    missing = {
        (found.release, found.variant, m.python, m.dependency_set) for found in incomplete for m in found.missing
    }
    if rows.empty or not missing or "dependency_set" not in rows.columns:
        return rows
    keys = zip(rows[release], rows["variant"], rows["python"], rows["dependency_set"])
    kept = [
        not {(_text(r), _text(v), _text(p), _text(s)), (_text(r), _text(v), "", _text(s))} & missing
        for r, v, p, s in keys
    ]
    return rows[pd.Series(kept, index=rows.index, dtype=bool)]


def complete(cells: pd.DataFrame) -> pd.DataFrame:
    """The cells of complete builds only: what transitions and headline counts are made of."""
    if COLUMN not in cells.columns or cells.empty:
        return cells
    return cells[~cells[COLUMN].astype(bool)]


def _set_key(row: Dict[str, Any]) -> Tuple[str, ...]:
    """The build, Python and dependency set of an environment or env-error record."""
    return tuple(_text(row.get(k)) for k in ("torch_version", "variant", "python", "dependency_set"))


def _records(frame: pd.DataFrame) -> List[Dict[str, Any]]:
    return frame.to_dict("records") if not frame.empty else []


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""

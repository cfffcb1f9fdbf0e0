"""The sample of releases a report rests on: what a reader must know to read a change between two releases.

- :func:`sample`: the minor series of the range that were not run, the build changes (CPU / CUDA /
  ROCm) between compared releases with the regressions and fixes found across them, and each
  release's default of ``export(strict=...)`` (:func:`strict_defaults`).
- :func:`build_names`: each release's build, from its environment records, else its local tag;
  :func:`changes_build` says whether two releases are builds of different kinds.
- :func:`minor_key`: a minor series as numbers, for ordering.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import pandas as pd

from matrix.envs import releases as release_list
from matrix.records import store
from matrix.records.transitions import FIXES, REGRESSIONS


@dataclass(frozen=True)
class BuildChange:
    """Two compared releases of different builds: a change between them mixes release and build."""

    before: str
    after: str
    build_before: str  # e.g. "CUDA 12.8", "CPU"
    build_after: str
    regressions: int  # regressions and fixes found on that transition
    fixes: int


@dataclass(frozen=True)
class StrictDefault:
    """A release's default of ``torch.export.export(strict=...)``: ``strict``, ``non-strict``, or None if unknown."""

    release: str
    mode: Optional[str]
    keyword: bool  # whether export() takes ``strict`` at all (without it, export is strict)


@dataclass(frozen=True)
class Sample:
    """What the sample of releases leaves out or mixes."""

    minors: Tuple[str, ...]  # the minor series from the oldest run to the newest (known to the matrix, or run)
    run: Tuple[str, ...]  # those run
    build_changes: Tuple[BuildChange, ...]
    strict_defaults: Tuple[StrictDefault, ...]  # one per release, in version order

    @property
    def not_run(self) -> Tuple[str, ...]:
        return tuple(m for m in self.minors if m not in self.run)

    @property
    def strict_flips(self) -> Tuple[Tuple[StrictDefault, StrictDefault], ...]:
        """Consecutive releases (of those whose default is known) whose default differs."""
        known = [d for d in self.strict_defaults if d.mode is not None]
        return tuple((a, b) for a, b in zip(known, known[1:]) if a.mode != b.mode)


def build_names(cells: pd.DataFrame, environments: pd.DataFrame) -> Dict[str, str]:
    """Per release: its build, ``CUDA 12.8`` or ``CPU``, from the environment records, else from its local tag."""
    found: Dict[str, str] = {}
    if not environments.empty and "torch_version" in environments.columns:
        cuda = environments["cuda_version"] if "cuda_version" in environments.columns else None
        for i, release in enumerate(environments["torch_version"]):
            if not isinstance(release, str) or release in found:
                continue
            version = cuda.iloc[i] if cuda is not None else None
            if isinstance(version, str) and version:
                found[release] = "CUDA %s" % version
            elif cuda is not None:
                found[release] = "CPU"
    for release in store.ordered(cells["release"]) if not cells.empty else []:
        if release not in found:
            name = _build_of_tag(release)
            if name is not None:
                found[release] = name
    return found


def _build_of_tag(release: str) -> Optional[str]:
    tag = release.split("+", 1)[1] if "+" in release else ""
    if tag == "cpu":
        return "CPU"
    if tag.startswith("cu") and tag[2:].isdigit() and len(tag) > 3:
        return "CUDA %s.%s" % (tag[2:-1], tag[-1])
    if tag.startswith("rocm"):
        return "ROCm %s" % tag[4:]
    return None


def _family(build: Optional[str]) -> Optional[str]:
    return build.split(" ", 1)[0] if build else None


def changes_build(builds: Mapping[str, str], before: str, after: str) -> bool:
    """Whether two releases are builds of different kinds (CPU, CUDA, ROCm), both known."""
    was, now = _family(builds.get(before)), _family(builds.get(after))
    return was is not None and now is not None and was != now


def sample(
    cells: pd.DataFrame,
    moves: pd.DataFrame,
    environments: pd.DataFrame,
    compared: Sequence[Tuple[str, str]] = (),
    known_releases: Sequence[str] = (),
    builds: Optional[Mapping[str, str]] = None,
) -> Sample:
    """The minor series not run, the build changes between ``compared`` releases (older, newer), the default
    ``strict``."""
    run = store.ordered(cells["release"]) if not cells.empty else []
    minors_run = _minors(run)
    minors: Tuple[str, ...] = ()
    if minors_run:
        low, high = minor_key(minors_run[0]), minor_key(minors_run[-1])
        every = set(minors_run) | {m for m in _minors(known_releases) if low <= minor_key(m) <= high}
        minors = tuple(sorted(every, key=minor_key))
    names = dict(builds) if builds is not None else build_names(cells, environments)
    changes = []
    for before, after in compared:
        if not changes_build(names, before, after):
            continue
        step = moves[(moves["before"] == before) & (moves["after"] == after)] if not moves.empty else moves
        changes.append(
            BuildChange(
                before,
                after,
                names[before],
                names[after],
                int(step["kind"].isin(REGRESSIONS).sum()) if not step.empty else 0,
                int(step["kind"].isin(FIXES).sum()) if not step.empty else 0,
            )
        )
    return Sample(minors, tuple(minors_run), tuple(changes), tuple(strict_defaults(environments, run)))


def _minors(versions: Sequence[str]) -> List[str]:
    found = set()
    for version in versions:
        try:
            found.add(release_list.minor_of(str(version)))
        except release_list.ReleaseError:
            continue  # not a version: it takes no part in the range
    return sorted(found, key=minor_key)


def minor_key(minor: str) -> Tuple[int, ...]:
    """A minor series (``2.10``) as numbers, for ordering."""
    return tuple(int(part) for part in minor.split(".") if part.isdigit())


def strict_defaults(environments: pd.DataFrame, order: Sequence[str]) -> List[StrictDefault]:
    """Per release of ``order``: the default of ``export(strict=...)`` its environment records name."""
    if environments.empty or "torch_version" not in environments.columns:
        return [StrictDefault(r, None, True) for r in order]
    found = []
    for release in order:
        rows = environments[environments["torch_version"] == release]
        values = [v for v in rows.get("strict_default", pd.Series(dtype=object)) if isinstance(v, bool)]
        keyword = [
            c.get("export.strict")
            for c in rows.get("capabilities", pd.Series(dtype=object))
            if isinstance(c, dict) and isinstance(c.get("export.strict"), bool)
        ]
        if values:
            found.append(StrictDefault(release, "strict" if values[0] else "non-strict", True))
        elif keyword and not keyword[0]:
            found.append(StrictDefault(release, "strict", False))  # no keyword: export is strict
        else:
            found.append(StrictDefault(release, None, True))
    return found

"""Companion libraries: the version of a case's library that works with each torch series.

The table is data (``companions.toml``): per library, a requirement per minor series, and whether
the library is compiled against one torch build. ``constraints`` turns it into what an environment
installs beside a set's own requirements. :func:`newest_working` is the search that finds its bounds
again; the command that runs a case in environments to do so is :mod:`matrix.commands.companion_probe`.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from packaging.version import InvalidVersion, Version

from ..contract import dependencies
from ..contract.errors import UserError
from ..contract.schema import first_line
from .builds import Build

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the host runs on 3.9 and 3.10 too
    import tomli as tomllib

TABLE = Path(__file__).with_name("companions.toml")
NONE = "none"


class CompanionError(UserError):
    """A malformed companions.toml; the message names the library."""


@dataclass(frozen=True)
class Companion:
    """One library: a requirement per minor series, and whether it is built against torch."""

    name: str
    series: Mapping[str, str] = field(default_factory=dict)
    compiled: bool = False
    offset: Optional[int] = None  # its minor version is torch's plus this (torchvision: 15)


@functools.cache
def load(path: Path = TABLE) -> Dict[str, Companion]:
    """The companions table, read once per process (a Spec's requirements ask for it each time)."""
    with open(path, "rb") as f:
        table = tomllib.load(f)
    found: Dict[str, Companion] = {}
    for name, entry in table.items():
        series = entry.get("series", {})
        if not isinstance(series, dict) or not all(isinstance(v, str) for v in series.values()):
            raise CompanionError("%s: [%s] series must map minor series to requirement text" % (path, name))
        offset = entry.get("offset")
        if offset is not None and not isinstance(offset, int):
            raise CompanionError("%s: [%s] offset must be a whole number" % (path, name))
        found[dependencies.name_of(name) or name] = Companion(name, series, bool(entry.get("compiled")), offset)
    return found


def _versioned(requirement: str) -> bool:
    """Whether a requirement says which versions it takes (``transformers==4.57.6``, not ``timm[extra]``)."""
    return any(mark in dependencies.canonical(requirement).split(";", 1)[0] for mark in "<>=!~@")


def constraints(
    build: Build, requirements: Sequence[str], table: Optional[Dict[str, Companion]] = None
) -> Tuple[str, ...]:
    """What to install beside ``requirements`` on ``build``: the companions' bounds for its series.

    A library that any of the requirements gives a version for (the case's block, ``--with``)
    is left as written. ``name==none`` stands for a library no version of which is known to
    work here (see ``unavailable``).
    """
    table = load() if table is None else table
    found: List[str] = []
    pinned = {dependencies.name_of(r) for r in requirements if _versioned(r)}
    for name in sorted({dependencies.name_of(r) for r in requirements} - pinned, key=str):
        companion = table.get(name or "")
        if companion is None:
            continue
        bound = companion.series.get(build.release.minor)
        if bound == NONE:
            found.append("%s==%s" % (name, NONE))
        elif bound:
            found.append("%s%s" % (name, bound))
        if companion.compiled:  # from the variant's own index: the build that matches this torch build
            found.extend(_matching_build(str(name), companion, build))
    return tuple(found)


def _matching_build(name: str, companion: Companion, build: Build) -> List[str]:
    """``[name==0.N.P+tag]``: the compiled companion's build for ``build``, where its variant has an index of
    its own (a local tag); ``[]`` for PyPI's builds, which pair themselves, or a version it cannot place.

    A nightly's companion is the same night's (``2.16.0.dev20260115`` pairs with ``0.31.0.dev20260115``).
    """
    try:
        torch = Version(build.torch_version)
    except InvalidVersion:  # a channel's word not pinned yet
        return []
    tag = build.variant.local_tag
    if not tag or companion.offset is None or len(torch.release) < 3:
        return []
    night = ".dev%d" % torch.dev if torch.dev is not None else ""
    return ["%s==0.%d.%d%s+%s" % (name, torch.release[1] + companion.offset, torch.release[2], night, tag)]


def compiled_builds(build: Build, table: Optional[Dict[str, Companion]] = None) -> Tuple[str, ...]:
    """Every compiled companion's build that matches ``build`` on its variant's own index (cpu, cuXXX).

    Given to the installer as constraints (``-c``), not requirements: they install nothing, and a
    set that pulls such a library in without naming it (timm pulls torchvision) gets the build
    made for this torch, or fails to install naming it, never PyPI's build for another torch.
    """
    table = load() if table is None else table
    return tuple(
        pin
        for name, companion in sorted(table.items())
        if companion.compiled
        for pin in _matching_build(name, companion, build)
    )


def unavailable(constraint_list: Sequence[str]) -> List[str]:
    """The libraries the constraints say no version of works on this series."""
    return [c.split("==", 1)[0] for c in constraint_list if c.endswith("==" + NONE)]


# --- finding the bounds again ------------------------------------------------------------------


def candidates(name: str) -> List[str]:
    """The newest release of each of the library's minor lines, oldest first, as pip's index lists them."""
    pip = [sys.executable, "-m", "pip"]
    if subprocess.run([*pip, "--version"], capture_output=True).returncode != 0:
        found = shutil.which("pip3") or shutil.which("pip")
        if found is None:
            raise CompanionError("no pip to list the versions of %s: give them with --versions" % name)
        pip = [found]
    done = subprocess.run([*pip, "index", "versions", name], capture_output=True, text=True, timeout=120)
    line = next((row for row in done.stdout.splitlines() if row.startswith("Available versions:")), "")
    newest: Dict[Tuple[int, ...], Version] = {}
    for text in line.split(":", 1)[-1].split(","):
        try:
            version = Version(text.strip())
        except InvalidVersion:
            continue
        if not version.is_prerelease:
            newest[version.release[:2]] = max(newest.get(version.release[:2], version), version)
    if not newest:
        raise CompanionError(
            "pip lists no versions of %s (%s): give them with --versions"
            % (name, first_line(done.stderr) or "no output")
        )
    return [str(v) for v in sorted(newest.values())]


# Cell statuses that show the library works beside torch: the case imported, built and ran eagerly.
WORKING = ("pass", "mismatch", "fail")


def newest_working(versions: Sequence[str], works: Callable[[str], bool], limit: int) -> Optional[str]:
    """The newest of ``versions`` (oldest first) for which ``works`` holds, trying at most ``limit`` of them.

    Libraries drop old torch releases as they go, so newer versions fail from some point on:
    the newest is tried first, then steps back that double in length until one works, then
    the boundary between it and the nearest failure is bisected. None when no try works.
    """
    tried: Dict[int, bool] = {}

    def test(index: int) -> bool:
        if index not in tried:
            tried[index] = works(versions[index])
        return tried[index]

    if not versions or limit < 1:
        return None
    failing, step = len(versions) - 1, 1
    if test(failing):
        return versions[failing]
    passing: Optional[int] = None
    while len(tried) < limit:
        index = max(0, failing - step)
        if test(index):
            passing = index
            break
        if index == 0:
            return None
        failing, step = index, step * 2
    if passing is None:
        return None
    while failing - passing > 1 and len(tried) < limit:
        middle = (passing + failing) // 2
        if test(middle):
            passing = middle
        else:
            failing = middle
    return versions[passing]

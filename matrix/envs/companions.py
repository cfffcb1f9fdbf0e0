"""Companion libraries: the version of a case's library that works with each torch series.

The table is data (``companions.toml``), read by :mod:`.companion_table`: per library, a requirement
per minor series, and whether the library is compiled against one torch build. ``constraints`` turns
it into what an environment installs beside a set's own requirements. This module re-exports the
table and holds the search that finds its bounds again (:func:`newest_working`); the command that runs
a case in environments to do so is :mod:`matrix.companion_probe`: environments read the table from
:mod:`.companion_table`, so that the imports run one way.
"""

from __future__ import annotations

import sys
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from ..contract.schema import first_line
from .companion_table import NONE, TABLE, Companion, CompanionError, compiled_builds, constraints, load, unavailable

__all__ = ["NONE", "TABLE", "Companion", "CompanionError", "compiled_builds", "constraints", "load", "unavailable"]
__all__ += ["candidates", "newest_working", "WORKING"]


# --- finding the bounds again ------------------------------------------------------------------


def candidates(name: str) -> List[str]:
    """The newest release of each of the library's minor lines, oldest first, as pip's index lists them."""
    import shutil
    import subprocess

    from packaging.version import InvalidVersion, Version

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

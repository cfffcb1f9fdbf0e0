"""Companion libraries: the version of a case's library that works with each torch series.

The table is data (``companions.toml``), read by :mod:`.companion_table`: per library, a requirement
per minor series, and whether the library is compiled against one torch build. ``constraints`` turns
it into what an environment installs beside a set's own requirements. This module re-exports the
table and finds its bounds again (``probe``), by running a case in environments: environments read
the table from :mod:`.companion_table`, so that the imports run one way.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..contract import dependencies
from ..contract.schema import first_line
from .companion_table import NONE, TABLE, Companion, CompanionError, compiled_builds, constraints, load, unavailable
from .releases import Build

__all__ = ["NONE", "TABLE", "Companion", "CompanionError", "compiled_builds", "constraints", "load", "unavailable"]
__all__ += ["candidates", "newest_working", "probe", "main", "WORKING"]


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


def probe(
    name: str,
    words: Sequence[str],
    case: str,
    limit: int = 8,
    timeout: float = 600.0,
    versions: Optional[Sequence[str]] = None,
) -> Dict[str, str]:
    """Per release, the newest version of ``name`` that works beside it, for ``case``: {"2.5.1": "4.57.6"}.

    Each version tried is installed beside the release's torch (an environment per version,
    from uv's cache) and the case run in both modes. A version works when the case loads and
    runs eagerly in a mode (its cell passes, mismatches or fails to export): whether the
    release exports the model is the matrix's answer, not the library's; a library that does
    not import, or whose model does not run, on that torch is a case-error.
    ``newest_working`` chooses what to try, at most ``limit`` per release. "none" where none works.
    """
    import tempfile

    from ..probe import validate_case
    from . import releases

    info = validate_case(case)
    if versions is None:
        versions = candidates(name)
    else:
        from packaging.version import Version

        versions = sorted(versions, key=Version)
    found: Dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="export-matrix-companions-") as scratch:
        for build in releases.default_matrix().select(words):
            works = functools.partial(_exports, name, info, build, Path(scratch), timeout)
            found[build.torch_version] = newest_working(versions, works, limit) or NONE
    return found


def _exports(name: str, info: Any, build: Build, scratch: Path, timeout: float, version: str) -> bool:
    """Whether the case loads and runs eagerly in a mode with this version of the library beside ``build``'s torch."""
    from ..probe import cases_request, probe_case
    from . import environments

    # The version joins the case's own needs, as --with would: the worker runs the case in that set.
    candidate = "%s==%s" % (name, version)
    python = environments.default_python(build.release)
    spec = environments.Spec(build, python, dependencies.set_key((*info.dependencies, candidate)))
    request = cases_request((info.path,), ("strict", "non-strict"), scratch / spec.name, timeout, added=(candidate,))
    probed = probe_case(spec, info, request)
    statuses = {mode: (probed.cell(mode) or {}).get("status") for mode in ("strict", "non-strict")}
    print("torch %s + %s %s: %s" % (build.torch_version, name, version, statuses), file=sys.stderr)
    return bool(set(statuses.values()) & set(WORKING))


def main(argv: Optional[Sequence[str]] = None) -> int:
    import argparse

    from ..contract.errors import report_errors

    parser = argparse.ArgumentParser(
        prog="python -m matrix.envs.companions", description="find the newest version of a library per torch release"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("probe", help="install candidate versions beside each release and export a case")
    run.add_argument("name", help="the library, e.g. transformers")
    run.add_argument("--torch", nargs="+", required=True, metavar="RELEASE", help="releases, e.g. 2.1 2.5 2.9")
    run.add_argument("--case", required=True, help="a case file that imports the library")
    run.add_argument("--limit", type=int, default=8, help="versions to try per release at most (default 8)")
    run.add_argument("--versions", nargs="+", default=None, help="the versions to choose from (default: pip's index)")
    options = parser.parse_args(argv)

    def body() -> int:
        found = probe(options.name, options.torch, options.case, options.limit, versions=options.versions)
        for torch, version in found.items():
            bound = NONE if version == NONE else "<=" + version
            series = ".".join(torch.split(".")[:2])
            print('%s: newest %s with which the case loads and runs: %s  ->  "%s" = "%s"'
                  % (torch, options.name, version, series, bound))  # fmt: skip
        return 0

    return report_errors("companions", body)


if __name__ == "__main__":
    sys.exit(main())

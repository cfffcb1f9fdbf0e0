"""``python -m matrix.commands.companion_probe probe NAME --torch ... --case FILE``: find the newest version of a
library per torch release, by running a case beside each candidate version in an environment of that release.

What it finds is what ``matrix/envs/companions.toml`` keeps (:mod:`matrix.envs.companions`, whose
:func:`~matrix.envs.companions.newest_working` chooses the versions to try); this command runs the cases
(:mod:`matrix.commands.probe`), beside ``check`` and ``bisect``, so that the environments layer imports nothing
above it.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Any, Dict, Optional, Sequence

from ..contract import dependencies
from ..envs import environments, pythons, releases
from ..envs.companions import NONE, WORKING, candidates, newest_working
from ..envs.releases import Build
from .probe import cases_request, probe_case, validate_case


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
    # The version joins the case's own needs, as --with would: the worker runs the case in that set.
    candidate = "%s==%s" % (name, version)
    python = pythons.default_python(build.release)
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
        prog="python -m matrix.commands.companion_probe",
        description="find the newest version of a library per torch release",
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

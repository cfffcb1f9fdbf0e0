"""Companion libraries: the version of a case's library that works with each torch series.

The table is data (``companions.toml``): per library, a requirement per minor series, and
whether the library is compiled against one torch build. ``constraints`` turns it into what
an environment installs beside a set's own requirements.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from ..errors import UserError
from ..worker import dependencies
from .releases import Build

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


def load(path: Path = TABLE) -> Dict[str, Companion]:
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


def _bare(requirement: str) -> bool:
    """Whether a requirement names a package without any version (``transformers``, ``timm[extra]``)."""
    name = dependencies.canonical(requirement)
    return not any(mark in name for mark in "<>=!~@")


def constraints(
    build: Build, requirements: Sequence[str], table: Optional[Dict[str, Companion]] = None
) -> Tuple[str, ...]:
    """What to install beside ``requirements`` on ``build``: the companions' bounds for its series.

    A requirement that already gives a version is left as written. ``name==none`` stands for
    a library no version of which is known to work here (see ``unavailable``).
    """
    table = load() if table is None else table
    found: List[str] = []
    torch = build.torch_version.split("+", 1)[0].split(".")
    tag = build.variant.local_tag
    for requirement in requirements:
        name = dependencies.name_of(requirement)
        companion = table.get(name or "")
        if companion is None or not _bare(requirement):
            continue
        bound = companion.series.get(build.release.minor)
        if bound == NONE:
            found.append("%s==%s" % (name, NONE))
        elif bound:
            found.append("%s%s" % (name, bound))
        if companion.compiled and tag and companion.offset is not None and len(torch) >= 3:
            # A compiled library from the variant's own index: the build that matches this torch build.
            found.append("%s==0.%d.%s+%s" % (name, int(torch[1]) + companion.offset, torch[2], tag))
    return tuple(found)


def unavailable(constraint_list: Sequence[str]) -> List[str]:
    """The libraries the constraints say no version of works on this series."""
    return [c.split("==", 1)[0] for c in constraint_list if c.endswith("==" + NONE)]


# --- finding the bounds again ------------------------------------------------------------------


def candidates(name: str, limit: int) -> List[str]:
    """The newest release of each of the library's latest minor lines, newest first (from pip's index)."""
    import subprocess

    from packaging.version import InvalidVersion, Version

    done = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", name], capture_output=True, text=True, timeout=120
    )
    line = next((row for row in done.stdout.splitlines() if row.startswith("Available versions:")), "")
    newest: Dict[Tuple[int, ...], Version] = {}
    for text in line.split(":", 1)[-1].split(","):
        try:
            version = Version(text.strip())
        except InvalidVersion:
            continue
        if version.is_prerelease:
            continue
        line_key = version.release[:2]
        newest[line_key] = max(newest.get(line_key, version), version)
    return [str(v) for v in sorted(newest.values(), reverse=True)[:limit]]


def probe(name: str, words: Sequence[str], case: str, limit: int = 8, timeout: float = 600.0) -> Dict[str, str]:
    """Per release, the newest candidate version of ``name`` with which ``case`` exports: {"2.5.1": "4.57.6"}.

    Each candidate is installed beside the release's torch (an environment per version, from
    uv's cache) and the case run in both modes; the first candidate, newest first, under
    which a mode passes is the release's answer. "none" where no candidate does.
    """
    import tempfile

    from ..probe import probe_case, validate_case
    from . import environments, releases

    case_name = validate_case(case)
    versions = candidates(name, limit)
    found: Dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="export-matrix-companions-") as scratch:
        for build in releases.default_matrix().select(words):
            python = environments.default_python(build.release)
            found[build.torch_version] = NONE
            for version in versions:
                spec = environments.Spec(build, python, dependencies.set_key(["%s==%s" % (name, version)]))
                folder = Path(scratch) / spec.name
                probed = probe_case(spec, case, case_name, ("strict", "non-strict"), folder, timeout)
                statuses = {mode: (probed.cell(mode) or {}).get("status") for mode in ("strict", "non-strict")}
                print("torch %s + %s %s: %s" % (build.torch_version, name, version, statuses), file=sys.stderr)
                if "pass" in statuses.values():
                    found[build.torch_version] = version
                    break
    return found


def main(argv: Optional[Sequence[str]] = None) -> int:
    import argparse

    from ..errors import report_errors

    parser = argparse.ArgumentParser(
        prog="python -m matrix.envs.companions", description="find the newest version of a library per torch release"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("probe", help="install candidate versions beside each release and export a case")
    run.add_argument("name", help="the library, e.g. transformers")
    run.add_argument("--torch", nargs="+", required=True, metavar="RELEASE", help="releases, e.g. 2.1 2.5 2.9")
    run.add_argument("--case", required=True, help="a case file that imports the library")
    run.add_argument("--limit", type=int, default=8, help="candidate minor lines to try, newest first (default 8)")
    options = parser.parse_args(argv)

    def body() -> int:
        for torch, version in probe(options.name, options.torch, options.case, options.limit).items():
            bound = NONE if version == NONE else "<=" + version
            print('%s: newest %s that exports the case: %s  ->  "%s" = "%s"' % (torch, options.name, version,
                  ".".join(torch.split(".")[:2]), bound))  # fmt: skip
        return 0

    return report_errors("companions", body)


if __name__ == "__main__":
    sys.exit(main())

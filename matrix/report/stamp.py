"""What a report says about its own making, for a reader who cites it: the tool's commit and the build date.

The two are the only text of a report that changes when the same tables are built again, and both go on the front
page only (``index.md`` and ``site/index.html``, one document). The report keeps its stamp in ``stamp.json``, so that
a site built later beside a committed report (``nox -s site``) carries the publication's stamp, not its own. The
date is the UTC day of the build, or of ``SOURCE_DATE_EPOCH`` where that is set (the reproducible-builds
convention). The commit is that of the git checkout this package runs from (``contract.checkout``); outside a
checkout the package's version is said instead.

``stamp.json`` also keeps the other runs the report joined (``report --stages-from``, a :class:`Source` each): a
report re-rendered from its own folder, which holds their records but not their folders, still cites each of them
and says how to run it again. A record folder of ``run`` or ``check`` keeps no stamp: its runs' environment records
say the commit of the code that made them (``tool_commit``), and :func:`of_runs` cites that.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Dict, Iterable, Optional, Sequence, Set, Tuple

from matrix.contract import checkout
from matrix.contract.errors import UserError
from matrix.report import files

PACKAGE = "torch-export-matrix"
FILE = "stamp.json"  # in the report's folder: the stamp it carries, for a site built beside it later
EPOCH = "SOURCE_DATE_EPOCH"


@dataclass(frozen=True)
class Stamp:
    """The tool's commit ("" where unknown), its version, and the day the report was built (YYYY-MM-DD)."""

    commit: str
    version: str
    date: str

    def words(self) -> str:
        """``built 2026-11-28 by export-matrix 0.1.0 at commit 4a291b4c1f2e``."""
        tool = "export-matrix %s" % self.version if self.version else "export-matrix"
        where = " at commit %s" % self.commit if self.commit else " (commit unknown: not run from a git checkout)"
        return "built %s by %s%s" % (self.date, tool, where)


# The stamp of a report that kept none (built before reports kept their stamp): nothing known.
UNKNOWN = Stamp(commit="", version="", date="")


def build_date(environ: Optional[dict] = None) -> str:
    """The UTC day of the build: ``SOURCE_DATE_EPOCH``'s where set, else today's."""
    found = (os.environ if environ is None else environ).get(EPOCH, "")
    try:
        when = datetime.datetime.fromtimestamp(int(found), tz=datetime.timezone.utc) if found else None
    except (ValueError, OverflowError, OSError):
        when = None
    return (when or datetime.datetime.now(datetime.timezone.utc)).strftime("%Y-%m-%d")


def version() -> str:
    try:
        return metadata.version(PACKAGE)
    except Exception:  # not installed: run from a checkout on PYTHONPATH
        return ""


def current() -> Stamp:
    """This build's stamp."""
    return Stamp(commit=checkout.commit(), version=version(), date=build_date())


@dataclass(frozen=True)
class Source:
    """Another run whose opt-in stages' outcomes or follow-up products the report shows (``report --stages-from``):
    its stamp, what it gave the report, and what it ran, so that the report can say how to run it again."""

    stamp: Stamp  # that of the report or record folder it came from (UNKNOWN for a record folder)
    shows: Tuple[str, ...]  # the declared names of the stages and products it gave the report
    runs: int  # how many runs its records hold
    dates: str  # the days its cells ran (UTC); "" where not recorded
    builds: Tuple[Tuple[str, str, str], ...] = ()  # (device, torch version, variant) its cells ran on, in order
    cases: Tuple[str, ...] = ()  # the cases it ran, sorted
    modes: Tuple[str, ...] = ()  # the modes it ran, sorted


def write(out: str, stamp: Optional[Stamp], sources: Sequence[Source] = ()) -> Set[str]:
    """Keep the report's stamp, and the other runs it joined, in its folder; returns the path written (none
    without a stamp)."""
    if stamp is None:
        return set()
    kept: Dict[str, Any] = dataclasses.asdict(stamp)
    if sources:  # a report that joined nothing keeps the stamp.json it always had
        kept["sources"] = [dataclasses.asdict(source) for source in sources]
    files.write_text(out, FILE, json.dumps(kept, sort_keys=True, indent=1) + "\n")
    return {FILE}


def read(folder: str) -> Optional[Stamp]:
    """The stamp a report folder carries (:func:`write`), None where it has none or it cannot be read."""
    try:
        return _stamp(files.read_json(os.path.join(folder, FILE)))
    except (KeyError, TypeError):  # none, not JSON (None), or not a stamp
        return None


def _stamp(found: Dict[str, Any]) -> Stamp:
    return Stamp(commit=str(found["commit"]), version=str(found["version"]), date=str(found["date"]))


def of_runs(commits: Iterable[Any]) -> Stamp:
    """The stamp of a record folder whose runs' environment records name ``commits`` (their ``tool_commit``): the
    commit where all its runs name one and the same, else none (runs made before records kept it, or by several)."""
    named = {c if isinstance(c, str) else "" for c in commits}  # a run before records kept it: ""
    return Stamp(commit=named.pop(), version="", date="") if len(named) == 1 and "" not in named else UNKNOWN


def sources(folders: Sequence[str]) -> Tuple[Source, ...]:
    """The other runs that the reports among ``folders`` joined (:func:`write`), each once, in the folders' order; a
    folder without a stamp keeps none. A ``sources`` entry that cannot be read stops the report, naming the file:
    rebuilding without it would cite the report without the runs whose records it shows."""
    found: Dict[Source, None] = {}
    for folder in folders:
        path = os.path.join(folder, FILE)
        kept = files.read_json(path)
        if not isinstance(kept, dict):
            continue  # no stamp, or not one (read() says the same): nothing joined that it could tell
        try:
            for entry in kept.get("sources", []):
                source = Source(
                    _stamp(entry["stamp"]), tuple(map(str, entry["shows"])), int(entry["runs"]), str(entry["dates"]),
                    tuple((str(d), str(v), str(w)) for d, v, w in entry["builds"]), tuple(map(str, entry["cases"])),
                    tuple(map(str, entry["modes"])),
                )  # fmt: skip
                found[source] = None
        except (KeyError, TypeError, ValueError) as error:
            raise UserError("%s: its sources (the runs the report joined) cannot be read: %s %s" % (
                path, type(error).__name__, error)) from None  # fmt: skip
    return tuple(found)

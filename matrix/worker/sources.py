"""Where cases come from (case files under folders, or the ExportDB examples bundled with torch), and which cells
of them a run selects."""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence, Tuple

from ..contract.case import CaseError, CaseInfo, cell_selected, discover
from ..contract.errors import UserError
from ..contract.requests import RunRequest
from ..contract.schema import cell_id
from .case import load


def discover_source(source: str, roots: Optional[List[str]] = None) -> List[CaseInfo]:
    """The cases of a source: case files under ``roots`` (default ./cases), or torch's bundled ExportDB."""
    if source == "exportdb":
        if roots:
            raise CaseError("--cases does not apply to --source exportdb")
        from . import exportdb

        return exportdb.discover()
    return discover(roots or ["cases"])


def loader_for(source: str) -> Callable[[CaseInfo], Any]:
    """The function that turns a case's info into a loaded case, for the source it came from."""
    if source == "exportdb":
        from . import exportdb

        return exportdb.load
    return load


def plan(
    infos: Sequence[CaseInfo], modes: Sequence[str], runs: int, torch_version: str, select: Optional[Sequence[str]]
) -> List[Tuple[CaseInfo, str, int]]:
    """Each (case, mode, run) cell of ``infos`` that ``select``'s globs pick on ``torch_version``, in order."""
    selected = [(info, mode) for info in infos for mode in modes]
    selected = [(i, m) for i, m in selected if cell_selected(i.name, cell_id(torch_version, m, i.name), select)]
    return [(info, mode, run) for info, mode in selected for run in range(runs)]


def cases_of(options: RunRequest) -> List[CaseInfo]:
    """The cases of --cases/--source with one of --tag, read without running them (the sessions plan with it too)."""
    try:
        infos = discover_source(options.source, list(options.cases) if options.cases else None)
    except CaseError as exc:
        raise UserError(str(exc))
    tags = set(options.tag or ())  # globs apply per cell, in ``plan``
    return [info for info in infos if not tags or tags & set(info.tags)]

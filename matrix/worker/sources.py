"""Where cases come from: case files under folders, or the ExportDB examples bundled with torch."""

from __future__ import annotations

from typing import Any, Callable, List, Optional

from ..contract.case import CaseError, CaseInfo, discover
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

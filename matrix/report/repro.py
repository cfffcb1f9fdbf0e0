"""A repro beside each case page: the script of each distinct failure, and the page section that shows it.

For each of a case's distinct failures (:func:`matrix.records.repro.failures`: one per mode,
``--with`` set and way of failing, on the newest release that shows it) the report writes a
standalone script to ``cases/NAME.repro/FILE.py``, beside the case's page ``cases/NAME.md``,
and the case page (both its forms) shows the ``export-matrix check`` command and links that
one script. A script inlines the case's source, so it is written only where the case file lies in
the case folders the report reads sources from; elsewhere the page says so.
"""

from __future__ import annotations

import os
import posixpath
from typing import Any, Iterable, List, Optional, Sequence, Set

from matrix.records import repro, repro_script
from matrix.records.repro import Cell, Failure
from matrix.report import document as d
from matrix.report import files
from matrix.report import markdown as md

# What the section says first, as plain text (each page escapes it).
INTRO = (
    "One repro per distinct failure (mode, --with set, status, error class and first line, failing"
    " stages), on the newest release that shows it. Each script needs only the torch build it names:"
    " its first lines say what was recorded, what it reproduces and what to install."
    " export-matrix repro CELL_ID writes the script of any failing cell."
)
NO_SCRIPT = "No standalone script: the case file %s is not in the case folders this report was built with"
UNREADABLE = "No standalone script: the case file %s, or a module of its folder it imports, could not be read as text"


def locate(case_file: Any, roots: Sequence[str]) -> Optional[str]:
    """The file a record's ``case_file`` names, only if it lies inside one of ``roots``; else None.

    ``case_file`` is record data, not a path to follow: an absolute one must resolve
    (links included) to inside a root. A relative one never resolves against the
    current folder; the worker records it relative to where it ran, e.g.
    ``cases/tutorial/x.py`` for the root ``cases``, so it is tried under each root with
    as many of its leading folders dropped as match the root's own trailing folders.
    """
    if not isinstance(case_file, str) or not case_file or "\0" in case_file:
        return None
    for root in roots:
        named, base = os.path.abspath(root), os.path.realpath(root)
        if os.path.isabs(case_file):
            candidates = [case_file]
        else:
            parts = posixpath.normpath(case_file.replace(os.sep, "/")).split("/")
            tail = named.split(os.sep)
            candidates = [
                os.path.join(named, *parts[k:])
                for k in range(min(len(parts) - 1, len(tail)), -1, -1)
                if parts[:k] == tail[len(tail) - k :]
            ]
        for candidate in candidates:
            path = os.path.realpath(candidate)
            if path != base and os.path.commonpath([base, path]) == base and os.path.isfile(path):
                return path
    return None


def script_path(failure: Failure) -> str:
    """Where a failure's script lies, relative to the report folder: ``cases/NAME.repro/FILE.py``."""
    return "cases/%s%s/%s" % (md.page_file(failure.case), files.SCRIPTS, repro.file_name(failure.cell))


def script_for(cell: Cell, roots: Sequence[str]) -> Optional[str]:
    """The script of ``cell``, its case read from the file it names inside ``roots``; None where there is none."""
    path = locate(cell.case_file, roots)
    if path is None or cell.case_file is None:
        return None
    try:
        case = repro_script.read_case(path, cell.case_file)
    except (OSError, UnicodeDecodeError):
        return None
    return repro_script.script(cell, case)


def _no_script(cell: Cell, roots: Sequence[str]) -> Optional[str]:
    """Why the report writes no script for ``cell`` (:func:`write`'s test, so that a page never links one that is not
    there); None where it writes one."""
    if script_for(cell, roots) is not None:
        return None
    return (NO_SCRIPT if locate(cell.case_file, roots) is None else UNREADABLE) % cell.case_file


def write(out: str, failures: Iterable[Failure], roots: Sequence[str]) -> Set[str]:
    """Write each failure's script whose case file is found; returns their paths relative to ``out``."""
    written = set()
    for failure in failures:
        text = script_for(failure.cell, roots)
        if text is not None:
            path = script_path(failure)
            files.write_text(out, path, text)
            written.add(path)
    return written


def section(failures: Sequence[Failure], order: Sequence[str], roots: Sequence[str]) -> Optional[d.Section]:
    """The case page's section: per failure, where it shows, what was recorded, its check command and its script's
    link. ``order``: the releases of the case's cells in report order; None without failures."""
    if not failures:
        return None
    blocks: List[d.Block] = [d.Paragraph(d.phrase(INTRO))]
    for number, failure in enumerate(failures, 1):
        shown_on = md.release_spans(failure.releases, order)  # as runs of ``order``: ``2.9.1–2.13.0+cpu``
        said: List[d.Block] = [
            d.Items(tuple(d.Item(d.phrase(line)) for line in repro.recorded(failure.cell))),
            d.Paragraph(d.phrase("Shows on %s; the newest cell: " % shown_on, d.Code(failure.cell.cell_id), ".")),
        ]
        command = repro.check_command(failure.cell)
        if command:
            said.append(d.CodeBlock(command, "sh"))
        missing = _no_script(failure.cell, roots)
        if missing is None:  # the report writes its script
            path = script_path(failure)
            link = d.link(posixpath.basename(path), d.file(path))
            said.append(d.Paragraph(d.phrase("Without this tool: ", link, ", a standalone script.")))
        else:
            said.append(d.Paragraph(d.phrase(missing + ".")))
        blocks.append(d.Section("repro-%d" % number, failure.title, tuple(said)))
    return d.Section("reproduce", "Reproduce", tuple(blocks))

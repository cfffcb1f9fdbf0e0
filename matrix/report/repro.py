"""A repro beside each case page: the script of each distinct failure, and the page section that shows it.

For each of a case's distinct failures (:func:`matrix.records.repro.failures`: one per mode,
``--with`` set and way of failing, on the newest release that shows it) the report writes a
standalone script to ``cases/NAME.repro/FILE.py``, beside the case's page ``cases/NAME.md``,
and both case pages (Markdown and site) show the ``export-matrix check`` command and link that
one script. A script inlines the case's source, so it is written only where the case file lies in
the case folders the report reads sources from; elsewhere the page says so.
"""

from __future__ import annotations

import posixpath
from typing import Iterable, Optional, Sequence, Set

from matrix.records import repro, repro_script
from matrix.records.repro import Cell, Failure
from matrix.report import case_page, files
from matrix.report import markdown as md

# What the section says first, as plain text (each page escapes it).
INTRO = (
    "One repro per distinct failure (mode, --with set, status, error class and first line, failing"
    " stages), on the newest release that shows it. Each script needs only the torch build it names:"
    " its first lines say what was recorded, what it reproduces and what to install."
    " export-matrix repro CELL_ID writes the script of any failing cell."
)
NO_SCRIPT = "no standalone script: the case file %s is not in the case folders this report was built with"


def script_path(failure: Failure) -> str:
    """Where a failure's script lies, relative to the report folder: ``cases/NAME.repro/FILE.py``."""
    return "cases/%s%s/%s" % (md.page_file(failure.case), files.SCRIPTS, repro.file_name(failure.cell))


def page_link(failure: Failure) -> str:
    """The script's path relative to its case's Markdown page (both lie in ``cases/``)."""
    return posixpath.relpath(script_path(failure), "cases")


def site_link(failure: Failure) -> str:
    """The same script's path relative to its case's site page (``site/cases/``): the one file both pages link."""
    return posixpath.relpath(script_path(failure), "site/cases")


def shown_on(failure: Failure, order: Sequence[str]) -> str:
    """The releases a failure shows on, as runs of ``order`` (``2.9.1–2.13.0+cpu``): plain text."""
    return md.release_spans(failure.releases, order)


def available(failure: Failure, roots: Sequence[str]) -> bool:
    """Whether the report writes the failure's script: its case file lies in one of ``roots``."""
    return case_page.locate(failure.cell.case_file, roots) is not None


def script_for(cell: Cell, roots: Sequence[str]) -> Optional[str]:
    """The script of ``cell``, its case read from the file it names inside ``roots``; None where there is none."""
    path = case_page.locate(cell.case_file, roots)
    if path is None or cell.case_file is None:
        return None
    try:
        case = repro_script.read_case(path, cell.case_file)
    except (OSError, UnicodeDecodeError):
        return None
    return repro_script.script(cell, case)


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


def markdown(failures: Sequence[Failure], order: Sequence[str], roots: Sequence[str]) -> str:
    """The case page's section: per failure, where it shows, its check command and its script's link.

    ``order``: the releases of the case's cells in report order; "" without failures.
    """
    if not failures:
        return ""
    parts = ["## Reproduce\n", md.text(INTRO) + "\n"]
    for failure in failures:
        parts.append("### %s\n" % md.text(failure.title))
        parts.append("\n".join("- %s" % md.text(line) for line in repro.recorded(failure.cell)) + "\n")
        parts.append(
            "Shows on %s; the newest cell: %s.\n" % (md.text(shown_on(failure, order)), md.code(failure.cell.cell_id))
        )
        command = repro.check_command(failure.cell)
        if command:
            parts.append(md.fence(command, "sh"))
        if available(failure, roots):
            name = posixpath.basename(script_path(failure))
            parts.append("Without this tool: %s, a standalone script.\n" % md.link(name, page_link(failure)))
        else:
            parts.append("_%s._\n" % (NO_SCRIPT % md.code(failure.cell.case_file)))
    return "\n".join(parts)

"""Programs exported on one release and compiled on a newer one (``load --aoti``), in Markdown: exported-on ×
compiled-on.

What is shown is judged in :mod:`matrix.records.aoti_compiles` (the table, its shares per mode, the failures and
what a compile costs); this module words it: the part of the compiled packages' section of ``artifacts.md``
(:func:`section`, called by :func:`matrix.report.aoti_loads.section`) and the grids a case's page shows under
its packages' (:func:`grids`). :mod:`matrix.report.artifacts` writes both, with the heatmaps and
``aoti_compiles.parquet``.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import pandas as pd

from matrix.contract.products import COMPILE
from matrix.contract.schema import (
    AOTI_SYMBOL,
    NO_RECORD,
    STAGE_SKIPPED,
    LoadStatus,
    Status,
)
from matrix.records import aoti_compiles, artifacts
from matrix.records.aoti_compiles import Compiles
from matrix.report import case_grids, known_issues, shares
from matrix.report import charts as charting
from matrix.report import markdown as md

TABLE = COMPILE.table
TITLE = "Exported on one release, compiled on a newer one"
CORNER = "exported on ↓ / compiled on →"
# What a square without a record means: the pair was not compiled, which `--aoti-from nearest-and-oldest` leaves.
NOT_COMPILED = (
    "where that release compiled none of them (`load --aoti-from nearest-and-oldest`, as the `aoti` selection runs,"
    " compiles on each release the programs of the newest older release and of the oldest of its serializer"
    " epoch only)"
)
# Failures of the compiles listed before the rest are counted, and the programs named per failure.
SHOWN_FAILURES = 20
SHOWN_PROGRAMS = 6


def chart_title(mode: str) -> str:
    return "Programs compiled on a newer release that load and match: %s" % mode


INTRO = (
    "`export-matrix load --aoti` on a release compiles each program saved on an older release with its own"
    " AOTInductor API, in a process of its own, then loads the package in a process that never compiled, runs it on"
    " the program's saved inputs and compares with its saved outputs: does a program exported on an older torch"
    " compile and run on a newer one? A program that does not load on the compiling release is not compiled (%s %s:"
    " its load says why); a release without AOTInductor or a machine without a C++ compiler (%s %s) and an unsigned"
    " folder (%s %s) are not tried either."
    % (
        AOTI_SYMBOL[STAGE_SKIPPED], STAGE_SKIPPED, AOTI_SYMBOL[Status.NOT_APPLICABLE.value],
        Status.NOT_APPLICABLE.value, AOTI_SYMBOL[LoadStatus.UNTRUSTED.value], LoadStatus.UNTRUSTED.value,
    )
)  # fmt: skip


def section(compiles: Compiles, drawn: Sequence[charting.Chart] = ()) -> str:
    """The compiles' part of the section: counts, the grid per mode (compiled, loaded, matched of those tried),
    what the compiles cost and every failure."""
    found = compiles.table
    parts = [
        "### %s\n" % TITLE,
        INTRO
        + " %s (a program and a release that compiled it, or did not) of programs exported on %s, compiled on %s.\n"
        % (
            md.plural(len(found), "record"),
            md.plural(len(compiles.made), "build"),
            md.plural(len(compiles.used), "build"),
        ),
        "Rows: the release that exported and saved the program; columns: the release that compiled it. Each square:"
        " compiled / loaded / matched, of the programs tried; where none was tried, the glyph of why; %s %s.\n"
        % (NO_RECORD, NOT_COMPILED),
    ]
    parts += shares.per_mode(compiles.shares, drawn, chart_title, lambda rows: compile_shares(rows, *compiles.orders))
    parts.append("#### What a compile costs\n")
    parts.append(cost_table(compiles.cost))
    parts.append("#### Failures\n")
    parts.append(failure_list(found))
    parts.append("#### Outcomes\n")
    parts.append(compile_legend())
    return "\n".join(parts)


def compile_shares(found: pd.DataFrame, exported: Sequence[str], compiled: Sequence[str]) -> str:
    """One mode's squares of :func:`matrix.records.aoti_compiles.shares`: exported down, compiled across."""
    return shares.table(found, exported, compiled, CORNER, compile_square)


def compile_square(row: Optional[Dict[str, Any]]) -> str:
    """``3/3/2 of 3`` (compiled / loaded / matched of those tried); where none was tried, the glyph of why."""
    if row is None:
        return NO_RECORD
    if not row["tried"]:
        for status, column in ((LoadStatus.UNTRUSTED.value, "untrusted"), (STAGE_SKIPPED, "skipped")):
            if row[column]:
                return AOTI_SYMBOL[status]
        return AOTI_SYMBOL[Status.NOT_APPLICABLE.value]
    return "%d/%d/%d of %d" % (row["compiled"], row["loads"], row["passed"], row["tried"])


def cost_table(cost: pd.DataFrame) -> str:
    """Per compiling build: compiles timed, median and longest compile, median package load and size."""
    if cost.empty:
        return "_No compile finished._\n"
    rows = [
        [
            md.text(row["loaded"]), str(row["compiles"]), "%.1f" % row["compile_s_median"],
            "%.1f" % row["compile_s_max"], _number(row["load_s_median"], "%.2f"),
            _number(row["package_mb_median"], "%.1f"),
        ]
        for row in cost.to_dict("records")
    ]  # fmt: skip
    headers = ["compiled on", "compiles", "median s", "longest s", "package load s (median)", "package MB (median)"]
    return md.table(headers, rows, ["l", "r", "r", "r", "r", "r"])


def failure_list(found: pd.DataFrame) -> str:
    """Every failure of the compiles in ``found``, the most common first, with the programs it hit."""
    groups = aoti_compiles.failures(found)
    if not groups:
        return "_None: every program tried compiled, loaded and matched._\n"
    lines = []
    for failure, programs in groups[:SHOWN_FAILURES]:
        named = ", ".join("%s (%s) %s → %s" % program for program in programs[:SHOWN_PROGRAMS])
        if len(programs) > SHOWN_PROGRAMS:
            named += " … (+%d)" % (len(programs) - SHOWN_PROGRAMS)
        lines.append("- %s — %s" % (md.text(failure.text, limit=300), md.text(named)))
    if len(groups) > SHOWN_FAILURES:
        lines.append(
            "- … and %d other failures (aoti_compiles.parquet holds every one)" % (len(groups) - SHOWN_FAILURES)
        )
    return "\n".join(lines) + "\n"


def grids(rows: pd.DataFrame, orders: Sequence[Sequence[str]]) -> str:
    """One exported × compiled grid per mode of a case's compiles, each with the failures it shows."""
    found = known_issues.labelled("aoti", _failed_pairs)
    return case_grids.per_mode(rows, orders, CORNER, AOTI_SYMBOL, found, "failing compile")


def compile_legend() -> str:
    """The outcomes of a compile: symbol, name and meaning."""
    return case_grids.legend(COMPILE, AOTI_SYMBOL, "outcome", "compile")


def _failed_pairs(found: pd.DataFrame) -> List[Tuple[artifacts.Failure, List[Tuple[str, ...]]]]:
    """:func:`matrix.records.aoti_compiles.failures`, each with its (exported-on, compiled-on) pairs."""
    return aoti_compiles.failures(found, ("saved", "loaded"))


def _number(value: Any, form: str) -> str:
    return form % value if isinstance(value, (int, float)) and value == value else "–"

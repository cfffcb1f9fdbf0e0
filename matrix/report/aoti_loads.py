"""The compiled packages' part of the saved-programs page, and of a case's page: compiled-on × loaded-on, and
exported-on × compiled-on.

What is shown is judged in :mod:`matrix.records.aoti_loads` (the table, its shares, epochs and what
the records say of upstream's promise) and :mod:`matrix.records.aoti_compiles` (programs saved on one release
and compiled on a newer one, ``load --aoti``: the table, its shares per mode, the failures and what a compile
costs); this module words it in Markdown: the section of ``artifacts.md`` (:func:`section`, the compiles' part
:func:`compile_section`) and the grids a case's page shows under its saved-program grid (:func:`case_section`, the
compiles' :func:`compile_grids`). :mod:`matrix.report.artifacts` writes both, with the heatmaps and the tables.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence

import pandas as pd

from matrix.contract.products import COMPILE, PACKAGE
from matrix.contract.schema import AOTI_SYMBOL, NO_RECORD, STAGE_SKIPPED, LoadStatus, Status
from matrix.records import aoti_compiles
from matrix.records import artifacts as loads_table
from matrix.records.aoti_compiles import Compiles
from matrix.records.aoti_loads import PROMISED_FROM, PackageLoads
from matrix.records.epochs import Epoch, Promise
from matrix.report import case_grids, known_issues, shares
from matrix.report import charts as charting
from matrix.report import markdown as md

TABLE = PACKAGE.table
TITLE = "Compiled packages (AOTInductor) across releases"
CORNER = "compiled on ↓ / loaded on →"
SYMBOLS = shares.SYMBOLS
# Pairs (compiled → loaded) named per error before the rest are counted; the longest error quoted.
SHOWN_PAIRS = 8
SHOWN_EXCEPTIONS = 3
CAUSE_LIMIT = 120
# How the epochs' ``backward`` reads in a table (records.epochs.BACKWARD), as on the front page.
OLDER_READ_NEWER = {"all": "yes", "some": "partly", "none": "no", "untried": "–"}
INTRO = (
    "A cell run with the aoti stage (`run --stages …,aoti --artifacts DIR`) compiled its exported program with its"
    " release's AOTInductor API and kept the package beside the program. `export-matrix load` loads each package on"
    " every release, in a process of its own, runs it on the program's saved inputs and compares with its saved"
    " outputs. Upstream promises that a package compiled on %s or later loads on newer releases (backward"
    " compatibility), not that it loads on older ones." % PROMISED_FROM
)


def chart_title(mode: str) -> str:
    return "Compiled packages that load and match: %s" % mode


def section(
    packages: Optional[PackageLoads], drawn: Sequence[charting.Chart] = (), compiles: Optional[Compiles] = None
) -> str:
    """The section of ``artifacts.md``: the packages' counts, epochs, promise, shares per mode and each case's grids,
    then the programs compiled on a newer release (``compiles``), where there are any."""
    parts = ["## %s\n" % TITLE]
    if packages is not None and not packages.empty:
        parts.append(_packages(packages, drawn))
    if compiles is not None and not compiles.empty:
        parts.append(compile_section(compiles, drawn))
    return "\n".join(parts)


def _packages(packages: PackageLoads, drawn: Sequence[charting.Chart]) -> str:
    found = packages.table
    parts = [
        INTRO
        + " %s compiled on %s, loaded on %s.\n"
        % (
            md.plural(len(found.drop_duplicates(["saved", "case", "mode", "with_set"])), "package"),
            md.plural(len(packages.made), "build"),
            md.plural(len(packages.used), "build"),
        ),
        "### Epochs of packages\n",
        epochs_table(packages.epochs),
        "### Upstream's promise\n",
        promise_text(packages.promise) + "\n",
        "### Share of packages that load and match\n",
        "Rows: the release that compiled the package; columns: the release that loaded it. Each square: packages"
        " that passed of those the loading release tried; a load not tried (%s: no loader for the file or no"
        " C++ compiler; %s) is no failure and is left out.\n" % (shares.NOT_APPLICABLE, shares.UNTRUSTED),
    ]
    parts += shares.per_mode(
        packages.shares, drawn, chart_title, lambda rows: shares.table(rows, *packages.orders, CORNER)
    )
    parts.append("### Each case's packages\n")
    parts.append("Compiled on ↓, loaded on →, per mode; each case's page shows its grid under its saved programs'.\n")
    for case, rows in found.groupby("case", sort=True):
        parts.append("#### %s\n" % md.case_link(case))
        parts.append(grids(rows, packages.orders))
    parts.append("### Package statuses\n")
    parts.append(legend())
    return "\n".join(parts)


def grids(rows: pd.DataFrame, orders: Sequence[Sequence[str]]) -> str:
    """One compiled × loaded grid per mode of a case's package loads, each with the failures it shows."""
    found = known_issues.labelled("aoti", loads_table.errors)
    return case_grids.per_mode(rows, orders, CORNER, SYMBOLS, found, "failing package load", SHOWN_PAIRS)


def epochs_table(found: Sequence[Epoch]) -> str:
    """The packages' epochs, as the front page shows the programs'."""
    if not found:
        return "_No package was loaded on a release that compiled one._\n"
    intro = (
        "An epoch is a range of releases where a package compiled on any of them loads and matches on that release"
        " and every newer one of the range (for each pair, at least half of the packages tried; the cases that"
        " fail are the exceptions).\n\n"
    )
    rows = [epoch_cells(e, md.text, md.text) for e in found]
    return intro + md.table(epoch_headers("package"), rows, ["l", "r", "r", "l", "l", "l"])


def epoch_headers(noun: str) -> List[str]:
    """The columns of an epochs table of ``noun`` (``program``, ``package``)."""
    return ["epoch", noun + "s loaded", "loads that match", "older read newer", "exceptions", "older %ss fail" % noun]


def epoch_cells(e: Epoch, escape: Callable[..., str], case: Callable[[str], str]) -> List[str]:
    """A row of an epochs table (:func:`epoch_headers`), in Markdown or HTML: ``escape(value, limit=None)`` makes
    text safe for the page (cut to ``limit`` characters), ``case`` names a case (a link, where it has a page)."""
    cut = "–"
    if e.cut is not None and e.cut_from is not None:
        cut = "%s → %s: %s" % (escape(e.cut_from), escape(e.first), escape(e.cut.text, CAUSE_LIMIT))
    exceptions = "none"
    if e.exceptions:
        cases = list(dict.fromkeys(x.case for x in e.exceptions))
        named = [
            "%s (%s)" % (case(name), escape(", ".join(x.mode for x in e.exceptions if x.case == name)))
            for name in cases[:SHOWN_EXCEPTIONS]
        ]
        more = " … (+%d)" % (len(cases) - SHOWN_EXCEPTIONS) if len(cases) > SHOWN_EXCEPTIONS else ""
        exceptions = "%s: %s%s" % (md.plural(len(cases), "case"), ", ".join(named), more)
    return [
        escape(e.first if len(e.releases) == 1 else "%s–%s" % (e.first, e.last)),
        str(e.programs) + (" (%d more not tried)" % e.untried if e.untried else ""),
        "%d of %d" % (e.passed, e.tried),
        escape(OLDER_READ_NEWER.get(e.backward, e.backward)),
        exceptions,
        cut,
    ]


def promise_text(p: Promise) -> str:
    """What the records say of upstream's promise, in a few sentences (escaped)."""
    return md.text(promise_words(p))


def promise_words(p: Promise) -> str:
    """What the records say of upstream's promise, in a few sentences (plain text: each page escapes it)."""
    since = PROMISED_FROM
    if not p.covered:
        said = "No package compiled on %s or later was loaded on a newer release." % since
    elif not p.broken:
        said = "Kept on every pair tried: %s compiled on %s or later, each loaded on a newer release." % (
            md.plural(len(p.covered), "pair"),
            since,
        )
    else:
        named = "; ".join(
            "%s → %s: %d of %d (%s)" % (b.made, b.used, b.tried - b.passed, b.tried, b.failure[:CAUSE_LIMIT])
            for b in p.broken
        )
        said = "Broken on %d of the %s it covers (packages that did not load and match): %s." % (
            len(p.broken),
            md.plural(len(p.covered), "pair"),
            named,
        )
    if p.older:
        said += " Loaded on an older release (not promised): every package loaded and matched on %d of %s." % (
            sum(b.kept for b in p.older),
            md.plural(len(p.older), "pair"),
        )
    return said


def legend() -> str:
    """The load statuses as they read for a package: symbol, name and meaning."""
    return case_grids.legend_markdown(PACKAGE, SYMBOLS)


COMPILE_TABLE = COMPILE.table
COMPILE_TITLE = "Exported on one release, compiled on a newer one"
COMPILE_CORNER = "exported on ↓ / compiled on →"
# What a square without a record means: the pair was not compiled, which `--aoti-from nearest-and-oldest` leaves.
NOT_COMPILED = (
    "where that release compiled none of them (`load --aoti-from nearest-and-oldest`, as the `aoti` selection runs,"
    " compiles on each release the programs of the newest older release and of the oldest of its serializer"
    " epoch only)"
)
# Failures of the compiles listed before the rest are counted, and the programs named per failure.
SHOWN_FAILURES = 20
SHOWN_PROGRAMS = 6


def compile_chart_title(mode: str) -> str:
    return "Programs compiled on a newer release that load and match: %s" % mode


COMPILE_INTRO = (
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


def compile_section(compiles: Compiles, drawn: Sequence[charting.Chart] = ()) -> str:
    """The compiles' part of the section: counts, the grid per mode (compiled, loaded, matched of those tried),
    what the compiles cost and every failure."""
    found = compiles.table
    parts = [
        "### %s\n" % COMPILE_TITLE,
        COMPILE_INTRO
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
    parts += shares.per_mode(
        compiles.shares, drawn, compile_chart_title, lambda rows: compile_shares(rows, *compiles.orders)
    )
    parts.append("#### What a compile costs\n")
    parts.append(cost_table(compiles.cost))
    parts.append("#### Failures\n")
    parts.append(failure_list(found))
    parts.append("#### Outcomes\n")
    parts.append(compile_legend())
    return "\n".join(parts)


def compile_shares(found: pd.DataFrame, exported: Sequence[str], compiled: Sequence[str]) -> str:
    """One mode's squares of :func:`matrix.records.aoti_compiles.shares`: exported down, compiled across."""
    return shares.table(found, exported, compiled, COMPILE_CORNER, compile_square)


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


def compile_legend() -> str:
    """The outcomes of a compile: symbol, name and meaning."""
    return case_grids.legend_markdown(COMPILE, AOTI_SYMBOL, "outcome", "compile")


def _number(value: Any, form: str) -> str:
    return form % value if isinstance(value, (int, float)) and value == value else "–"

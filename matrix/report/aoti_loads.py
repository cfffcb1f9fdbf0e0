"""The compiled packages' part of the saved-programs page, and of a case's page: compiled-on × loaded-on.

What is shown is judged in :mod:`matrix.records.aoti_loads` (the table, its shares, epochs and what
the records say of upstream's promise); this module words it in Markdown: the section of
``artifacts.md`` (:func:`section`) and the grid a case's page shows under its saved-program grid
(:func:`case_section`). :mod:`matrix.report.artifacts` writes both, with the heatmaps and the table.
"""

from __future__ import annotations

from typing import Any, List, Sequence

import pandas as pd

from matrix.contract.schema import AOTI_LOAD_MEANING, LOAD_STATUSES, MODES, NO_RECORD, LoadStatus
from matrix.records import artifacts as loads_table
from matrix.records.aoti_loads import PROMISED_FROM, PackageLoads, Promise
from matrix.records.epochs import Epoch
from matrix.report import charts as charting
from matrix.report import markdown as md
from matrix.report import shares

TABLE = "aoti_loads.parquet"
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


def section(packages: PackageLoads, drawn: Sequence[charting.Chart] = ()) -> str:
    """The section of ``artifacts.md``: counts, the epochs, the promise, the shares per mode and each case's grids."""
    found = packages.table
    parts = [
        "## %s\n" % TITLE,
        INTRO
        + " %s compiled on %s, loaded on %s.\n"
        % (
            md.plural(len(found.drop_duplicates(["saved", "case", "mode", "with_set"])), "package"),
            md.plural(len(packages.compiled), "build"),
            md.plural(len(packages.loaded), "build"),
        ),
        "### Epochs of packages\n",
        epochs_table(packages.epochs),
        "### Upstream's promise\n",
        promise_text(packages.promise) + "\n",
        "### Share of packages that load and match\n",
        "Rows: the release that compiled the package; columns: the release that loaded it. Each square: packages"
        " that passed of those the loading release tried; a load not tried (%s %s: no loader for the file or no"
        " C++ compiler; %s %s) is no failure and is left out.\n"
        % (
            SYMBOLS[LoadStatus.NOT_APPLICABLE.value],
            LoadStatus.NOT_APPLICABLE.value,
            SYMBOLS[LoadStatus.UNTRUSTED.value],
            LoadStatus.UNTRUSTED.value,
        ),
    ]
    charts = {chart.title: chart for chart in drawn}
    by_mode = packages.shares
    for mode in [m for m in MODES if m in set(by_mode["mode"])]:
        parts.append("#### %s\n" % md.text(mode))
        chart = charts.get(chart_title(mode))
        if chart is not None:
            parts.append("![%s](%s)\n" % (md.text(chart.title), chart.path))
        parts.append(shares.table(by_mode[by_mode["mode"] == mode], *packages.orders, CORNER))
    parts.append("### Each case's packages\n")
    parts.append("Compiled on ↓, loaded on →, per mode; each case's page shows its grid under its saved programs'.\n")
    for case, rows in found.groupby("case", sort=True):
        parts.append("#### %s\n" % md.case_link(case))
        parts.append(grids(rows, packages.orders))
    parts.append("### Package statuses\n")
    parts.append(legend())
    return "\n".join(parts)


def case_section(rows: pd.DataFrame, orders: Sequence[Sequence[str]]) -> str:
    """A case's part of the package table on its page: a compiled × loaded grid per mode, and its failures."""
    return "## %s\n\n%s" % (TITLE, grids(rows, orders))


def grids(rows: pd.DataFrame, orders: Sequence[Sequence[str]]) -> str:
    """One grid per mode of a case's rows, each with the failures it shows."""
    parts = []
    for mode in [m for m in MODES if m in set(rows["mode"])]:
        mine = rows[rows["mode"] == mode]
        records = mine.to_dict("records")
        status_of = {(loads_table.program_label(r), r["loaded"]): r["status"] for r in records}
        loaded = [label for label in orders[1] if label in set(mine["loaded"])]
        grid = [
            [md.text(compiled)] + [_symbol(status_of.get((compiled, label))) for label in loaded]
            for compiled in loads_table.program_rows(records, list(orders[0]))
        ]
        header = "%s: %s" % (mode, CORNER)
        parts.append(md.table([md.text(header)] + [md.text(label) for label in loaded], grid,
                              ["l"] + ["c"] * len(loaded)))  # fmt: skip
        failures = loads_table.errors(mine)
        if failures:
            lines = []
            for found, pairs in failures:
                named = ", ".join("%s → %s" % pair for pair in pairs[:SHOWN_PAIRS])
                if len(pairs) > SHOWN_PAIRS:
                    named += " … (+%d)" % (len(pairs) - SHOWN_PAIRS)
                lines.append("- %s — %s" % (md.text(found.text, limit=300), md.text(named)))
            summary = "%s: %s" % (mode, md.plural(sum(len(p) for _, p in failures), "failing package load"))
            parts.append(md.details(summary, "\n".join(lines)))
    return "\n".join(parts)


def epochs_table(found: Sequence[Epoch]) -> str:
    """The packages' epochs, as the front page shows the programs'."""
    if not found:
        return "_No package was loaded on a release that compiled one._\n"
    intro = (
        "An epoch is a range of releases where a package compiled on any of them loads and matches on that release"
        " and every newer one of the range (for each pair, at least half of the packages tried; the cases that"
        " fail are the exceptions).\n\n"
    )
    rows = [
        [
            md.text(e.first if len(e.releases) == 1 else "%s–%s" % (e.first, e.last)),
            str(e.programs) + (" (%d more not tried)" % e.untried if e.untried else ""),
            "%d of %d" % (e.passed, e.tried),
            OLDER_READ_NEWER.get(e.backward, e.backward),
            _exceptions(e),
            _cut(e),
        ]
        for e in found
    ]
    headers = ["epoch", "packages loaded", "loads that match", "older read newer", "exceptions", "older packages fail"]
    return intro + md.table(headers, rows, ["l", "r", "r", "l", "l", "l"])


def _exceptions(e: Epoch) -> str:
    if not e.exceptions:
        return "none"
    cases = list(dict.fromkeys(x.case for x in e.exceptions))
    named = [
        "%s (%s)" % (md.text(case), md.text(", ".join(x.mode for x in e.exceptions if x.case == case)))
        for case in cases[:SHOWN_EXCEPTIONS]
    ]
    more = " … (+%d)" % (len(cases) - SHOWN_EXCEPTIONS) if len(cases) > SHOWN_EXCEPTIONS else ""
    return "%s: %s%s" % (md.plural(len(cases), "case"), ", ".join(named), more)


def _cut(e: Epoch) -> str:
    if e.cut is None or e.cut_from is None:
        return "–"
    return "%s → %s: %s" % (md.text(e.cut_from), md.text(e.first), md.text(e.cut.text, CAUSE_LIMIT))


def promise_text(p: Promise) -> str:
    """What the records say of upstream's promise, in a few sentences (escaped)."""
    return md.text(promise_words(p))


def promise_words(p: Promise) -> str:
    """What the records say of upstream's promise, in a few sentences (plain text: each page escapes it)."""
    since = PROMISED_FROM
    if not p.pairs:
        said = "No package compiled on %s or later was loaded on a newer release." % since
    elif not p.broken:
        said = "Kept on every pair tried: %s compiled on %s or later, each loaded on a newer release." % (
            md.plural(p.pairs, "pair"),
            since,
        )
    else:
        named = "; ".join(
            "%s → %s: %d of %d (%s)"
            % (b.compiled, b.loaded, b.failed, b.tried, b.failure.text[:CAUSE_LIMIT] if b.failure else "no failure")
            for b in p.broken
        )
        said = "Broken on %d of the %s it covers (packages that did not load and match): %s." % (
            len(p.broken),
            md.plural(p.pairs, "pair"),
            named,
        )
    if p.forward:
        said += " Loaded on an older release (not promised): every package loaded and matched on %d of %s." % (
            p.forward_passed,
            md.plural(p.forward, "pair"),
        )
    return said


def legend() -> str:
    """The load statuses as they read for a package: symbol, name and meaning."""
    rows: List[List[str]] = [[SYMBOLS[s], md.text(s), md.text(AOTI_LOAD_MEANING[s])] for s in LOAD_STATUSES]
    rows.append([NO_RECORD, "no record", "this release did not load this package"])
    return md.table(["", "status", "meaning"], rows)


def _symbol(value: Any) -> str:
    return SYMBOLS.get(value, "?") if isinstance(value, str) else NO_RECORD

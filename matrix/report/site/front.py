"""The widgets of the site's front page (:mod:`matrix.report.index` builds the page itself): the grid of case ×
release × mode with its filters, the table of changes with its filters, the CSV downloads and the badge.

The grid's data (:func:`grid_data`) is embedded in the page as JSON; ``assets/site.js`` draws the grid from it and
filters it by a search over case names, tags and error text, and by tag, status, release, mode and pack (the
real-model pack is the cases under ``real_models/``). The filters' state is kept in the page's location fragment
(``#status=failing&release=2.15.0``), so that a filtered grid can be linked; each change is a history entry.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

import pandas as pd

from matrix.contract.schema import MODES, STAGES, STATUSES, Status, first_line
from matrix.records import failures, stage_outcomes
from matrix.records.columns import FAILING
from matrix.report import index
from matrix.report import markdown as md
from matrix.report.findings import Findings
from matrix.report.phrases import clip, listed
from matrix.report.real_models import PREFIX as REAL_MODELS
from matrix.report.site import changes, grid_marks
from matrix.report.site.downloads import CSV, TABLES, names
from matrix.report.site.markup import filter_link, present, script_json, selects, text
from matrix.report.writers import glyph

ANY_FAILURE = "failing"  # the grid's status filter for every failing status
NOTE_LIMIT = 160  # characters of an error kept in a grid cell's tooltip
ERROR_LIMIT = 400  # characters of an error's first line the search looks in


def grid_data(
    cells: pd.DataFrame, labels: pd.Series, pages: Mapping[str, str], moves: Optional[pd.DataFrame] = None
) -> Dict[str, Any]:
    """What the grid's script shows: its columns (environment, mode) and per case its status in each column.

    ``columns`` hold indexes into ``envs`` and ``modes``; a case's ``cells`` hold indexes into
    ``statuses`` (None: no record), its ``notes`` the error behind a column's status, its ``stages`` the
    later stages that failed in a column, its ``moves`` the transitions (of ``moves``) that end in a column, and
    its ``packages`` what it ran with beside torch; ``failing`` the statuses the filter value ``any_failure``
    picks (with every cell that has ``stages``).
    """
    envs = list(dict.fromkeys(str(label) for label in labels))
    seen_modes = set(map(str, cells["mode"]))
    modes = [m for m in MODES if m in seen_modes] + sorted(seen_modes - set(MODES))
    statuses = list(STATUSES) + sorted(set(map(str, cells["status"])) - set(STATUSES))
    columns = [(e, m) for e in range(len(envs)) for m in range(len(modes))]
    position = {(envs[e], modes[m]): i for i, (e, m) in enumerate(columns)}
    cases: Dict[str, Dict[str, Any]] = {}
    wanted = ["release", "case", "mode", "status", "tags", "error_type", "error_message", "missing"]
    wanted += [stage + suffix for stage, _ in STAGES for suffix in ("_outcome", "_error")]
    wanted += [*stage_outcomes.COLUMNS, "dependency_set", "with_set"]
    shown = cells[[c for c in wanted if c in cells.columns]].assign(environment=labels.to_numpy())
    for row in shown.to_dict("records"):
        name = str(row["case"])
        case = cases.get(name)
        if case is None:
            case = cases[name] = {
                "name": name,
                "page": pages[name],
                "tags": sorted(set(listed(row["tags"]))),
                "real": name.startswith(REAL_MODELS),
                "cells": [None] * len(columns),
                "notes": {},
                "stages": {},
                "moves": {},
                "packages": set(),
                "errors": set(),
            }
        column = position[(str(row["environment"]), str(row["mode"]))]
        case["cells"][column] = statuses.index(str(row["status"]))
        note = cell_note(row)
        if note:
            case["notes"][str(column)] = note
        failed = failures.failed_stages(row)
        if failed:
            case["stages"][str(column)] = list(failed)
        case["packages"].update(grid_marks.packages(row))
        case["errors"].update(errors(row))
    for name, moved in grid_marks.moves_by_cell(moves, cells, labels, position).items():
        if name in cases:
            cases[name]["moves"] = moved
    for case in cases.values():
        case["packages"], case["errors"] = sorted(case["packages"]), sorted(case["errors"])
    return {
        "envs": envs,
        "modes": modes,
        "letters": [m[:1].upper() for m in modes],  # S, N: the letters heading the modes' columns
        "statuses": statuses,
        "glyphs": [glyph(s) for s in statuses],
        "failing": [statuses.index(s) for s in FAILING],
        "any_failure": ANY_FAILURE,  # the status filter's value for every failing status and failed stage
        "stage_failure": grid_marks.STAGE_FAILURE,  # the status filter's value for a failed later stage
        "move_kinds": list(grid_marks.MOVE_KINDS),  # the status filter's values for a kind of transition
        "columns": [list(c) for c in columns],
        "tags": sorted({tag for case in cases.values() for tag in case["tags"]}),
        "cases": [cases[name] for name in sorted(cases)],
    }


def error_line(row: Mapping[str, Any]) -> str:
    """A cell's error in one line: ``RuntimeError: boom``; "" where it has none."""
    return ": ".join(p for p in (present(row.get("error_type")), first_line(row.get("error_message"), limit=None)) if p)


def errors(row: Mapping[str, Any]) -> List[str]:
    """What the search finds a cell by: its error's first line and each failed stage's."""
    found = [error_line(row)] + [first_line(row.get(stage + "_error"), limit=None) for stage, _ in STAGES]
    found += [issue.reference for issue in failures.cell_issues(row).values() if issue.link]
    return [clip(e, ERROR_LIMIT) for e in found if e]


def cell_note(row: Mapping[str, Any]) -> str:
    """The error behind a cell's status in one line (``RuntimeError: boom``), what the release lacks, failed stages,
    and the known upstream issue each failure matches."""
    note = error_line(row)
    if not note and row.get("status") == Status.NOT_APPLICABLE.value and listed(row.get("missing")):
        note = "lacks " + ", ".join(listed(row.get("missing")))
    known = failures.cell_issues(row) if row.get("release") is not None else {}
    if note and failures.EXPORT in known:
        note += " (%s)" % known[failures.EXPORT].words
    stages = [
        "%s fails%s" % (stage, " (%s)" % known[stage].words if stage in known else "")
        for stage in failures.failed_stages(row)
    ]
    return clip("; ".join(([note] if note else []) + stages), NOTE_LIMIT)


def widgets(f: Findings, parquet: Iterable[str], csv: bool = True) -> Dict[str, str]:
    """The front page's widgets (:data:`matrix.report.index.BADGE` and the others) as HTML: the badge, the grid and
    its filters, the table of changes and its filters, the CSV downloads, and the scripts that drive them.
    ``parquet`` names the report's tables, offered as CSV where ``csv``."""
    pages = {name: "cases/%s.html" % md.page_file(name) for name in sorted(set(map(str, f.cells["case"])))}
    data = grid_data(f.cells, f.labels, pages, f.moves)
    return {
        index.BADGE: '<p><img src="badge.svg" alt="pass rate of the newest release" class="badge"></p>',
        index.GRID: grid(data),
        **changes.widget(f.steps),
        index.DOWNLOADS: csv_tables(names(sorted(parquet)), csv),
        index.FAILING: failing(f),
        index.SCRIPTS: '<script type="application/json" id="grid-data">%s</script><script src="site.js"></script>'
        % script_json(data),
    }


def failing(f: Findings) -> str:
    """A link to the grid filtered to the newest release's failing cells ("" without a newest release)."""
    newest = f.newest_pass_rate[0]
    if not newest:
        return ""
    link = filter_link(release=newest, status=ANY_FAILURE)
    return '<p>In the grid, the newest release\'s cells that fail: <a href="%s">its failing cells</a>.</p>' % link


def grid(data: Mapping[str, Any]) -> str:
    """The grid of case × release × mode, with its filters; ``site.js`` draws it from the page's JSON."""
    choices = {
        "tag": [("", "every tag")] + [(t, t) for t in data["tags"]],
        "status": [("", "every status"), *grid_marks.status_choices(ANY_FAILURE)] + [(s, s) for s in data["statuses"]],
        "release": [("", "every release")] + [(e, e) for e in data["envs"]],
        "mode": [("", "both modes")] + [(m, m) for m in data["modes"]],
        "pack": [("", "every case"), ("real", "real-model pack"), ("other", "all but the real-model pack")],
    }
    menus = selects("f", ((name, name, options) for name, options in choices.items()))
    return "\n".join(
        [
            "<p>A cell's tooltip holds its error, and a cell outlined in red exported but failed a later stage. Search"
            " matches case names, tags, packages and error text.</p>",
            '<form id="filters" class="filters" onsubmit="return false"><label>search <input id="f-search"'
            ' type="search" placeholder="case name, tag, package or error text" autocomplete="off"></label>%s</form>'
            % menus,
            '<p id="f-count" aria-live="polite">%d cases</p>' % len(data["cases"]),
            "<noscript><p>The grid needs JavaScript; the tables to download hold the same data.</p></noscript>",
            '<div class="grid-wrap"><div id="grid"></div></div>',
        ]
    )


# What the tables section says where the build wrote no CSV (the report committed in the project).
NO_CSV = (
    "As gzipped CSV too where the report is published to the reports branch or GitHub Pages (export-matrix report"
    " --csv)."
)


def csv_tables(downloads: Sequence[str], csv: bool = True) -> str:
    """The tables as gzipped CSV from the site's folder where ``csv``, else where they are published; the badge."""
    if csv:
        links = " · ".join(
            '<a href="%s" download>%s</a>' % (text("%s/%s%s" % (TABLES, name, CSV)), text(name)) for name in downloads
        )
        said = "<p>As gzipped CSV: %s.</p>" % links
    else:
        said = "<p>%s</p>" % text(NO_CSV)
    return said + '<p>A badge with the newest release\'s pass rate: <a href="badge.svg">badge.svg</a>.</p>'

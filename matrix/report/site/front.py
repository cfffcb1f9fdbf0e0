"""The site's front page: its sections in order, each rendered by its own module from the same model as the
Markdown front page, and the grid of case × release × mode with its filters.

The grid's data (:func:`grid_data`) is embedded in the page as JSON; ``assets/site.js`` draws the grid from it and
filters it by a search over case names, tags and error text, and by tag, status, release, mode and pack (the
real-model pack is the cases under ``real_models/``). The filters' state is kept in the page's location fragment
(``#status=failing&release=2.15.0``), so that a filtered grid can be linked; each change is a history entry.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

import pandas as pd

from matrix.contract.schema import MODES, STAGES, STATUSES, Status, first_line
from matrix.records import failures
from matrix.records.columns import FAILING
from matrix.report import citation, document, transition_page
from matrix.report import markdown as md
from matrix.report.findings import Findings
from matrix.report.index import ENV_ERROR_HEADERS, env_error_cells
from matrix.report.real_models import PREFIX as REAL_MODELS
from matrix.report.site import changes, charts, devices, glossary, grid_marks, legend, real_models, run, saved
from matrix.report.site import upgrade as upgrade_page
from matrix.report.site.downloads import CSV, TABLES
from matrix.report.site.markup import GLYPHS, clip, listed, page, present, script_json, selects, table, text
from matrix.report.site.verdicts import ANY_FAILURE
from matrix.report.site.verdicts import render as verdicts_section
from matrix.report.writers import html as html_writer

# The sections that open on a click on their heading, so that the page reads in a few screens; a link to one
# (#legend) still lands on its heading.
COLLAPSED = ("env-errors", "charts", "tables", "legend")
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
    wanted += ["aoti_status", "aoti_error_type", "aoti_error", "dependency_set", "with_set"]
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
                "packages": [],
                "errors": [],
            }
        column = position[(str(row["environment"]), str(row["mode"]))]
        case["cells"][column] = statuses.index(str(row["status"]))
        note = cell_note(row)
        if note:
            case["notes"][str(column)] = note
        failed = failures.failed_stages(row)
        if failed:
            case["stages"][str(column)] = list(failed)
        for package in grid_marks.packages(row):
            if package not in case["packages"]:
                case["packages"].append(package)
        for error in errors(row):
            if error not in case["errors"]:
                case["errors"].append(error)
    for name, moved in grid_marks.moves_by_cell(moves, cells, labels, position).items():
        if name in cases:
            cases[name]["moves"] = moved
    for case in cases.values():
        case["errors"].sort()
        case["packages"].sort()
    return {
        "envs": envs,
        "modes": modes,
        "letters": [legend.mode_letter(m) for m in modes],
        "statuses": statuses,
        "glyphs": [GLYPHS.get(s, "?") for s in statuses],
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
    note = "; ".join(([note] if note else []) + stages)
    return note if len(note) <= NOTE_LIMIT else note[: NOTE_LIMIT - 1] + "…"


def render(f: Findings, pages: Mapping[str, str], downloads: Sequence[str], csv: bool = True) -> str:
    """The front page; ``pages`` maps each case to its page, ``downloads`` names the report's tables, offered as
    Parquet and, where ``csv``, as the gzipped CSV under ``tables/``."""
    data = grid_data(f.cells, f.labels, pages, f.moves)
    count = len(data["cases"])
    lead = text("%s; %s." % (md.cells_counted(f.scope), md.releases_and_builds(f.scope)))
    newest = f.verdicts.regressions.newest if f.verdicts is not None else ()
    transitions = transition_page.sections(f.steps, newest)
    sections = [
        (
            "verdicts",
            "Verdicts",
            verdicts_section(
                f.pass_rates,
                f.verdicts,
                pages,
                changes.newest_link(f.steps, newest),
                f.incomplete,
                f.builds,
                # Each build by the label of its first environment: the grid's release filter takes labels.
                dict(reversed(list(zip(f.cells["release"].astype(str), f.labels.astype(str))))),
                f.candidates,
                f.model.known_issues,
                more=[*saved.aoti_lines(f), upgrade_page.line(f.model.upgrades), devices.line(f.model.devices)],
            ),
        ),
        ("newest", "Newest release", _drawn(transitions[0], f, pages)),
        ("cases", "Cases", cases_section(f, data, count)),
        ("changes", "Changes", _drawn(transitions[1], f, pages)),
        ("devices", "Devices", devices.section(f.model.devices, pages)),
        ("real-models", "Real models", real_models.section(f, pages)),
        ("saved", "Saved programs", saved.section(f, pages, charts.figures(f.artifacts.charts) if f.artifacts else "")),
        ("charts", "Charts", charts.section(f.charts)),
        ("env-errors", "Install errors", env_errors(f.env_errors)),
        ("run", "The run", run.render(f)),
        ("tables", "Tables", tables_section(downloads, csv)),
        ("legend", "Legend", legend.section(data["modes"], glossary.PAGE)),
    ]
    shown = [
        (anchor, name, collapsed(html) if anchor in COLLAPSED else html) for anchor, name, html in sections if html
    ]
    nav = " · ".join('<a href="#%s">%s</a>' % (anchor, text(name)) for anchor, name, _ in shown)
    nav += ' · <a href="%s">Glossary</a>' % glossary.PAGE
    body = [
        "<header><h1>%s</h1>" % text(f.title),
        '<p class="lead">%s <img src="badge.svg" alt="pass rate of the newest release" class="badge"></p>' % lead,
        '<p class="stamp">%s <a href="#run">The run</a>.</p>' % text(citation.line(f.stamp, f.environments)),
        "<nav>%s</nav></header>" % nav,
        *(html for _, _, html in shown),
        '<script type="application/json" id="grid-data">%s</script>' % script_json(data),
        '<script src="site.js"></script>',
    ]
    return page(f.title, "\n".join(body), "")


def _drawn(section: document.Section, f: Findings, pages: Mapping[str, str]) -> str:
    """A section built as a document, drawn as the site draws a page's (until this page is one)."""
    site_pages = {"index", *(p[: -len(".html")] for p in pages.values()), *map(transition_page.name, f.steps)}
    return html_writer._Writer(html_writer.page_path("index", site_pages), site_pages, changes.widget(f.steps)).block(
        section, 2
    )


def collapsed(html: str) -> str:
    """A section whose body opens on a click on its heading: ``<section><h2>…</h2>…</section>`` in a <details>."""
    start, end = html.find("<h2"), html.find("</h2>")
    if start < 0 or end < 0 or not html.rstrip().endswith("</section>"):
        return html
    end += len("</h2>")
    body = html.rstrip()[: -len("</section>")]
    return "%s<details><summary>%s</summary>%s</details></section>" % (body[:start], body[start:end], body[end:])


def cases_section(f: Findings, data: Mapping[str, Any], count: int) -> str:
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
            '<section id="cases"><h2>Cases</h2>',
            "<p>Every case in every release and mode; a cell's tooltip holds its error, and a cell outlined in red"
            " exported but failed a later stage. Search matches case names, tags, packages and error text.</p>",
            '<form id="filters" class="filters" onsubmit="return false"><label>search <input id="f-search"'
            ' type="search" placeholder="case name, tag, package or error text" autocomplete="off"></label>%s</form>'
            % menus,
            '<p id="f-count" aria-live="polite">%d cases</p>' % count,
            "<noscript><p>The grid needs JavaScript; the tables to download hold the same data.</p></noscript>",
            '<div class="grid-wrap"><div id="grid"></div></div></section>',
        ]
    )


# What the tables section says where the build wrote no CSV (the report committed in the project).
NO_CSV = (
    "As gzipped CSV too where the report is published to the reports branch or GitHub Pages (export-matrix report"
    " --csv); pandas and pyarrow read the Parquet."
)


def tables_section(downloads: Sequence[str], csv: bool = True) -> str:
    """The report's tables to download: the Parquet the report wrote, one folder up, and where ``csv`` the CSV from
    the site's folder; without it, a line saying where the CSV is published."""
    items = "".join(
        '<li>%s: %s<a href="%s" download>Parquet</a></li>'
        % (
            text(name),
            '<a href="%s" download>CSV (gzip)</a> · ' % text("%s/%s%s" % (TABLES, name, CSV)) if csv else "",
            text("../%s.parquet" % name),
        )
        for name in downloads
    )
    where = "" if csv else "<p>%s</p>" % text(NO_CSV)
    return "\n".join(
        [
            '<section id="tables"><h2>Tables</h2><p>The report\'s tables, to download:</p><ul>%s</ul>%s'
            % (items, where),
            '<p>A badge with the newest release\'s pass rate: <a href="badge.svg">badge.svg</a>.</p></section>',
        ]
    )


def env_errors(frame: pd.DataFrame) -> str:
    """The environments that could not be installed, and why: their cells are missing from the grid."""
    if frame.empty:
        return ""
    rows = [
        [text(v) for v in env_error_cells(row)]
        + [text(row.get("error_type")), text(clip(first_line(row.get("error_message"), limit=None), 300))]
        for row in frame.to_dict("records")
    ]
    return '<section id="env-errors"><h2>Environments that failed to install</h2>%s</section>' % table(
        ENV_ERROR_HEADERS, rows
    )

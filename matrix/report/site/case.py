"""A case's page on the site: status per release and mode, transitions, graph diffs, errors, repros, saved × loaded,
source.

Plain HTML; one small script, ``tips.js``, writes the tooltips of the releases × releases grids from the page's
list of what their squares say (the failures are also listed as text under each grid). The graph diffs are those
of the case's ``graph-change`` transitions, as :mod:`matrix.records.transitions` judged them, each distinct diff
once: its first lines, and a link to the whole, the file the Markdown page links too
(:mod:`matrix.report.diff_files`). The packages beside torch are those the cell's environment resolved for the
packages its dependency set names.
"""

from __future__ import annotations

import itertools
import posixpath
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple
from urllib.parse import quote

from matrix.contract.schema import (
    AOTI_COMPILE_MEANING,
    AOTI_TRIED,
    MODES,
    STAGE_ERROR,
    STAGE_OK,
    STAGES,
    LoadStatus,
    Status,
    first_line,
)
from matrix.records import alike, packages, repro, store
from matrix.records import artifacts as loads_table
from matrix.records import failures as stage_failures
from matrix.records import graph_diffs as graph_diffs_table
from matrix.records.aoti_loads import PROMISED_FROM
from matrix.records.repro import Failure
from matrix.report import aoti_loads as aoti_report
from matrix.report import case_grids, case_page, diff_files
from matrix.report import markdown as md
from matrix.report import repro as report_repro
from matrix.report.real_models import PREFIX as REAL_MODELS
from matrix.report.site import known_issues, legend
from matrix.report.site.front import NOTE_LIMIT
from matrix.report.site.glossary import PAGE as GLOSSARY
from matrix.report.site.markup import (
    NO_RECORD,
    breakable,
    clip,
    compile_status,
    inline,
    listed,
    load_status,
    page,
    present,
    script_json,
    status,
    table,
    text,
)

TRACEBACK_LINES = 80  # the tail of a traceback is where the error is
# Load statuses listed under the grid as no failure: a pass, or a program not tried (the loading release has
# no torch.export.load, or the program is untrusted); the others are listed with the pairs they show on.
QUIET_LOADS = (LoadStatus.PASS.value, LoadStatus.NOT_APPLICABLE.value, LoadStatus.UNTRUSTED.value)
SHOWN_PAIRS = 8

Row = Dict[str, Any]
# A record's square in a grid: its class, glyph, what its tooltip says after naming its row and column, and the
# failure it lists under the grid (None: none).
Square = Tuple[str, str, str, Optional[str]]
TIPS = "tips.js"  # draws the squares' tooltips from each grid's list of what they say
# What a page's grid squares say (after naming their row and column), each once, by its place in the page's list.
Said = Dict[str, int]
# The columns of the cell table a page shows (with the ``environment`` label); the rest stay out of its rows.
COLUMNS = [
    "release", "variant", "python", "case", "mode", "status", "tags", "requires", "source", "expected", "case_file",
    "error_type", "error_message", "error_traceback", "check_detail", "stderr_tail", "flaky", "statuses", "missing",
    "graph_text", "dependency_set", "added_packages",
    *(stage + suffix for stage, _ in STAGES for suffix in ("_outcome", "_error")),
    "aoti_status", "aoti_error_type", "aoti_error",
]  # fmt: skip


def render(
    case: str,
    rows: List[Row],
    moves: List[Row],
    loads: List[Row],
    orders: Tuple[List[str], List[str]],
    roots: Optional[Sequence[str]] = None,
    failures: Sequence[Failure] = (),
    package_loads: Sequence[Row] = (),
    package_orders: Tuple[Sequence[str], Sequence[str]] = ((), ()),
    compiles: Sequence[Row] = (),
    compile_orders: Tuple[Sequence[str], Sequence[str]] = ((), ()),
    shelf: Optional[diff_files.Shelf] = None,
    devices: str = "",
) -> str:
    """The page of one case: ``rows`` its cells in report order with an ``environment`` label, ``moves`` its
    transitions, ``loads`` its rows of the load table, ``orders`` the saving and loading releases in order,
    ``roots`` the folders its source may be shown from (by default :func:`case_page.default_roots`),
    ``failures`` its distinct failures (``Model.repros``), each shown with its repro, ``package_loads`` its rows of
    the compiled packages' table (``Model.packages``) and ``package_orders`` that table's compiling and loading
    releases in order, ``compiles`` its rows of the table of programs compiled on a newer release
    (``Model.compiles``) and ``compile_orders`` that table's exporting and compiling releases in order; ``shelf``
    keeps the graph diff files the page links (:mod:`matrix.report.diff_files`), for the build to write; ``devices``
    the section on the builds that also ran the case on another device (:func:`.devices.case_section`), after its
    repros."""
    roots = case_page.default_roots() if roots is None else roots
    diffs_kept = diff_files.Shelf() if shelf is None else shelf
    said: Said = {}  # what the squares of every grid on the page say, each once
    first = rows[-1]
    facts = [
        ("tags", ", ".join(sorted(listed(first.get("tags"))))),
        ("requires", ", ".join(listed(first.get("requires")))),
        ("source", present(first.get("source"))),
        ("claim", present(first.get("expected")) or case_page.NO_CLAIM),
        ("case file", present(first.get("case_file"))),
        ("pack", "real models" if case.startswith(REAL_MODELS) else None),
    ]
    body = [
        '<header><p><a href="../index.html">← every case</a> · <a href="../%s">glossary</a></p><h1>%s</h1>'
        % (GLOSSARY, text(case)),
        '<dl class="facts">%s</dl></header>' % "".join("<dt>%s</dt><dd>%s</dd>" % (k, text(v)) for k, v in facts if v),
        "<h2>Status</h2>",
        status_table(rows),
    ]
    if moves:
        body += ["<h2>Transitions</h2>", _moves_table(moves)]
    diffs = graph_diffs(rows, moves)
    if diffs:
        body.append("<h2>Graph changes</h2>")
        body += [
            diff_block(case, title, lines, diffs_kept)
            if lines
            else "<p>%s: %s</p>" % (text(title), text(case_page.SAME_TEXT))
            for title, lines in diffs
        ]
    errors = _errors(rows)
    if errors:
        body += ["<h2>Errors</h2>", *errors]
    if failures:
        order = store.ordered(row["release"] for row in rows)
        body += ["<h2>Reproduce</h2>", "<p>%s</p>" % text(report_repro.INTRO)]
        body += [reproduce(failure, order, roots) for failure in failures]
    if devices:
        body.append(devices)
    body += _grids(
        "<h2>Saved × loaded</h2>",
        "Rows: the release that saved the exported program; columns: the release that loaded it and ran it on the"
        " saved inputs; the failures are listed under each grid.",
        loads,
        lambda mine, mode: load_grid(mine, mode, orders, said=said),
    )
    if loads:
        body.append("<details open><summary>What the glyphs mean</summary>%s</details>" % legend.loads())
    body += package_section(package_loads, package_orders, said)
    body += compile_section(compiles, compile_orders, said)
    body += [
        "<h2>Source</h2>",
        source_block(first.get("case_file"), roots),
    ]
    if said:
        body.append(tips_script(said))
        body.append('<script src="../%s"></script>' % TIPS)
    return page("%s · torch.export matrix" % case, "\n".join(body), "../")


def status_table(rows: List[Row]) -> str:
    """Status per release (rows) and mode (columns), with the packages beside torch where any were recorded."""
    cells: Dict[Tuple[str, str], str] = {}
    added: Dict[str, str] = {}
    for row in rows:
        env = str(row["environment"])
        shown = status(row["status"])
        if present(row.get("error_type")):
            shown += " <code>%s</code>" % text(row["error_type"])
        for stage, label in STAGES:
            if row.get(stage + "_outcome") == STAGE_ERROR:
                shown += ' <span class="stage">%s fails</span>' % text(label)
        if row.get("flaky") is True:
            shown += " <small>(flaky: %s)</small>" % text(row.get("statuses"))
        if row["status"] == Status.NOT_APPLICABLE.value and listed(row.get("missing")):
            shown += " <small>(lacks %s)</small>" % text(", ".join(listed(row["missing"])))
        cells[(env, str(row["mode"]))] = shown
        named = packages.describe(row.get("dependency_set"), row.get("added_packages"))
        if named:
            added[env] = named
    envs = list(dict.fromkeys(str(row["environment"]) for row in rows))
    modes = [m for m in MODES if any(key[1] == m for key in cells)]
    head = "<th>release</th>" + "".join("<th>%s</th>" % text(m) for m in modes)
    head += "<th>packages beside torch</th>" if added else ""
    lines = []
    for env in envs:
        line = "<th>%s</th>" % text(env) + "".join("<td>%s</td>" % cells.get((env, m), NO_RECORD) for m in modes)
        line += "<td>%s</td>" % text(added.get(env, "")) if added else ""
        lines.append("<tr>%s</tr>" % line)
    return '<table class="status"><thead><tr>%s</tr></thead><tbody>%s</tbody></table>' % (head, "".join(lines))


def reproduce(failure: Failure, order: Sequence[str], roots: Sequence[str]) -> str:
    """One failure's repro: where it shows, the check command, and a link to its script (from ``site/cases/``)."""
    parts = [
        "<h3>%s</h3>" % text(failure.title),
        "<ul>%s</ul>" % "".join("<li>%s</li>" % text(line) for line in repro.recorded(failure.cell)),
        "<p>Shows on %s; the newest cell: <code>%s</code>.</p>"
        % (text(report_repro.shown_on(failure, order)), text(failure.cell.cell_id)),
    ]
    command = repro.check_command(failure.cell)
    if command:
        parts.append('<pre class="command">%s</pre>' % text(command))
    if report_repro.available(failure, roots):
        # The script the Markdown page links to, beside that page (cases/NAME.repro/): one copy, two folders up.
        path = report_repro.site_link(failure)
        parts.append(
            '<p>Without this tool: <a href="%s" download>%s</a>, a standalone script.</p>'
            % (text(quote(path, safe="/+~")), text(posixpath.basename(path)))
        )
    else:
        parts.append(
            "<p><em>%s.</em></p>" % (text(report_repro.NO_SCRIPT) % ("<code>%s</code>" % text(failure.cell.case_file)))
        )
    return '<div class="repro">%s</div>' % "".join(parts)


def _moves_table(moves: List[Row]) -> str:
    rows = [
        ["%s → %s" % (text(m["before"]), text(m["after"]))]
        + [text(v) for v in (_mode(m), m["kind"], clip(present(m.get("detail")), 300))]
        for m in moves
    ]
    return table(["releases", "mode", "kind", "detail"], rows, "moves")


def _mode(move: Row) -> str:
    """A transition's mode, with the ``--with`` set its cells ran with where they had one."""
    named = present(move.get("with_set"))
    return "%s [%s]" % (move["mode"], named) if named else str(move["mode"])


def graph_diffs(rows: List[Row], moves: List[Row]) -> List[Tuple[str, List[str]]]:
    """A unified diff of the graphs on each side of each of the case's graph changes, each distinct diff once:
    (title naming every transition it applies to, lines). Where the texts are missing, the diff an earlier
    report kept for the change, titled with where it was kept."""
    graphs = {
        (str(r["release"]), str(r["variant"]), str(r["python"]), str(r["mode"])): r.get("graph_text") for r in rows
    }
    found = []
    for move in moves:
        if move["kind"] != "graph-change":
            continue
        mode = str(move["mode"])
        before = graphs.get((str(move["before"]), str(move["variant_before"]), str(move["python_before"]), mode))
        after = graphs.get((str(move["after"]), str(move["variant"]), str(move["python_after"]), mode))
        named = present(move.get("with_set"))
        place = (str(move["before"]), str(move["after"]), mode, " [%s]" % named if named else "")
        if not (present(before) and present(after)):
            # The texts are missing: the diff an earlier report kept for this very change, if any.
            kept = move.get(graph_diffs_table.CARRIED)
            if isinstance(kept, str):
                source = " (kept from %s)" % move.get(graph_diffs_table.CARRIED_FROM)
                found.append(((*place[:3], place[3] + source), kept.splitlines()))
            continue
        found.append((place, graph_diffs_table.diff_lines(str(before), str(after))))
    return case_page.distinct_diffs(found)


def source_block(case_file: Any, roots: Sequence[str]) -> str:
    """The case's source, collapsed; or one line saying why it is not shown."""
    if not present(case_file):
        return "<p>%s</p>" % text(case_page.NO_CASE_FILE)
    source, _ = case_page.read_source(case_file, roots)
    if source is None:
        return "<p>%s</p>" % (text(case_page.NOT_FOUND) % ("<code>%s</code>" % text(case_file)))
    return '<details><summary><code>%s</code>, %s</summary><pre class="source">%s</pre></details>' % (
        text(case_file),
        text(case_page.AS_IT_IS),
        text(source),
    )


def diff_block(case: str, title: str, lines: List[str], shelf: diff_files.Shelf) -> str:
    """A graph diff, collapsed: its first lines, then a link to the whole (the file the Markdown page links too)."""
    shelf.put(case, lines)
    part = diff_files.excerpt(lines)
    href = diff_files.link(case, lines, "site/cases/page.html")
    label = "the whole diff" if part.cut else "the diff as a file"
    return (
        '<details><summary>%s <span class="counts">(%s)</span></summary><pre class="diff">%s%s</pre>'
        '<p class="whole"><a href="%s">%s</a></p></details>'
        % (
            text(title),
            text(part.counts()),
            diff_lines(list(part.shown)),
            "\n…" if part.cut else "",
            text(quote(href, safe="/+~")),
            label,
        )
    )


def diff_lines(lines: List[str]) -> str:
    """A unified diff's lines for a ``pre.diff``: each run of added, removed or hunk lines in one span of its kind
    (one span a line would be a fifth of a long diff's bytes), context lines as they are."""
    kinds = {"+": "add", "-": "del", "@": "hunk"}
    runs = []
    for kind, run in itertools.groupby(lines, key=lambda line: kinds.get(line[:1])):
        said = "\n".join(text(line) for line in run)
        runs.append('<span class="%s">%s</span>' % (kind, said) if kind else said)
    return "\n".join(runs)


def _tail(value: Any) -> str:
    kept = (present(value) or "").splitlines()
    if len(kept) > TRACEBACK_LINES:
        kept = ["… (%d lines above)" % (len(kept) - TRACEBACK_LINES)] + kept[-TRACEBACK_LINES:]
    return "\n".join(kept)


def _errors(rows: List[Row]) -> List[str]:
    """One collapsed block per distinct error (mode, status, class, first line), with the releases it shows in.

    A stage that failed on an exported program (save/load, decomposition, aoti) is an error of its own. A failure
    that a known upstream issue labels names it, with its link.
    """
    order = store.ordered(row["release"] for row in rows)
    groups: Dict[Tuple[int, str, str, str, str], List[Row]] = {}
    for row in rows:
        mode = str(row["mode"])
        place = MODES.index(mode) if mode in MODES else len(MODES)
        if present(row.get("error_type")) or row["status"] in (Status.CRASH.value, Status.TIMEOUT.value):
            kind = present(row.get("error_type")) or ""
            key = (place, mode, str(row["status"]), kind, first_line(row.get("error_message")))
            groups.setdefault(key, []).append(row)
        for label in stage_failures.failed_stages(row):
            key = (place, mode, "%s fails" % label, "", first_line(stage_failures.stage_line(row, label)))
            groups.setdefault(key, []).append(row)
    parts = []
    for (_, mode, outcome, kind, message), members in sorted(groups.items()):
        newest = next((r for r in reversed(members) if present(r.get("error_traceback"))), members[-1])
        spans = md.release_spans([str(r["release"]) for r in members], order)
        said = ": ".join(p for p in (kind, clip(message, 300)) if p)
        summary = " · ".join(p for p in (mode, outcome, said) if p) + " — " + spans
        blocks = [
            "<p>%s:</p><pre>%s</pre>" % (text(label), text(value))
            for label, value in (
                ("traceback (%s)" % newest["release"], _tail(newest.get("error_traceback"))),
                ("check", present(newest.get("check_detail"))),
                ("stderr", _tail(newest.get("stderr_tail"))),
            )
            if value
        ]
        inner = "".join(blocks) or "<p>No traceback recorded.</p>"
        stage = outcome[: -len(" fails")] if outcome.endswith(" fails") else stage_failures.EXPORT
        known = list({i.id: i for i in (stage_failures.cell_issues(r).get(stage) for r in members) if i}.values())
        summary_html = text(summary) + "".join(" · " + known_issues.linked(i, i.words) for i in known)
        inner = "".join("<p>%s: %s</p>" % (known_issues.linked(i, i.words), text(i.summary)) for i in known) + inner
        parts.append("<details><summary>%s</summary>%s</details>" % (summary_html, inner))
    return parts


def _grids(heading: str, intro: str, rows: Sequence[Row], grid: Callable[[List[Row], str], str]) -> List[str]:
    """A section of grids: ``heading``, ``intro`` (HTML) and ``grid(rows, mode)`` for each mode of ``rows``; none
    without rows."""
    mine = list(rows)
    grids = [grid(mine, mode) for mode in MODES if any(r["mode"] == mode for r in mine)]
    return [heading, "<p>%s</p>" % intro, *grids] if mine else []


def package_section(
    package_loads: Sequence[Row], orders: Tuple[Sequence[str], Sequence[str]], said: Optional[Said] = None
) -> List[str]:
    """The case's compiled × loaded grids of AOTInductor packages, under its saved × loaded ones; none without."""
    return _grids(
        '<h2 id="compiled-loaded">Compiled × loaded</h2>',
        "The AOTInductor package compiled from the exported program (run with --stages …,aoti). Rows: the release"
        " that compiled it; columns: the release that loaded it, in a process of its own, and ran it on the saved"
        " inputs; the failures are listed under each grid. Upstream promises that packages load on newer releases"
        " from %s on, not on older ones." % text(PROMISED_FROM),
        package_loads,
        lambda rows, mode: load_grid(rows, mode, orders, "compiled", said),
    )


def compile_section(
    compiles: Sequence[Row], orders: Tuple[Sequence[str], Sequence[str]], said: Optional[Said] = None
) -> List[str]:
    """The case's exported × compiled grids (programs compiled on a newer release), beside its compiled × loaded
    ones; none without."""
    return _grids(
        '<h2 id="exported-compiled">Exported × compiled</h2>',
        "The exported program saved on one release, compiled with AOTInductor on a newer one (load --aoti), its"
        " package loaded there in a process that never compiled and run on the saved inputs. Rows: the release that"
        " exported it; columns: the release that compiled it; the failures, with the step where each stopped, are"
        " listed under each grid. %s"
        % inline(
            "S: not compiled, %s; %s %s."
            % (AOTI_COMPILE_MEANING["skipped"].split(": ", 1)[-1], NO_RECORD, aoti_report.NOT_COMPILED)
        ),
        compiles,
        lambda rows, mode: compile_grid(rows, mode, orders, said),
    )


def compile_grid(
    rows: List[Row], mode: str, orders: Tuple[Sequence[str], Sequence[str]], said: Optional[Said] = None
) -> str:
    """The case's exported × compiled outcomes in one mode, with the failures listed under it (``said``: as for
    :func:`_grid`)."""

    def square(row: Row) -> Square:
        css, glyph = compile_status(str(row["status"]))
        said = loads_table.Failure.of(row).text if row["status"] != STAGE_OK else str(row["status"])
        title = clip(said, NOTE_LIMIT)
        failed = row["status"] in AOTI_TRIED and row["status"] != STAGE_OK
        issue = stage_failures.use_issue(row, stage_failures.AOTI) if failed else None
        if issue is not None:
            said += " (%s)" % issue.words
            title += " (%s)" % issue.words
        return css, glyph, title, said if failed else None

    mine = [r for r in rows if r["mode"] == mode]
    return _grid(mine, mode, orders, ("exported", "compiled"), square, said=said)


def load_grid(
    loads: List[Row],
    mode: str,
    orders: Tuple[Sequence[str], Sequence[str]],
    made: str = "saved",
    said: Optional[Said] = None,
) -> str:
    """The case's saved × loaded statuses in one mode: saving releases down, loading releases across.

    ``made``: what the rows' release did (``saved`` the program, ``compiled`` the package); ``said``: as for
    :func:`_grid`.
    """

    def square(row: Row) -> Square:
        css, glyph = load_status(str(row["status"]))
        note = ": ".join(p for p in (present(row.get("error_type")), first_line(row.get("error_message"))) if p)
        title = str(row["status"])
        title += " — " + clip(note, NOTE_LIMIT) if note else ""
        issue = stage_failures.use_issue(row, stage_failures.AOTI if made == "compiled" else "load")
        if issue is not None:
            note += " (%s)" % issue.words
            title += " (%s)" % issue.words
        failure = "%s%s" % (row["status"], " — " + note if note else "")
        return css, glyph, title, failure if row["status"] not in QUIET_LOADS else None

    mine = [r for r in loads if r["mode"] == mode]
    notes = ""
    untrusted = sum(1 for r in mine if r["status"] == LoadStatus.UNTRUSTED.value)
    if untrusted:
        glyph, meaning = load_status(LoadStatus.UNTRUSTED.value)[1], LoadStatus.UNTRUSTED.meaning
        notes = "<li>%s: %d %s, no failure</li>" % (
            text("%s untrusted, %s" % (glyph, meaning)),
            untrusted,
            "load" if untrusted == 1 else "loads",
        )
    return _grid(mine, mode, orders, (made, "loaded"), square, notes, said)


def tips_script(said: Said) -> str:
    """The list of what grid squares say (:func:`_grid`), as JSON for ``tips.js``."""
    return '<script class="tips" type="application/json">%s</script>' % script_json(list(said))


def _grid(
    mine: List[Row],
    mode: str,
    orders: Tuple[Sequence[str], Sequence[str]],
    words: Tuple[str, str],
    square: Callable[[Row], Square],
    notes: str = "",
    said: Optional[Said] = None,
) -> str:
    """One mode's grid of a case's records ``mine``: a program per row (in ``orders[0]``), a release per column (in
    ``orders[1]``), a record's square ``square(record)``; under the grid each failure with the pairs it shows on
    (failures that differ only in their numbers as one: :mod:`matrix.records.alike`), then ``notes`` (list items).

    ``words``: what the rows' and the columns' releases did (``saved``, ``loaded``). A square's tooltip reads
    "saved on ROW, loaded on COLUMN: what it says"; what squares say is listed once (an error that many squares
    show is stored once), each square naming its line (``data-t``), and ``tips.js`` writes the tooltips. The list
    is ``said``, shared by the page's grids and written once by :func:`tips_script`; without it, the grid's own
    list follows its table.
    """
    programs = loads_table.program_rows(mine, list(orders[0]))
    columns = [s for s in orders[1] if any(r["loaded"] == s for r in mine)]
    found = {(loads_table.program_label(r), r["loaded"]): r for r in mine}
    corner = "%s on ↓ %s on →" % words
    head = "<th>%s</th>" % corner + "".join("<th>%s</th>" % breakable(s) for s in columns)
    said_by: Said = {} if said is None else said
    lines = []
    failures: List[Tuple[str, str, Tuple[int, Tuple[str, str]]]] = []  # ("", a square's failure, (place, (row, col)))
    for source in programs:
        cells = []
        for target in columns:
            row = found.get((source, target))
            if row is None:
                cells.append('<td class="st">%s</td>' % NO_RECORD)
                continue
            css, glyph, title, failure = square(row)
            index = said_by.setdefault(md.plain(title), len(said_by))
            cells.append('<td class="%s" data-t="%d">%s</td>' % (css, index, glyph))
            if failure is not None:
                failures.append(("", failure, (len(failures), (source, target))))
        lines.append("<tr><th>%s</th>%s</tr>" % (text(source), "".join(cells)))
    # Each line as a reader sees it (cut to NOTE_LIMIT: groups that read alike there are one line), and its pairs.
    shown = alike.joined((clip(failure, NOTE_LIMIT), places) for _, failure, places in alike.group(failures))
    listed = sorted(((f, sorted(p)) for f, p in shown), key=lambda item: (-len(item[1]), item[0]))
    under = "".join(
        "<li>%s: %s</li>" % (text(failure), text(case_grids.named([pair for _, pair in pairs], SHOWN_PAIRS)))
        for failure, pairs in listed
    )
    under += notes
    return (
        '<div class="loads-wrap"><table class="loads" data-made="%s" data-used="%s"><caption>%s</caption>'
        "<thead><tr>%s</tr></thead><tbody>%s</tbody></table>%s</div>%s"
    ) % (
        text(words[0]),
        text(words[1]),
        text(mode),
        head,
        "".join(lines),
        "" if said is not None else tips_script(said_by),
        '<ul class="load-errors">%s</ul>' % under if under else "",
    )

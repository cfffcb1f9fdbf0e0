"""One page per case, built once for its Markdown and its site form: what it is, its status everywhere, each
declared stage's outcome (:mod:`.stage_grids`), how its graph changed, its errors and their repros, its other
devices, and each product's grids (saved × loaded, compiled × loaded, exported × compiled)."""

from __future__ import annotations

import ast
import os
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import pandas as pd

from matrix.contract.products import Product
from matrix.contract.schema import MODES, NO_RECORD, Status, first_line
from matrix.contract.stages import CHECK, REPORTED
from matrix.records import failures, graph_diffs, packages, repro, stage_outcomes, store
from matrix.records.devices import CaseOnDevice
from matrix.records.transitions import version_of
from matrix.report import case_grids, devices_page, diff_files, stage_grids
from matrix.report import document as d
from matrix.report import markdown as md
from matrix.report import phrases as say
from matrix.report import repro as report_repro
from matrix.report.real_models import PREFIX as REAL_MODELS

# Long tracebacks and graphs stay readable; the tail of a traceback is where the error is.
TRACEBACK_LINES = 80


def default_roots() -> Tuple[str, ...]:
    """The case folders shown by default: ``cases/`` of the current folder (where `run` finds cases by default),
    and of the checkout this package runs from (absent when it is installed)."""
    checkout = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "cases")
    return tuple(dict.fromkeys([os.path.abspath("cases"), checkout]))


def read_source(case_file: Any, roots: Sequence[str]) -> Tuple[Optional[str], Optional[str]]:
    """The case's source and docstring, or (None, None) when the file is not inside a case root (any more)."""
    path = report_repro.locate(case_file, roots)
    if path is None:
        return None, None
    try:
        with open(path, encoding="utf-8") as f:
            source = f.read()
    except (OSError, UnicodeDecodeError):
        return None, None
    return source, docstring(source)


def docstring(source: str) -> Optional[str]:
    """The module's docstring, else the first class's (ExportDB puts it on the model)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    classes = (ast.get_docstring(node) for node in tree.body if isinstance(node, ast.ClassDef))
    return ast.get_docstring(tree) or next((found for found in classes if found), None)


Row = Dict[str, Any]


def by_case(items: Iterable[Any], case: Callable[[Any], Any] = lambda row: row["case"]) -> Dict[str, List[Any]]:
    """Records (or anything ``case`` names the case of) by the name of their case, each case's in their order."""
    found: Dict[str, List[Any]] = {}
    for item in items:
        found.setdefault(str(case(item)), []).append(item)
    return found


def build(
    case: str,
    rows: List[Row],
    moves: Sequence[Row] = (),
    roots: Sequence[str] = (),
    repros: Sequence[repro.Failure] = (),
    kept: Optional[Mapping[Tuple[str, ...], Row]] = None,
    shelf: Optional[diff_files.Shelf] = None,
    elsewhere: Sequence[CaseOnDevice] = (),
    uses: Sequence[Tuple[Product, pd.DataFrame, Sequence[Sequence[str]]]] = (),
) -> d.Page:
    """The page of one case, for both its forms.

    ``rows`` are its cells in report order (release, variant, python, mode) as dicts with the graph and traceback
    texts and an ``environment`` label; ``moves`` its transitions; ``roots`` the folders its source may be shown
    from; ``failures`` its distinct failures (``Model.repros``), each shown with its repro; ``kept`` the graph diffs
    earlier reports kept (``graph_diffs.carried``), shown where the texts are missing; ``shelf`` keeps the diff
    files the page links (:mod:`.diff_files`), for the build to write; ``elsewhere`` the builds that also ran the
    case on another device; ``uses`` each product's rows of this case with that product's orders.
    """
    first = rows[-1]
    source, doc = read_source(first["case_file"], roots)
    order = store.ordered(row["release"] for row in rows)
    blocks: List[Any] = [d.Paragraph(say.prose(" ".join(p.split()))) for p in (doc or "").split("\n\n") if p.strip()]
    blocks.append(_facts(case, first))
    blocks.append(d.Section("status", "Status", (_status_table(rows),)))
    staged = stage_grids.case_sections(rows)
    blocks += staged
    blocks.append(_dependencies(rows))
    if moves:
        blocks.append(d.Section("transitions", "Transitions", (_moves_table(moves),)))
    diffs = _graph_diffs(case, rows, kept, shelf if shelf is not None else diff_files.Shelf())
    if diffs:
        blocks.append(d.Section("graph-changes", "Graph changes", tuple(diffs)))
    errors = _errors(rows, order)
    if errors:
        blocks.append(d.Section("errors", "Errors", tuple(errors)))
    blocks.append(report_repro.section(repros, order, roots))
    blocks.append(devices_page.case_section(elsewhere))
    blocks.append(_diagnoses(rows))
    grids = [case_grids.section(product, found, orders) for product, found, orders in uses]
    blocks += grids
    if any(grids) or staged:
        blocks.append(d.Widget(TIPS))
    blocks.append(d.Section("source", "Source", (_source(first["case_file"], source),)))
    lead = d.phrase("Terms and glyphs: ", d.link("glossary", d.page("glossary")), ".")
    return d.Page(PAGES + md.page_file(case), case, tuple(b for b in blocks if b is not None), lead=lead, up=say.BACK)


# The folder of the case pages, as their names start; the site's widget that adds each grid square's row and column
# to its tooltip (assets/tips.js).
PAGES = "cases/"
TIPS = "tips"


# What a page says of a case that carries no claim (no ``expected``).
NO_CLAIM = (
    "none: no source this case follows documents whether it exports, so its failures count as failing with no"
    " claim, neither expected nor unexpected (for an ExportDB case, a release's own ExportDB may still name one)"
)


def _facts(case: str, row: Row) -> d.Items:
    """What the case is: its tags, what it requires, where it comes from, its claim, its pack."""
    facts = [
        d.Item(d.joined(d.phrase(d.Code(v)) for v in sorted(say.listed(row[key]))), title=key)
        for key in ("tags", "requires")
        if say.listed(row[key])
    ]
    if isinstance(row["source"], str):
        facts.append(d.Item(d.phrase(row["source"]), title="source"))
    facts.append(d.Item(d.phrase(row["expected"] if isinstance(row["expected"], str) else NO_CLAIM), title="claim"))
    if case.startswith(REAL_MODELS):
        facts.append(d.Item(d.phrase("real models"), title="pack"))
    return d.Items(tuple(facts))


def _status_table(rows: List[Row]) -> d.Table:
    """Each environment's status per mode, with the stages that failed on its program and the outcome of each stage
    whose outcome is declared (its grid below says more)."""
    cell: Dict[Tuple[str, str], d.Phrase] = {}
    for row in rows:
        marks = md.marks(row)
        said: List[Any] = [d.Mark(row["status"], marks=marks)]
        if isinstance(row["error_type"], str):
            said += [" ", d.Code(row["error_type"])]
        said += [" · %s fails" % stage.label for stage in REPORTED if stage.mark in marks]
        said += [" · %s %s" % found[:2] for found in stage_outcomes.said(row)]
        if row["flaky"] is True:
            said.append(" (flaky: %s)" % row["statuses"])
        if row["status"] == Status.NOT_APPLICABLE and say.listed(row["missing"]):
            said += [" (lacks ", d.joined(d.phrase(d.Code(v)) for v in say.listed(row["missing"])), ")"]
        cell[(str(row["environment"]), str(row["mode"]))] = d.phrase(*said)
    modes, by_env = stage_grids.by_environment(cell, d.phrase(NO_RECORD))
    return say.table(["environment", *modes], ((d.phrase(env), *said) for env, said in by_env))


def _moves_table(moves: Sequence[Row]) -> d.Table:
    rows = tuple(
        (
            d.phrase(say.transition(m)),
            d.phrase(str(m["mode"]) + _bracketed(with_set(m))),
            d.phrase(str(m["variant"])),
            d.phrase(str(m["kind"])),
            d.phrase(say.clip(" ".join(str(m["detail"] or "").split()), 300)),
        )
        for m in moves
    )  # fmt: skip
    return d.Table(tuple(d.Column(c) for c in ("releases", "mode", "variant", "kind", "detail")), rows)


def _graph_diffs(
    case: str, rows: List[Row], kept: Optional[Mapping[Tuple[str, ...], Row]], shelf: diff_files.Shelf
) -> List[d.Block]:
    """Unified diffs of the graph between consecutive releases (among those with a graph) where it changed.

    A diff that several transitions share (both modes, or the same change again) is shown once, titled with
    every transition it applies to: its first lines, and a link to the whole, a file kept on ``shelf``. Where
    the records lack the texts of a pair of graphs, the diff an earlier report kept for those very two graphs
    (``kept``: ``graph_diffs.carried``) is shown, its title naming where it was kept.
    """
    found: List[Tuple[Place, List[str]]] = []
    # Rows come in release order; where a release ran under several Pythons the newest (last) stands for it.
    # A case run with several --with sets has a series per set: each compared with itself.
    series: Dict[Tuple[str, str, str], Dict[str, Row]] = {}
    for row in rows:
        if _has_text(row) or (kept and isinstance(row.get("graph_hash"), str)):
            series.setdefault((str(row["variant"]), with_set(row), str(row["mode"])), {})[str(row["release"])] = row
    variants = sorted({variant for variant, _, _ in series})
    for variant, requested, mode in sorted(series, key=lambda k: (k[0], k[1], _mode_index(k[2]))):
        rest = (", " + variant if len(variants) > 1 else "") + _bracketed(requested)
        chain = list(series[(variant, requested, mode)].values())
        for previous, row in zip(chain, chain[1:]):
            if previous["graph_hash"] != row["graph_hash"] and _comparable(previous, row):
                place = (str(previous["release"]), str(row["release"]), mode, rest)
                if _has_text(previous) and _has_text(row):
                    found.append((place, graph_diffs.diff_lines(previous["graph_text"], row["graph_text"])))
                else:
                    held = (kept or {}).get(_pair_key(previous, row))
                    if held is not None:
                        source = " (kept from %s)" % held["kept_from"]
                        found.append(((*place[:3], rest + source), str(held["diff"]).splitlines()))
    return [
        diff_block(case, title, lines, shelf) if lines else d.Paragraph(d.phrase(title, ": ", SAME_TEXT))
        for title, lines in distinct_diffs(found)
    ]


def diff_block(case: str, title: str, lines: List[str], shelf: diff_files.Shelf) -> d.Details:
    """A diff on a case's page, behind its title and counts: its first lines, then a link to the whole (a file of
    its own, which every page showing this diff links)."""
    where = shelf.put(case, lines)
    part = diff_files.excerpt(lines)
    label = "the whole diff" if part.cut else "the diff as a file"
    shown = d.CodeBlock("\n".join(part.shown + (("…",) if part.cut else ())), "diff")
    return d.Details("%s (%s)" % (title, part.counts()), (shown, d.Paragraph(d.phrase(d.link(label, d.file(where))))))


def _has_text(row: Row) -> bool:
    return isinstance(row.get("graph_text"), str) and bool(row["graph_text"])


def _pair_key(before: Row, after: Row) -> Tuple[str, ...]:
    """The key of a kept diff (graph_diffs.KEY) between two cells of a case."""
    named = dict(
        case=before["case"], mode=before["mode"], with_set=with_set(after), variant_before=before["variant"],
        before=before["release"], variant=after["variant"], after=after["release"],
        hash_before=before["graph_hash"], hash_after=after["graph_hash"],
    )  # fmt: skip
    return graph_diffs.key_of(named)


# Where a diff applies: (release before, release after, mode, the rest of its title: variant, --with set).
Place = Tuple[str, str, str, str]
SAME_TEXT = "No line of the two graph texts differs."


def distinct_diffs(found: Iterable[Tuple[Place, List[str]]]) -> List[Tuple[str, List[str]]]:
    """Each distinct diff once, in the order first found, with a title naming every transition it applies to."""
    groups: Dict[Tuple[str, ...], List[Place]] = {}
    for place, lines in found:
        groups.setdefault(tuple(lines), []).append(place)
    return [(transitions_title(places), list(lines)) for lines, places in groups.items()]


def transitions_title(places: Sequence[Place]) -> str:
    """``2.5.0 → 2.6.0, strict and non-strict; 2.6.0 → 2.7.0, strict``: the modes of one pair of releases joined."""
    modes: Dict[Tuple[str, str, str], List[str]] = {}
    for before, after, mode, rest in places:
        modes.setdefault((before, after, rest), []).append(mode)
    return "; ".join(
        "%s → %s, %s%s" % (before, after, " and ".join(named), rest) for (before, after, rest), named in modes.items()
    )


def _comparable(before: Row, after: Row) -> bool:
    """Whether two graphs were fingerprinted by the same scheme, so that their difference is the program's."""
    version = version_of(before.get("fingerprint_version"))
    return version is not None and version == version_of(after.get("fingerprint_version"))


def _mode_index(mode: str) -> int:
    return MODES.index(mode) if mode in MODES else len(MODES)


def _errors(rows: List[Row], order: Sequence[str]) -> List[d.Block]:
    """One collapsed block per distinct error (mode, --with set, status, class, first line), with the releases it
    shows in: the export's errors first, then the stages that failed on an exported program, each by mode.

    A stage that failed on an exported program (save/load, decomposition, aoti) is an error of its own, named
    after the stage, its own error shown. A failure that a known upstream issue labels names it, with its link.
    """
    # Keyed (0: an error, 1: a stage; the mode's place, mode, --with set, status, class, first line).
    groups: Dict[Tuple[int, int, str, str, str, str, str], List[Row]] = {}
    for row in rows:
        place = (_mode_index(str(row["mode"])), str(row["mode"]), with_set(row))
        if isinstance(row["error_type"], str) or row["status"] in (Status.CRASH.value, Status.TIMEOUT.value):
            key = (0, *place, str(row["status"]), say.plain(row["error_type"]), first_line(row["error_message"]))
            groups.setdefault(key, []).append(row)
        for label in failures.failed_stages(row):
            key = (1, *place, "%s fails" % label, "", first_line(failures.stage_line(row, label)))
            groups.setdefault(key, []).append(row)
    parts: List[d.Block] = []
    for (stage, _, mode, requested, status, kind, message), members in sorted(groups.items(), key=lambda g: g[0]):
        found = [failures.cell_issues(r).get(status[: -len(" fails")] if stage else failures.EXPORT) for r in members]
        issues = list({i.id: i for i in found if i is not None}.values())
        said = ": ".join(p for p in (kind, say.clip(message, 300)) if p)
        summary = "%s — %s%s%s" % (
            " · ".join(p for p in (mode, status, said) if p),
            md.release_spans([str(r["release"]) for r in members], order),
            _bracketed(requested),
            "".join(" · " + issue.words for issue in issues),
        )
        body: List[d.Block] = [
            d.Paragraph(d.phrase(d.link(i.words, d.url(i.link)) if i.link else i.words, ": ", i.summary))
            for i in issues
        ]
        if stage:
            body.append(d.CodeBlock(message, "text") if message else d.Paragraph(d.phrase("No error recorded.")))
        else:
            # The newest release that kept a traceback speaks for the group.
            newest = next((r for r in reversed(members) if say.plain(r["error_traceback"])), members[-1])
            whole = say.plain(newest["error_message"])
            shown: List[d.Block] = []
            for label, value in (
                ("the whole message (%s)" % newest["release"], whole if "\n" in whole.strip() else ""),
                ("traceback (%s)" % newest["release"], _tail(newest["error_traceback"])),
                (CHECK.name, say.plain(newest["check_detail"])),  # what the check stage found
                ("stderr", _tail(newest["stderr_tail"])),
            ):
                if value:
                    shown += [d.Paragraph(d.phrase(label + ":")), d.CodeBlock(value, "text")]
            body += shown or [d.Paragraph(d.phrase("No traceback recorded."))]
        parts.append(d.Details(summary, tuple(body)))
    return parts


def _tail(value: Any, lines: int = TRACEBACK_LINES) -> str:
    kept = say.plain(value).splitlines()
    if len(kept) > lines:
        return "\n".join(["… (%d lines above)" % (len(kept) - lines)] + kept[-lines:])
    return say.plain(value)


def _diagnoses(rows: List[Row]) -> Optional[d.Section]:
    """One table row per (release, mode, problem) that draft_export found for a failed export; None for none."""
    found = []
    for row in rows:
        problems = row.get("diagnosis")
        if not isinstance(problems, (list, tuple)):
            continue
        for problem in problems:
            if isinstance(problem, dict):
                found.append((
                    d.phrase(str(row["release"]) + _bracketed(with_set(row))),
                    d.phrase(str(row["mode"])),
                    d.phrase(str(problem.get("kind"))),
                    d.phrase(say.clip(" ".join(str(problem.get("message")).split()), 200)),
                    d.phrase(d.Code(str(problem["frame"])) if problem.get("frame") else None),
                    d.phrase(str(problem.get("count") or 1)),
                ))  # fmt: skip
    if not found:
        return None
    intro = (
        "Where export failed on a release that has torch.export.draft_export, the cell ran it too: it exports anyway"
        " and lists every problem it met, with the line of the case it points at."
    )
    table = say.table(("release", "mode", "problem", "message", "where", "times"), found)
    return d.Section("draft-export", "What draft_export found", (d.Paragraph(d.phrase(intro)), table))


def _source(case_file: Any, source: Optional[str]) -> d.Block:
    """The case's source, behind a click; or one line saying why it is not shown. The records name its file but keep
    no copy or hash of what ran, so the source shown is the file as it is where the report is built."""
    if not isinstance(case_file, str):
        return d.Paragraph(d.phrase("The records name no case file."))
    if source is None:
        missing = "the case file %s is not a file in the case folders this report was built with." % case_file
        return d.Paragraph(d.phrase("The source is not available: " + missing))
    as_it_is = "as it is where this report was built (the records keep no copy of the source that ran)"
    return d.Details("%s, %s" % (case_file, as_it_is), (d.CodeBlock(source, "python"),))


def with_set(row: Row) -> str:
    """The cell's ``--with`` set ("" for none, or for a record that predates it)."""
    return say.plain(row.get("with_set"))


def _bracketed(requested: str) -> str:
    return " [%s]" % requested if requested else ""


def _dependencies(rows: List[Row]) -> Optional[d.Section]:
    """What the case needs besides torch, and which version of each named package ran in each environment.

    None for a case of torch alone. Versions come from the environment record of the run that
    recorded the cell; ``–`` where none is known (the set did not install there).
    """
    if not any(packages.requirements(row.get("dependency_set")) for row in rows):
        return None
    own = next((packages.declared(r.get("dependency_set"), with_set(r)) for r in rows if r.get("dependency_set")), ())
    requested = list(dict.fromkeys(with_set(row) for row in rows if with_set(row)))
    declared = d.joined(d.phrase(d.Code(r)) for r in own) or d.phrase("nothing")
    facts = [d.Item(declared, title="declared by the case (PEP 723)")]
    if requested:
        facts.append(d.Item(d.joined((d.phrase(d.Code(r)) for r in requested), "; "), title="added with --with"))
    environments: Dict[str, Row] = {}
    for row in rows:
        env = str(row["environment"])
        # Both modes of an environment usually share one run; one that knows its versions speaks for it.
        if env not in environments or (environments[env].get("added_packages") is None and row.get("added_packages")):
            environments[env] = row
    names = list(dict.fromkeys(name for row in environments.values() for name in packages.names(row["dependency_set"])))
    table = []
    everything = []
    for env, row in environments.items():
        versions = packages.resolved(row.get("added_packages"))
        named = packages.names(row["dependency_set"])  # a package of another --with set is blank here
        table.append(
            tuple([d.phrase(env)] + [d.phrase(versions.get(name, "–") if name in named else None) for name in names])
        )
        if versions:
            listed = ", ".join("%s %s" % (name, version) for name, version in sorted(versions.items()))
            everything.append((d.phrase(env), d.phrase(listed)))
    blocks: List[d.Block] = [
        d.Items(tuple(facts)),
        d.Paragraph(d.phrase(
            "The version of each package the set names that ran in each environment (–: not known, e.g. the set did"
            " not install there):"
        )),
        say.table(["environment", *names], table),
    ]  # fmt: skip
    if everything:
        added = say.table(["environment", "packages"], everything)
        blocks.append(d.Details("every package each environment added to torch", (added,)))
    return d.Section("dependencies", "Dependencies", tuple(blocks))

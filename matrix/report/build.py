"""The ``report`` command: tables (Parquet), Markdown pages and charts from record folders.

``export-matrix report RECORD_DIR ... --out reports/NAME [--baseline DIR] [--title T]``
writes ``index.md``, the pages it links for the detail (one per release transition, the
status grid, failures, ...), one page per case under ``cases/`` with a standalone repro script
beside it per distinct failure (:mod:`.repro`), charts under ``charts/`` and the tables as
Parquet. The output depends only on the records (and the case files still on disk): building
twice gives byte-identical files.

Record fields are data, never paths: a case's page is named from an escaped form of its
name, and its source is shown only from a file inside the case folders (the project's
``cases/`` and any ``--case-root``). The report writes only inside ``--out``, lists what
it wrote in ``.export-matrix-report.json`` there, and on the next build removes only
files of that list it did not write again: files it did not write are left untouched.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import os
import sys
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Set, Tuple

import pandas as pd

from matrix import parallel
from matrix.contract import stages
from matrix.contract.errors import UserError
from matrix.contract.options import FAIL_ON, from_namespace
from matrix.records import baseline as since
from matrix.records import (
    candidate,
    graph_diffs,
    model,
    other_runs,
    published,
    store,
    tables,
    transitions,
)
from matrix.records import devices as by_device
from matrix.records import figures as headline
from matrix.report import artifacts as report_artifacts
from matrix.report import case_page as report_case
from matrix.report import (
    chart_keys,
    citation,
    devices_page,
    diff_files,
    document,
    files,
    glossary,
    kept_baseline,
    publish,
    stamp,
    transition_page,
)
from matrix.report import charts as charting
from matrix.report import index as report_index
from matrix.report import pages as report_pages
from matrix.report import repro as report_repro
from matrix.report import site as report_site
from matrix.report import verdicts as report_verdicts
from matrix.report.findings import Source
from matrix.report.site import front as site_front
from matrix.report.site import upgrade as site_upgrade

DEFAULT_TITLE = "torch.export compatibility matrix"
# Warnings printed on the terminal; all of them are listed in index.md.
SHOWN_WARNINGS = 20
# Reports with at least this many cells draw their status heatmaps in a side process.
SIDE_PROCESS_FROM_CELLS = 1000


class ReportError(UserError):
    """Records that cannot make a report; the message names the folders."""


@dataclass(frozen=True)
class Report:
    """What a build wrote."""

    out: str
    index: str  # path of index.md
    pages: int  # case pages
    cells: int
    regressions: int  # transitions of every kind in transitions.REGRESSIONS, as the front page counts them
    fixes: int  # transitions of every kind in transitions.FIXES
    warnings: Tuple[str, ...]
    wrong_results: int = 0  # of the regressions, exports that failed and now give wrong numbers
    failing: int = 0  # cells that fail (mismatch, fail, crash, timeout)
    candidates: Tuple[candidate.Verdict, ...] = ()  # each nightly or release candidate against the newest release


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "records", nargs="+", metavar="RECORD_DIR", help="record folders (or .jsonl files) to report on"
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="report folder to write, e.g. reports/nightly")
    parser.add_argument(
        "--baseline",
        metavar="DIR",
        help="an earlier report folder: add a section on what changed since then (default: the baseline kept in"
        " the baseline/ folder of a report given as the only RECORD_DIR)",
    )
    parser.add_argument("--title", help="the report's title (default: %r)" % DEFAULT_TITLE)
    parser.add_argument(
        "--stages-from",
        action="append",
        metavar="DIR",
        help="a record folder or published report of another run whose opt-in stages' outcomes (%s) join the"
        " matching cells of this report, and whose packages and compiles join its own; its other cells and its saved"
        " programs are left out (repeat for several)" % ", ".join(stages.OPT_IN),
    )
    parser.add_argument("--no-charts", action="store_true", help="skip the matplotlib charts")
    parser.add_argument(
        "--csv",
        action="store_true",
        help="also write each table as gzipped CSV for the site to offer (site/tables/), as publishing to the"
        " reports branch or GitHub Pages does; the report committed in the project offers the Parquet alone",
    )
    parser.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="never",
        help="after writing, exit 1 when a candidate (a nightly or release candidate) regresses against the newest"
        " release (regression), when any cell fails (failing), or never (default): for CI",
    )
    parser.add_argument(
        "--case-root",
        action="append",
        metavar="DIR",
        help="a folder of case files whose sources the case pages may show, besides the project's cases/"
        " (repeat for several)",
    )


@dataclass(frozen=True)
class ReportOptions:
    """The options of ``export-matrix report``."""

    records: Tuple[str, ...]
    out: str
    baseline: Optional[str] = None
    title: Optional[str] = None
    no_charts: bool = False
    csv: bool = False
    stages_from: Tuple[str, ...] = ()
    case_root: Tuple[str, ...] = ()
    fail_on: str = "never"  # FAIL_ON

    @classmethod
    def from_args(cls, namespace: argparse.Namespace) -> ReportOptions:
        return from_namespace(
            cls,
            namespace,
            records=tuple(namespace.records),
            case_root=tuple(namespace.case_root or ()),
            stages_from=tuple(namespace.stages_from or ()),
        )


OPTIONS = ReportOptions


def main(options: ReportOptions) -> int:
    report = build_report(
        options.records,
        options.out,
        baseline=options.baseline,
        title=options.title,
        charts=not options.no_charts,
        csv=options.csv,
        case_roots=options.case_root,
        stages_from=options.stages_from,
        notify=lambda line: print(line, file=sys.stderr, flush=True),
    )
    for warning in report.warnings[:SHOWN_WARNINGS]:
        print("warning: %s" % warning, file=sys.stderr)
    if len(report.warnings) > SHOWN_WARNINGS:
        more = len(report.warnings) - SHOWN_WARNINGS
        print("warning: … and %d more (listed in %s)" % (more, report.index), file=sys.stderr)
    print("wrote %s: %s" % (report.index, counts(report)))
    why = candidate.should_fail(options.fail_on, report.failing, report.candidates)
    if why is not None:
        print("--fail-on %s: %s" % (options.fail_on, why), file=sys.stderr)
        return 1
    return 0


def counts(report: Report) -> str:
    """What a build found, in one line: ``12 cells, 6 case pages, 3 regressions (1 now wrong numbers), 2 fixes``."""
    wrong = " (%d now wrong numbers)" % report.wrong_results if report.wrong_results else ""
    regressions = document.plural(report.regressions, "regression")
    fixes = document.plural(report.fixes, "fix", "fixes")
    return "%d cells, %d case pages, %s%s, %s" % (report.cells, report.pages, regressions, wrong, fixes)


def build_report(
    record_dirs: Sequence[str],
    out: str,
    baseline: Optional[str] = None,
    title: Optional[str] = None,
    charts: bool = True,
    case_roots: Sequence[str] = (),
    notify: Optional[Callable[[str], None]] = None,
    stages_from: Sequence[str] = (),
    csv: bool = False,
    made: Optional[stamp.Stamp] = None,
) -> Report:
    """Load the records, compute the tables and write the report folder ``out``.

    Case pages show sources from the project's ``cases/`` folder and from ``case_roots``. ``notify`` is
    told, before anything is written, of each build the report leaves out of its transitions and verdicts.
    ``stages_from``: folders of other runs whose opt-in stages and follow-up products join the records'
    (:func:`joined_runs`). ``csv``: the site offers each table as gzipped CSV too. ``made``: the stamp the report
    carries (default: this build's); a site built beside a committed report carries that report's.
    """
    tell = notify or (lambda line: None)
    if baseline is None:
        baseline = kept_baseline.stored(record_dirs)
        if baseline is not None:
            tell("compared with the baseline kept in %s (%s)" % (baseline, kept_baseline.name_of(baseline)))
    loaded, joined = joined_runs(store.load(list(record_dirs)), stages_from)
    if loaded.cells.empty and loaded.env_errors.empty:
        raise ReportError("%s: no cell or env-error records to report on" % ", ".join(record_dirs))
    # A report among the records keeps the runs it joined: a re-render from its folder still cites them.
    sources = tuple(dict.fromkeys(stamp.sources(record_dirs) + joined))
    roots = report_case.default_roots() + tuple(case_roots)
    # The loaded records are millions of long-lived objects without cycles: set them aside so
    # that the collector does not walk them again at each collection while the report is built.
    gc.freeze()
    try:
        # Read before writing anything: the baseline may be the folder about to be rewritten.
        base = since.read_baseline(baseline) if baseline is not None else None
        base_figures = headline.read(baseline, base[1]) if baseline is not None and base is not None else None
        kept_base = kept_baseline.read(baseline) if baseline is not None else None
        # The graph diffs of the report about to be written over, and those of every report among the records and
        # it: what a graph change whose texts are missing is shown with.
        previous = graph_diffs.read(out) if published.is_report(out) else None
        kept = [graph_diffs.read(folder) for folder in record_dirs if published.is_report(folder)]
        # Judged once; the Markdown pages, the site, the charts and the tables render this model.
        judged = model.build(
            loaded,
            base,
            baseline_name=kept_base.name if kept_base is not None else None,
            known_releases=report_verdicts.known_releases(),
            kept_diffs=[k for k in (*kept, previous) if k is not None],
            base_figures=base_figures,
        )
        if previous is not None:
            refuse_lost_diffs(out, previous, judged)
        findings = report_index.Findings.of(
            judged, title=title or DEFAULT_TITLE, stamp=made or stamp.current(), sources=sources
        )
        for found in judged.incomplete:
            lacks = "; ".join("the %s set (%s)" % (m.dependency_set, m.error_type) for m in found.missing)
            tell("incomplete build %s %s: lacks %s; left out of transitions and verdicts" % (
                found.release, found.variant, lacks))  # fmt: skip
        cells, labels, moves = judged.cells, judged.labels, judged.moves
        os.makedirs(out, exist_ok=True)
        listed = files.previous(out)
        written: Set[str] = set()
        shelf = diff_files.Shelf()  # the graph diffs the pages link, each written once
        # A chart group whose input tables did not change since the last build is not drawn again: its files stay,
        # and a re-render of the same records skips matplotlib.
        planned = chart_keys.plan(cells, labels, findings.summary, findings.steps) if charts and not cells.empty else {}
        keys = {name: chart_keys.chart_key(name, *inputs) for name, (_, inputs) in planned.items()}
        drawn = chart_keys.reusable(out, keys) if planned else {}  # without charts, the folder's charts/ is not read
        if len(drawn) < len(planned):
            charting.prepare()  # import matplotlib once, before a side process forks
        # A large report draws its status heatmaps, the slowest charts, in a side process while this one draws the
        # other charts and writes the tables and the case pages. (Drawing the other charts in a second side process
        # measured no faster on two cores.)
        aside = "grid" in planned and "grid" not in drawn and len(cells) >= SIDE_PROCESS_FROM_CELLS
        with parallel.pool(1 if aside else 0) as side:
            here = parallel.Pool(None)
            waiting = {
                name: (side if name == "grid" else here).submit(draw, *inputs, out)
                for name, (draw, inputs) in planned.items()
                if name not in drawn
            }
            written |= _write_tables(out, findings)
            case_pages = _case_pages(judged, roots, shelf)
            written |= report_repro.write(out, judged.repros, roots)
            drawn.update((name, wait()) for name, wait in waiting.items())
        if planned:
            findings = dataclasses.replace(findings, charts=drawn)
            written |= {path for group in drawn.values() for chart in group for path in chart.files}
            written.add(chart_keys.write_keys(out, {name: (keys[name], drawn[name]) for name in planned}))
        # The headline figures, for a later report's comparison with this one (figures.read).
        files.write_text(out, headline.FILE, headline.dumps(judged.figures))
        written.add(headline.FILE)
        if kept_base is not None:
            written |= kept_baseline.write(out, kept_base, base_figures)
        saved = report_artifacts.write(out, judged.uses, charts=charts)
        written |= saved.files
        if saved.files:
            findings = dataclasses.replace(findings, artifacts=saved)
        # The site offers the tables a reader downloads; texts.parquet is there for rebuilding the report, not
        # reading. The kept baseline's tables are an earlier report's, there for a rebuild's comparison.
        tables_offered = [
            p
            for p in written
            if p.endswith(".parquet")
            and p not in (published.TEXTS, graph_diffs.TABLE)
            and not p.startswith(kept_baseline.FOLDER + "/")
        ]
        written |= report_site.write(out, findings, tables_offered, csv=csv)
        # After the site's own files: its write removes the site's files of the last build that it did not write.
        written |= _write_documents(out, findings, case_pages, shelf, tables_offered, csv)
        written |= stamp.write(out, findings.stamp, findings.sources)
        written |= shelf.write(out)
        files.remove_stale(out, listed, written)
        files.write_manifest(out, written)
    finally:
        gc.unfreeze()
    return Report(
        out=out,
        index=os.path.join(out, "index.md"),
        pages=len(case_pages),
        cells=len(cells),
        regressions=int(moves["kind"].isin(transitions.REGRESSIONS).sum()) if not moves.empty else 0,
        fixes=int(moves["kind"].isin(transitions.FIXES).sum()) if not moves.empty else 0,
        warnings=loaded.warnings,
        wrong_results=int((moves["kind"] == "wrong-result").sum()) if not moves.empty else 0,
        failing=candidate.failing(cells),
        candidates=judged.candidates,
    )


def refuse_lost_diffs(out: str, previous: pd.DataFrame, judged: model.Model) -> None:
    """Stop before writing when a graph change the new report shows had a diff in the report at ``out`` and has
    none now: a rebuild never drops evidence without being told to."""
    gone = graph_diffs.lost(previous, judged.moves, judged.graph_diffs)
    if gone:
        shown = "; ".join(graph_diffs.describe(key) for key in gone[:3])
        raise ReportError(
            "%s showed the graph diff of %d graph change%s that this build shows without one (%s%s): their graph"
            " texts are missing from the records. Add the records that hold them, or remove %s to publish without"
            " them"
            % (out, len(gone), "" if len(gone) == 1 else "s", shown, "; …" if len(gone) > 3 else "",
               os.path.join(out, graph_diffs.TABLE))
        )  # fmt: skip


def joined_runs(loaded: store.Store, folders: Sequence[str]) -> Tuple[store.Store, Tuple[Source, ...]]:
    """``loaded`` with each folder's opt-in stages' outcomes and follow-up products joined (:func:`other_runs.join`),
    and each folder's run as the report cites it; a warning for each folder's cells that match no cell."""
    sources = []
    for folder in folders:
        other = store.load([folder])
        joined = other_runs.join(loaded, other)
        loaded = joined.store
        if joined.unmatched:
            warning = "%s: %d cell(s) with an opt-in stage's outcome match no cell of the report; left out" % (
                folder, joined.unmatched)  # fmt: skip
            loaded = dataclasses.replace(loaded, warnings=loaded.warnings + (warning,))
        runs = other.environments["run_id"].nunique() if "run_id" in other.environments else 0
        found = stamp.read(folder) or stamp.of_runs(other.environments.get("tool_commit", [""]))
        shows, dates = joined.stages + joined.products, citation.dates(other.environments)
        if shows:  # a run that gave the report nothing (its outcomes are there already) is not cited
            sources.append(Source(found, shows, runs, dates, *other_runs.ran(other, loaded.cells)))
    return loaded, tuple(sources)


def _case_pages(judged: model.Model, roots: Sequence[str], shelf: diff_files.Shelf) -> List[document.Page]:
    """One page per case, with its repros, the graph diffs earlier reports kept (``graph_diffs.carried``), its other
    devices and each product's grids. ``shelf`` keeps the diff files the pages link."""
    kept = graph_diffs.carried(judged.graph_diffs)
    failures = report_case.by_case(judged.repros, lambda failure: failure.case)
    moves = report_case.by_case(judged.moves.to_dict("records"))
    cells = report_case.by_case(judged.cells.assign(environment=judged.labels).to_dict("records"))
    return [
        report_case.build(
            case, rows, moves.get(case, []), roots, failures.get(case, []), kept, shelf,
            by_device.of_case(case, judged.devices, judged.elsewhere),
            tuple((u.product, u.of_case(case), u.orders) for u in judged.uses),
        )
        for case, rows in sorted(cells.items())
    ]  # fmt: skip


def _write_documents(
    out: str,
    f: report_index.Findings,
    case_pages: List[document.Page],
    shelf: Optional[diff_files.Shelf],
    tables_offered: Sequence[str],
    csv: bool,
) -> Set[str]:
    """Every page built as a document, written in both forms in one go, so that each links the others in its own
    form: the front page, the glossary, the devices page, one page per release transition, the detail pages and the
    case pages; the site's widgets drawn into them."""
    documents = [report_index.page(f, tables_offered), glossary.page()]
    documents += [devices_page.page(f.devices)] if f.devices else []
    documents += [transition_page.build(step, shelf) for step in f.steps] + report_pages.build(f) + case_pages
    if f.artifacts is not None:
        documents.append(report_artifacts.page(f.uses, f.artifacts.charts, f.known_issues))
    front = site_front.widgets(f, tables_offered, csv)
    widgets = {report_index.NAME: front, "upgrade": site_upgrade.widget(f.upgrades)}
    widgets.update({p.name: {report_case.TIPS: report_site.TIPS_WIDGET} for p in case_pages})
    return publish.write(out, documents, widgets)


def _write_tables(out: str, f: report_index.Findings) -> Set[str]:
    """The tables as Parquet, without the bulky texts (those are on the case pages)."""
    # Every device's cells: those of the main device, then the others (devices.split) they are compared with.
    every = f.cells if f.elsewhere.empty else pd.concat([f.cells, f.elsewhere], ignore_index=True)
    envs = f.environments
    if "capabilities" in envs.columns:
        as_json = [json.dumps(v, sort_keys=True) if isinstance(v, dict) else None for v in envs["capabilities"]]
        envs = envs.assign(capabilities=as_json)
    frames = {
        "cells.parquet": tables.parquet_frame(every),
        "transitions.parquet": tables.storable(f.moves.drop(columns=list(graph_diffs.MOVE_COLUMNS), errors="ignore")),
        "summary.parquet": tables.storable(f.summary),
        "status.parquet": tables.storable(tables.pivot(f.cells).reset_index()),
        "modes.parquet": tables.storable(f.disagreements),
        "claims.parquet": tables.storable(f.claims),
        "environments.parquet": tables.storable(envs),
        "env_errors.parquet": tables.storable(f.env_errors),
        # The texts left out of cells.parquet, so that a report can be rebuilt from its tables alone.
        published.TEXTS: published.texts_frame(every),
        # Each graph change's diff, so that a rebuild whose texts are missing still shows it.
        graph_diffs.TABLE: f.graph_diffs,
    }
    for name, frame in frames.items():
        files.write_parquet(out, name, frame)
    return set(frames)

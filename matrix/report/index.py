"""The report's front page, built once as a document (``index.md`` and ``site/index.html``), read top-down by
whoever decides on a release.

Title, the citation line and a link to the glossary; the verdicts (:mod:`matrix.report.verdicts`: what is still
broken, what broke in the newest release, what is expected to work and does, the saved-program epochs, the sample's
confounds); the run (:mod:`matrix.report.citation`: what ran where, the runs it shows, how to cite it and run it
again); a summary (pass rate per release, counts of what changed); every regression; the real models; the most common
failure signatures; strict vs non-strict in brief; one line per release transition, linking the page that holds its
detail; the saved programs; the cases and the tables; links to the other pages; what changed since the previous
report. The detail lives on those pages, so that the front page stays short however many cases and releases the
matrix has. What only the site has (the filtered grid, the table of changes with its filters, the downloads, the
badge) are widgets (:mod:`matrix.report.site.front`), which the Markdown form leaves out.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any, Dict, List, Optional, Sequence, Tuple

import pandas as pd

from matrix.contract.products import PROGRAM
from matrix.contract.schema import MODES, Status
from matrix.contract.stages import REPORTED
from matrix.records import timings, transitions
from matrix.records.model import PassRate, environment_key
from matrix.report import artifacts as report_artifacts
from matrix.report import baseline as report_baseline
from matrix.report import (
    builds_page,
    candidate_page,
    citation,
    devices_page,
    glossary,
    known_issues,
    pages,
    real_models,
    transition_page,
)
from matrix.report import document as d
from matrix.report import markdown as md
from matrix.report import phrases as say
from matrix.report import upgrade as report_upgrade
from matrix.report import verdicts as report_verdicts
from matrix.report.findings import Findings

__all__ = ["Findings", "page"]

NAME = "index"
# The failure signatures shown on the front page; all of them are on pages.FAILURES.
TOP_SIGNATURES = 10
# The load regressions named on the front page; all of them are on the artifacts page.
SHOWN_LOAD_REGRESSIONS = 10
# The programs an op drift is counted for (transitions.OP_STAGES), as the front page names them.
OP_PROGRAMS = (("exported", "the exported program"), ("decomposed", "the decomposed one"))
# The site's widgets on the front page, by name (matrix.report.site.front draws them).
BADGE, GRID, DOWNLOADS, SCRIPTS = "badge", "grid", "downloads", "scripts"
FAILING = "failing"  # a link to the grid filtered to the newest release's failing cells
# The sections the site opens on a click, so that its front page reads in a few screens (the grid, the verdicts and
# the table of changes open); a link to one still lands on its heading. The Markdown shows them whole.
COLLAPSED = {
    "the-run", "summary", "environments-that-failed-to-install", "regressions", "top-failure-signatures",
    "strict-vs-non-strict", "saved-programs-across-releases", "tables",
    "since-the-previous-report",
}  # fmt: skip


def page(f: Findings, tables_offered: Sequence[str] = ()) -> d.Page:
    """The front page; ``tables_offered``: the Parquet tables the report wrote for a reader to download."""
    newest, passed, total = f.newest_pass_rate
    first = [candidate_page.line(v) for v in f.candidates]
    if newest:
        rate = md.percent(passed / total if total else None)
        said = d.phrase("%s of the cells that ran torch.export pass (%d of %d, every mode; " % (rate, passed, total),
                        d.link("per build", d.here("summary")), ").")  # fmt: skip
        first.append(d.Item(said, "Newest release, %s" % newest))
    more = [builds_page.incomplete_line(f.incomplete)]
    more += report_artifacts.verdict(f.promises)
    more += [_upgrade(f), devices_page.line(f.devices)]
    verdicts = report_verdicts.section(
        f.verdicts, first, [i for i in more if i is not None], [known_issues.verdict(s) for s in f.known_issues],
        [i for i in [builds_page.line(f.builds)] if i is not None],
    )  # fmt: skip
    newest_changes, every_change = transition_page.sections(
        f.steps, f.verdicts.regressions.newest if f.verdicts is not None else (),
        [*pages.images(f, "transitions"), *pages.images(f, "export-time")],
    )  # fmt: skip
    words = d.phrase("What the words mean (cell, build, release, regression, op drift, epoch, …): ",
                     d.link("glossary", d.page(glossary.NAME)), ".")  # fmt: skip
    blocks: List[Any] = [
        d.Widget(BADGE),
        d.Paragraph(words),
        d.Paragraph(d.phrase(citation.line(f.stamp, f.environments))),
        verdicts,
        d.Widget(FAILING),
        *pages.images(f, "overview"),  # below the verdicts: the whole status grid at a glance
        _cases(f),
        newest_changes,
        citation.section(f),
        _summary(f),
        _env_errors(f),
        real_models.section(f),
        _signatures(f),
        _modes(f),
        every_change,
        _saved_programs(f),
        _tables(tables_offered),
        _more(f),
        report_baseline.section(f.baseline, f.baseline_name, f.figures_since) if f.baseline is not None else None,
        d.Widget(SCRIPTS),
    ]
    lead = d.phrase("%s; %s." % (md.cells_counted(f.scope), md.releases_and_builds(f.scope)))
    shown = (dataclasses.replace(b, collapsed=True) if isinstance(b, d.Section) and b.id in COLLAPSED else b
             for b in blocks if b is not None)  # fmt: skip
    return d.Page(NAME, f.title, tuple(shown), lead=lead)


def _upgrade(f: Findings) -> Optional[d.Item]:
    """The upgrade answer for the newest pair of builds: its tallies, linking the upgrade page."""
    found = report_upgrade.newest(f.upgrades)
    if found is None or not found.cases:
        return None
    broken = sum(1 for c in found.cases if c.breaks)
    said = "the upgrade breaks %s of %d; %s%s (" % (
        d.plural(broken, "case"), len(found.cases), "; ".join(report_upgrade.tallies_words(found)[1:]),
        report_upgrade.apart_words(found, f.upgrade_agreement),
    )  # fmt: skip
    page_of = d.page(report_upgrade.NAME)
    return d.Item(d.phrase(said, d.link("per case", page_of), ")."), "Upgrading %s → %s" % (found.before, found.after))


def _count(f: Findings, *kinds: str) -> int:
    return int(f.moves["kind"].isin(kinds).sum()) if not f.moves.empty else 0


def _summary(f: Findings) -> d.Section:
    stage = f.stage_failures
    per_stage = ["%d %s (%s)" % (int((stage["stage"] == s.name).sum()) if not stage.empty else 0, s.label, s.mark)
                 for s in REPORTED]  # fmt: skip
    changed = d.phrase(
        "Between consecutive releases: ", d.Strong(d.phrase(say.count(_count(f, *transitions.REGRESSIONS),
        "regression"))), " (%s, " % d.plural(_count(f, "regression"), "status regression"),
        d.Strong(d.phrase("%d now wrong numbers" % _count(f, "wrong-result"))),
        ": an export that failed now gives other numbers than eager, %s), %s (%s, %s), %s, %s; %s (" % (
            d.plural(_count(f, "stage-regression"), "stage regression"),
            d.plural(_count(f, *transitions.FIXES), "fix", "fixes"),
            d.plural(_count(f, "fix"), "status fix", "status fixes"),
            d.plural(_count(f, "stage-fix"), "stage fix", "stage fixes"),
            d.plural(_count(f, "graph-change"), "graph change"),
            _op_drifts(f), _timing_counts(f)),
    )  # fmt: skip
    items = [
        d.Item(d.phrase(changed, d.link("per transition", d.here("changes")), ").")),
        d.Item(d.phrase("Passing cells whose program then fails a stage: %s; marked in the " % ", ".join(per_stage),
                        d.link("status grid", d.page(pages.GRID)), ".")),
        d.Item(d.phrase(
            "%s; %s; %s contradicting the documented claim (for an ExportDB case, that release's own ExportDB where it"
            " has the example, else the case's " % (_disagree(f), _flakiness(f), d.plural(len(f.claims), "cell")),
            d.Code("expected"), ").")),
    ]  # fmt: skip
    if f.artifacts is not None:
        items.append(d.Item(d.phrase(
            "Saved programs: %s, affecting %s (" % (d.plural(f.artifacts.regressions, "load regression"),
                                                    d.plural(f.artifacts.affected, "program")),
            d.link("saved programs across releases", d.here("saved-programs-across-releases")), ").")))  # fmt: skip
    rule = (
        "Pass rate = pass / applicable cells (%s and %s left out); a pass counts whether or not its program saves,"
        " loads and decomposes." % (Status.NOT_APPLICABLE, Status.CASE_ERROR)
    )
    blocks: Tuple[d.Block, ...] = (d.Items(tuple(items)), d.Paragraph(d.phrase(rule)), _pass_rates(f))
    blocks += tuple(pages.images(f, "summary"))
    return d.Section("summary", "Summary", blocks)


def _op_drifts(f: Findings) -> str:
    """The op drifts, per program they were counted for: ``7 op drifts (5 in the exported program, 2 in …)``."""
    total = d.plural(_count(f, "op-drift"), "op drift", "op drifts")
    if f.moves.empty or not _count(f, "op-drift"):
        return total
    drifts = f.moves[f.moves["kind"] == "op-drift"]
    per_program = ["%d in %s" % (int((drifts["stage"] == stage).sum()), name) for stage, name in OP_PROGRAMS]
    changed = len(drifts.drop_duplicates(["case", "mode", "variant", "with_set", "before", "after"]))
    return "%s (%s; %s)" % (total, ", ".join(per_program), d.plural(changed, "cell changed", "cells changed"))


def _timing_counts(f: Findings) -> str:
    """The slowdowns and speedups, or why none can be claimed: ``slowdowns and speedups not assessed: 1 run each``."""
    missing = transition_page.not_timed(f.steps)
    if missing is not None:
        return "slowdowns and speedups %s" % missing
    counts = "%s, %s" % (d.plural(_count(f, "slowdown"), "slowdown"), d.plural(_count(f, "speedup"), "speedup"))
    timed = sum(len(step.timed) for step in f.steps)
    exported = sum(len(step.exported) for step in f.steps)
    if timed == exported:
        return counts
    return "%s (timed on %d of the %d cells exported in both releases)" % (counts, timed, exported)


def _flakiness(f: Findings) -> str:
    """The flaky cells, or why none can be found: ``flakiness not assessed: 1 run each``."""
    runs = f.cells["runs"] if "runs" in f.cells.columns else pd.Series(dtype=object)
    fewest, most = timings.repeats(runs)
    if most < 2:
        return "flakiness not assessed: %s" % transition_page.runs_phrase(fewest, most)
    flaky = d.plural(len(f.flaky), "flaky cell")
    if fewest >= 2:
        return flaky
    repeated = sum(1 for value in runs if timings.repeats([value])[0] >= 2)
    return "%s (of %d cells run more than once)" % (flaky, repeated)


def _pass_rates(f: Findings) -> d.Table:
    """One row per environment: its cells, the pass rate per mode (:mod:`matrix.records.model`'s), its passes
    with a failing stage."""
    modes = [m for m in MODES if m in {r.mode for r in f.pass_rates}]
    failed = f.stage_failures.to_dict("records")
    failing: Counter[Tuple[str, ...]] = Counter((*environment_key(row), str(row["stage"])) for row in failed)
    by_env: Dict[Tuple[str, ...], List[PassRate]] = {}
    for found in f.pass_rates:
        by_env.setdefault(found.environment, []).append(found)
    rows = []
    for env, group in by_env.items():
        rate = {r.mode: r.rate for r in group}
        said = [group[0].label, str(sum(r.cells for r in group))] + [md.percent(rate.get(m)) for m in modes]
        said += [str(failing[(*env, stage.name)]) for stage in REPORTED]
        rows.append([d.phrase(x) for x in said])
    headers = ["release", "cells"] + ["%s pass rate" % m for m in modes] + ["%s fails" % s.label for s in REPORTED]
    return say.table(headers, rows, "l" + "r" * (1 + len(modes) + len(REPORTED)))


def _env_errors(f: Findings) -> Optional[d.Section]:
    """The environments that failed to install, named; each with its error and the installer's output on its page."""
    if f.env_errors.empty:
        return None
    names = sorted({"%s %s py%s (%s)" % (r.get("torch_version"), r.get("variant"), r.get("python"),
                                         r.get("dependency_set") or "torch alone")
                    for r in f.env_errors.to_dict("records")})  # fmt: skip
    said = d.phrase("%s: %s; each with its error and what the installer said on the " % (
        d.plural(len(names), "environment"), ", ".join(names)),
        d.link("install errors page", d.page(pages.INSTALL_ERRORS)), ".")  # fmt: skip
    return d.Section("environments-that-failed-to-install", "Environments that failed to install", (d.Paragraph(said),))


def _signatures(f: Findings) -> d.Section:
    title = "Top failure signatures"
    if f.signatures.empty:
        return d.Section("top-failure-signatures", title, (d.Paragraph(d.phrase("None.")),))
    intro = d.phrase(
        "Failing cells (mismatch, fail, crash, timeout) grouped by error class and the first line of the message;"
        " the %d most common of %d (" % (min(TOP_SIGNATURES, len(f.signatures)), len(f.signatures)),
        d.link("all of them", d.page(pages.FAILURES)), ").",
    )  # fmt: skip
    return d.Section("top-failure-signatures", title, (d.Paragraph(intro), pages.signature_table(f, TOP_SIGNATURES)))


def _not_run(f: Findings) -> str:
    """``strict mode was not run`` where a mode has no cell, else ""."""
    unrun = [m for m in MODES if m not in f.verdicts.modes]
    return "%s mode was not run" % " and ".join(unrun) if unrun and f.verdicts.modes else ""


def _disagree(f: Findings) -> str:
    if _not_run(f):
        return "strict and non-strict not compared: %s" % _not_run(f)
    return "%s where strict and non-strict disagree" % d.plural(len(f.disagreements), "cell")


def _modes(f: Findings) -> d.Section:
    """Where the two modes disagree, and where the default of ``export(strict=...)`` changes; the counts per build
    are on the strict vs non-strict page (:func:`matrix.report.pages.modes`)."""
    title = "Strict vs non-strict"
    if _not_run(f):
        return d.Section("strict-vs-non-strict", title, (d.Paragraph(d.phrase("Not compared: %s." % _not_run(f))),))
    intro = d.phrase(
        "%s where strict and non-strict end differently (of the cases run in both modes, both applicable): counted per"
        " build, and each case, on the " % d.plural(len(f.disagreements), "cell"),
        d.link("strict vs non-strict page", d.page(pages.MODES_PAGE)), ".",
    )  # fmt: skip
    flip = report_verdicts.strict_note(f.verdicts)
    return d.Section("strict-vs-non-strict", title, (d.Paragraph(intro),) + ((d.Paragraph(flip),) if flip else ()))


def _saved_programs(f: Findings) -> Optional[d.Section]:
    """Programs saved on one release and loaded on another: the epochs, the load regressions, the heatmaps."""
    if f.artifacts is None:
        return None
    # The epochs stand for the per-release prose of the artifacts page, which keeps it.
    blocks: List[d.Block] = list(report_verdicts.epochs_section(f.verdicts))
    blocks += _load_regressions(f.artifacts)
    blocks += [d.Image(d.file(chart.path), chart.title) for chart in f.artifacts.charts]
    blocks.append(d.Paragraph(d.phrase("Every saved × loaded pair, per case and mode, with its error: ",
                                       d.link("saved programs", d.page(report_artifacts.NAME)), ".")))  # fmt: skip
    return d.Section("saved-programs-across-releases", "Saved programs across releases", tuple(blocks))


def _load_regressions(saved: report_artifacts.Written) -> List[d.Block]:
    """The load regressions, one line each: counted once per (saving release, loading release) pair."""
    rows = saved.load_regressions
    if not rows:
        said = "No load regression: no loading release does worse with any saved program than the release before it."
        return [d.Paragraph(d.phrase(said))]
    head = d.phrase(
        d.Strong(d.phrase(d.plural(saved.regressions, "load regression"))),
        ", affecting %s: a loading release that does worse with the programs saved on one release than the loading"
        " release before it, counted once per saving release however many programs it saved (" % (
            d.plural(saved.affected, "saved program")),
        d.link("each program", d.page(report_artifacts.NAME, report_artifacts.anchor(PROGRAM) + "-affected")), "):",
    )  # fmt: skip
    items = [
        d.Item(d.phrase("saved on %s, loaded on %s after %s: %s; %s" % (
            row["saved"], row["after"], row["before"], report_artifacts.affected(row),
            report_artifacts.break_failure(row))))
        for row in rows[:SHOWN_LOAD_REGRESSIONS]
    ]  # fmt: skip
    if len(rows) > SHOWN_LOAD_REGRESSIONS:
        items.append(d.Item(d.phrase("… and %d more on the " % (len(rows) - SHOWN_LOAD_REGRESSIONS),
                                     d.link("saved programs page", d.page(report_artifacts.NAME)), ".")))  # fmt: skip
    return [d.Paragraph(head), d.Items(tuple(items))]


def _cases(f: Findings) -> d.Section:
    """The cases: the site's grid of case × release × mode with its filters (a widget), and the status grid page (with
    the charts of every case by tag)."""
    said = d.phrase(
        "Every case in every release and mode: the ", d.link("status grid", d.page(pages.GRID)),
        "; one page per case under ", d.Code("cases/"), ", linked from every table.",
    )  # fmt: skip
    return d.Section("cases", "Cases", (d.Paragraph(said), d.Widget(GRID)))


def _tables(offered: Sequence[str]) -> Optional[d.Section]:
    """The report's tables to download, as Parquet beside the pages; the site adds its CSV (a widget)."""
    if not offered:
        return None
    links = d.joined([d.phrase(d.link(name, d.file(name))) for name in sorted(offered)])
    said = d.phrase("The report's tables, as Parquet (pandas and pyarrow read them): ", links, ".")
    return d.Section("tables", "Tables", (d.Paragraph(said), d.Widget(DOWNLOADS)))


def _more(f: Findings) -> d.Section:
    """Links to the detail pages, each where the report has it (a page or its Markdown file, as some name theirs)."""
    disagree = len(f.disagreements)
    shown = [
        (True, "Status grid", pages.GRID, ": every case in every release and mode, and the counts per status."),
        (True, "Strict vs non-strict", pages.MODES_PAGE, ": every case whose modes disagree (%d cells)." % disagree),
        (True, "Failure signatures", pages.FAILURES, ": all %d." % len(f.signatures)),
        (pages.claimed(f), "Documented claim vs observed", pages.CLAIMS, " (%d cells)." % len(f.claims)),
        (not f.flaky.empty, "Flaky cells", pages.FLAKY, " (%d)." % len(f.flaky)),
        (f.warnings, "Record warnings", pages.WARNINGS, " (%d)." % len(f.warnings)),
        (f.candidates, "Candidates against the newest release", candidate_page.PAGE, ": every cell."),
        (f.builds, "Builds of one release compared", builds_page.PAGE, ": another variant's build against PyPI's."),
        (f.devices, "One build on two devices", devices_page.NAME, ": the cells that differ by device."),
    ]  # fmt: skip
    links = [d.Item(d.phrase(d.link(label, d.page(name[: -len(".md")] if name.endswith(".md") else name)), said))
             for wanted, label, name, said in shown if wanted]  # fmt: skip
    return d.Section("more", "More", (d.Items(tuple(links)),))

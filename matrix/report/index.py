"""The report's front page, index.md, read top-down by whoever decides on a release.

Title and a link to the glossary; the verdicts (report.verdicts: what is still broken, what broke
in the newest release, what is expected to work and does, the saved-program epochs, the sample's
confounds); the run header; a summary (pass rate per release, counts of what changed); every
regression; the most common failure signatures; strict vs non-strict in brief; one line per
release transition, linking the page that holds its detail; links to the other pages (status
grid, failures, claims, flaky cells); what changed since the previous report, in brief. The
detail lives on those pages, so that the front page stays short however many cases and releases
the matrix has.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import pandas as pd

from matrix.contract.schema import MODES, STAGES, Status
from matrix.records import devices as by_device
from matrix.records import store, tables, timings, transitions
from matrix.records.model import PassRate, environment_key
from matrix.records.transitions import Step
from matrix.report import (
    aoti_verdict,
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
from matrix.report import artifacts as report_artifacts
from matrix.report import baseline as report_baseline
from matrix.report import markdown as md
from matrix.report import upgrade as report_upgrade
from matrix.report import verdicts as report_verdicts
from matrix.report.findings import Findings
from matrix.report.writers import markdown as markdown_writer

__all__ = ["Findings", "render"]

# The failure signatures shown on the front page; all of them are on pages.FAILURES.
TOP_SIGNATURES = 10
# The load regressions named on the front page; all of them are on the artifacts page.
SHOWN_LOAD_REGRESSIONS = 10
# The kinds of transition that need several timed runs per cell to be claimed.
_TIMINGS = ("slowdown", "speedup")
STAGE_LABELS = dict(STAGES)
# The programs an op drift is counted for (transitions.OP_STAGES), as the front page names them.
OP_PROGRAMS = (("exported", "the exported program"), ("decomposed", "the decomposed one"))


def render(f: Findings) -> str:
    sections = [
        "# %s\n" % md.text(f.title),
        "%s\n" % md.text(citation.line(f.stamp, f.environments)),
        "What the words mean (cell, build, release, regression, op drift, epoch, …): [glossary](%s).\n" % glossary.PAGE,
        report_verdicts.render(
            f.verdicts,
            builds_page.incomplete_line(f.incomplete),
            builds_page.line(f.builds),
            [candidate_page.line(v) for v in f.candidates],
            known_issues.markdown_lines(f.model.known_issues),
            more=[
                *aoti_verdict.markdown(f.model.aoti, report_artifacts.PAGE),
                _upgrade(f),
                devices_page.line(f.model.devices),
            ],
        ),
        _header(f),
        pages.charts(f, "overview"),  # below the verdicts: the whole status grid at a glance
        _summary(f),
        _env_errors(f),
        _regressions(f),
        real_models.section(f),
        _signatures(f),
        _modes(f),
        _transitions(f),
        _saved_programs(f),
        _more(f),
    ]
    if f.baseline is not None:
        since = report_baseline.section(f.baseline, f.baseline_name, f.model.figures_since)
        sections.append(markdown_writer._Writer("index.md").block(since, 2))
    return "\n".join(s for s in sections if s).rstrip("\n") + "\n"


def _upgrade(f: Findings) -> str:
    line = report_upgrade.line(report_upgrade.newest(f.model.upgrades))
    return "- " + line.rstrip("\n") if line else ""


def values_of(frame: pd.DataFrame, column: str, ordered: bool = False) -> List[str]:
    """The distinct values of a column as text, sorted (in version order where ``ordered``); the run's facts."""
    if column not in frame.columns:
        return []
    values = [str(v) for v in frame[column].dropna().unique() if str(v)]
    return store.ordered(values) if ordered else sorted(values)


def devices(envs: pd.DataFrame, cells: pd.DataFrame, elsewhere: Optional[pd.DataFrame] = None) -> str:
    """Where the cells ran, said so that no build's name reads as a GPU run where none was: ``cpu (the CUDA builds,
    +cu…, ran on the CPU: no cell ran on a GPU)``, or ``cuda (NVIDIA H200), cpu``. With ``elsewhere``, the cells of
    other devices than ``cells``' (records.devices.split): which builds ran on each."""
    if elsewhere is not None and not elsewhere.empty:
        return _each_device(envs, cells, elsewhere)
    ran = values_of(envs, "device") or values_of(cells, "device")
    if not ran:
        return ""
    gpus = values_of(envs, "gpu_name")
    text = ", ".join("%s (%s)" % (device, ", ".join(gpus)) if device == "cuda" and gpus else device for device in ran)
    builds = values_of(cells, "release") + values_of(cells, "torch_version") + values_of(envs, "torch_version")
    cuda_builds = [v for v in builds if "+cu" in v or "+rocm" in v]
    if "cuda" not in ran and cuda_builds:
        text += " (the CUDA builds, +cu…, ran on the CPU: no cell ran on a GPU)"
    return text


def _each_device(envs: pd.DataFrame, cells: pd.DataFrame, elsewhere: pd.DataFrame) -> str:
    """``cpu: every build of the grid; cuda (NVIDIA H200, …): 2.15.0+cu132 too, compared …``."""
    main = by_device.main(cells)
    parts = ["%s: every build of the grid, the transitions and the verdicts" % main]
    on = by_device.of(elsewhere)
    for device in sorted(set(on)):
        mine = elsewhere[(on == device).to_numpy()]
        gpus = values_of(mine, "gpu") or (values_of(envs, "gpu_name") if device == "cuda" else [])
        name = "%s (%s)" % (device, "; ".join(gpus)) if gpus else device
        parts.append(
            "%s: %s too, compared cell by cell with its %s cells, never in the grid"
            % (name, ", ".join(store.ordered(mine["release"])), main)
        )
    return "; ".join(parts)


def run_facts(f: Findings, unknown: str = "") -> List[Tuple[str, str]]:
    """The run in (label, plain text) pairs: the front page's "The run" table, and the site's; ``unknown`` stands
    for a machine or device the records do not name."""
    cells, envs = f.cells, f.environments
    return [
        ("releases", "%s: %s" % (md.releases_and_builds(f.scope), ", ".join(md.build_names(f.scope)))),
        ("variants", ", ".join(values_of(cells, "variant"))),
        ("Python", ", ".join(values_of(cells, "python", ordered=True))),
        ("sources", ", ".join(values_of(cells, "source"))),
        ("machine", "; ".join(machines(envs)) or unknown),
        ("device", devices(envs, cells, f.model.elsewhere) or unknown),
        ("CPU", citation.cpu(envs)),
        ("GPU", citation.gpu(envs)),
        ("device per build", citation.devices_words(envs) or citation.NOT_RECORDED),
        ("run on", "%s (UTC, from the environment records)" % (citation.dates(envs) or "unknown")),
        ("cells", "%s; from %s" % (md.cells_counted(f.scope), md.plural(f.runs, "cell record"))),
    ]


def _header(f: Findings) -> str:
    lines = ["## The run\n", "| | |", "| :--- | :--- |"]
    lines += ["| %s | %s |" % (label, md.text(value)) for label, value in run_facts(f)]
    return "\n".join(lines) + "\n"


def machines(envs: pd.DataFrame) -> List[str]:
    """Each machine the environment records name: architecture, CPU and platform."""
    found = set()
    for row in envs.to_dict("records"):
        parts = [str(row.get(k)) for k in ("machine", "cpu", "platform") if row.get(k)]
        if parts:
            found.add(", ".join(parts))
    return sorted(found)


def _count(f: Findings, *kinds: str) -> int:
    return int(f.moves["kind"].isin(kinds).sum()) if not f.moves.empty else 0


def _summary(f: Findings) -> str:
    stage = f.stage_failures
    per_stage = {name: int((stage["stage"] == name).sum()) if not stage.empty else 0 for name, _ in STAGES}
    lines = [
        "## Summary\n",
        "- %s; %s." % (md.cells_counted(f.scope), md.releases_and_builds(f.scope)),
        "- Between consecutive releases: **%s** (%s, **%d now wrong numbers**: an export that failed now gives"
        " other numbers than eager, %s), %s (%s, %s), %s, %s; %s ([per transition](#release-transitions))."
        % (
            md.plural(_count(f, *transitions.REGRESSIONS), "regression"),
            md.plural(_count(f, "regression"), "status regression"),
            _count(f, "wrong-result"),
            md.plural(_count(f, "stage-regression"), "stage regression"),
            md.plural(_count(f, *transitions.FIXES), "fix", "fixes"),
            md.plural(_count(f, "fix"), "status fix", "status fixes"),
            md.plural(_count(f, "stage-fix"), "stage fix", "stage fixes"),
            md.plural(_count(f, "graph-change"), "graph change"),
            _op_drifts(f),
            _timing_counts(f),
        ),
        "- %s whose program does not save/load; %d whose decomposition fails (marked %s and %s in the"
        " [status grid](%s))."
        % (
            md.plural(per_stage["serialize"], "passing cell"),
            per_stage["decompose"],
            md.STAGE_MARKS["serialize"],
            md.STAGE_MARKS["decompose"],
            pages.GRID,
        ),
        "- %s; %s; %s contradicting the documented claim (for an ExportDB"
        " case, that release's own ExportDB where it has the example, else the case's `expected`)."
        % (
            _disagree(f),
            _flakiness(f),
            md.plural(len(f.claims), "cell"),
        ),
        *_load_regression_count(f),
        "",
        "Pass rate = pass / applicable cells (%s and %s left out); a pass counts whether or not its program"
        " saves, loads and decomposes.\n" % (Status.NOT_APPLICABLE, Status.CASE_ERROR),
        _pass_rates(f),
    ]
    return "\n".join(lines) + pages.charts(f, "summary")


def _op_drifts(f: Findings) -> str:
    """The op drifts, per program they were counted for: ``7 op drifts (5 in the exported program, 2 in …)``."""
    total = md.plural(_count(f, "op-drift"), "op drift", "op drifts")
    if f.moves.empty or not _count(f, "op-drift"):
        return total
    drifts = f.moves[f.moves["kind"] == "op-drift"]
    per_program = ["%d in %s" % (int((drifts["stage"] == stage).sum()), name) for stage, name in OP_PROGRAMS]
    changed = len(drifts.drop_duplicates(["case", "mode", "variant", "with_set", "before", "after"]))
    return "%s (%s; %s)" % (total, ", ".join(per_program), md.plural(changed, "cell changed", "cells changed"))


def _timing_counts(f: Findings) -> str:
    """The slowdowns and speedups, or why none can be claimed: ``slowdowns and speedups not assessed: 1 run each``."""
    missing = transition_page.not_timed(f.steps)
    if missing is not None:
        return "slowdowns and speedups %s" % md.text(missing)
    counts = "%s, %s" % (md.plural(_count(f, "slowdown"), "slowdown"), md.plural(_count(f, "speedup"), "speedup"))
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
    flaky = md.plural(len(f.flaky), "flaky cell")
    if fewest >= 2:
        return flaky
    repeated = sum(1 for value in runs if timings.repeats([value])[0] >= 2)
    return "%s (of %d cells run more than once)" % (flaky, repeated)


def _load_regression_count(f: Findings) -> List[str]:
    if f.artifacts is None:
        return []
    return [
        "- Saved programs: %s, affecting %s ([saved programs across releases](#saved-programs-across-releases))."
        % (md.plural(f.artifacts.regressions, "load regression"), md.plural(f.artifacts.affected, "program"))
    ]


def _pass_rates(f: Findings) -> str:
    """One row per environment: its cells, the pass rate per mode (:mod:`matrix.records.model`'s), its passes
    with a failing stage."""
    if not f.pass_rates:
        return "_None._\n"
    modes = [m for m in MODES if m in {r.mode for r in f.pass_rates}]
    failing: Dict[Tuple[str, ...], int] = {}
    for row in f.stage_failures.to_dict("records"):
        key = (*environment_key(row), str(row["stage"]))
        failing[key] = failing.get(key, 0) + 1
    by_env: Dict[Tuple[str, ...], List[PassRate]] = {}
    for found in f.pass_rates:
        by_env.setdefault(found.environment, []).append(found)
    rows = []
    for env, group in by_env.items():
        rate = {r.mode: r.rate for r in group}
        rows.append(
            [md.text(group[0].label), str(sum(r.cells for r in group))]
            + [md.percent(rate.get(m)) for m in modes]
            + [str(failing.get((*env, stage), 0)) for stage, _ in STAGES]
        )
    headers = ["release", "cells"] + ["%s pass rate" % m for m in modes] + ["%s fails" % label for _, label in STAGES]
    return md.table(headers, rows, ["l"] + ["r"] * (1 + len(modes) + len(STAGES)))


# The table of environments that failed to install, on the front page and the site's.
ENV_ERROR_HEADERS = ["release", "variant", "Python", "environment", "error", "message"]


def env_error_cells(row: Dict[str, Any]) -> List[Any]:
    """An environment that failed to install, as the table names it, but for its message."""
    return [row.get("torch_version"), row.get("variant"), row.get("python"), row.get("dependency_set") or "torch alone"]


def _env_errors(f: Findings) -> str:
    if f.env_errors.empty:
        return ""
    rows = [
        [md.text(v) for v in env_error_cells(r)] + [md.code(r["error_type"]), md.text(r["error_message"], 300)]
        for r in f.env_errors.to_dict("records")
    ]
    table = md.table(ENV_ERROR_HEADERS, rows)
    more = "\nWhat the installer said: [installer output](%s).\n" % pages.INSTALL_ERRORS
    return "## Environments that failed to install\n\n" + table + (more if pages.installer_outputs(f) else "")


def _step_link(move: Dict[str, Any]) -> str:
    return md.link(
        md.transition_title(move["before"], move["after"], move.get("variant_before"), move.get("variant")),
        md.transition_page(move["before"], move["after"]),
    )


def _change(move: Dict[str, Any]) -> str:
    if move["kind"] in ("regression", "wrong-result"):
        change = "%s → %s" % (md.status(move["status_before"]), md.status(move["status_after"]))
        return change + (" (now wrong numbers)" if move["kind"] == "wrong-result" else "")
    return md.text("%s, %s starts failing" % (move["status_after"], STAGE_LABELS.get(move["stage"], move["stage"])))


def _regressions(f: Findings) -> str:
    found = f.moves[f.moves["kind"].isin(transitions.REGRESSIONS)] if not f.moves.empty else f.moves
    # One row per change, its modes together: the same case breaking the same way in both modes is one story.
    groups: Dict[Tuple[Any, ...], List[Dict[str, Any]]] = {}
    for move in found.to_dict("records"):
        fields = ["before", "after", "variant_before", "variant", "case", "with_set", "kind"]
        fields += ["status_before", "status_after", "stage", "error_type", "error_message"]
        groups.setdefault(tuple(str(move.get(k)) for k in fields), []).append(move)
    rows = [
        [
            _step_link(members[0]),
            md.case_with(members[0]["case"], members[0].get("with_set")),
            md.text(", ".join(str(m["mode"]) for m in members)),
            _change(members[0]),
            transition_page.error(members[0]["error_type"], members[0]["error_message"], 200),
        ]
        for members in groups.values()
    ]
    intro = (
        "Every cell that got worse from one release to the next: its status; an export that used to fail and now"
        " gives wrong numbers silently (now wrong numbers); or a stage run on the exported program (save/load,"
        " decomposition) that starts failing while the cell still passes. Fixes, graph changes and timings are on"
        " the [transition pages](#release-transitions).\n\n"
    )
    table = md.table(["releases", "case", "mode", "change", "error in the newer release"], rows)
    return "## Regressions (%s)\n\n%s%s" % (md.plural(len(found), "cell"), intro, table)


def _signatures(f: Findings) -> str:
    if f.signatures.empty:
        return "## Top failure signatures\n\n_None._\n"
    intro = (
        "Failing cells (mismatch, fail, crash, timeout) grouped by error class and the first line of the message;"
        " the %d most common of %d ([all of them](%s)).\n\n"
        % (min(TOP_SIGNATURES, len(f.signatures)), len(f.signatures), pages.FAILURES)
    )
    table = markdown_writer._Writer("index.md").block(pages.signature_table(f, TOP_SIGNATURES), 2)
    return "## Top failure signatures\n\n" + intro + table


def _not_run(f: Findings) -> str:
    """``strict mode was not run`` where a mode has no cell, else ""."""
    unrun = [m for m in MODES if m not in f.verdicts.modes]
    return "%s mode was not run" % " and ".join(unrun) if unrun and f.verdicts.modes else ""


def _disagree(f: Findings) -> str:
    unrun = _not_run(f)
    if unrun:
        return "strict and non-strict not compared: %s" % unrun
    return "%s where strict and non-strict disagree" % md.plural(len(f.disagreements), "cell")


def _modes(f: Findings) -> str:
    """Per environment: the cases run in both modes, and how often the two modes disagree."""
    if _not_run(f):
        return "## Strict vs non-strict\n\nNot compared: %s.\n" % _not_run(f)
    counts = tables.mode_counts(f.cells, f.disagreements)
    labels = tables.environment_labels(counts).to_numpy() if not counts.empty else []
    rows = [
        [md.text(label)]
        + [str(int(row[column])) for column in ("both_modes", "disagree", "strict_only", "non_strict_only", "other")]
        for label, row in zip(labels, counts.to_dict("records"))
    ]
    intro = (
        "Cases run in both modes (both applicable) and how many end differently; each case is on the"
        " [strict vs non-strict page](%s).\n\n" % pages.MODES_PAGE
    )
    flip = report_verdicts.strict_note(f.verdicts)
    if flip:
        intro += flip + "\n\n"
    headers = ["release", "cases in both modes", "disagree", "only strict passes", "only non-strict passes", "other"]
    return "## Strict vs non-strict\n\n" + intro + md.table(headers, rows, ["l"] + ["r"] * 5)


# A column of the transition table: its header, the kinds it counts and, for op drift, the program ("" for any).
Column = Tuple[str, Tuple[str, ...], str]


def _transitions(f: Findings) -> str:
    # The regressions (transitions.REGRESSIONS), then the fixes (FIXES), kind by kind, as the chart stacks them.
    columns: Sequence[Column] = (
        *((transition_page.COUNTED[kind], (kind,), "") for kind in transitions.REGRESSIONS + transitions.FIXES),
        ("graph changes", ("graph-change",), ""),
        *(("op drift: %s" % stage, ("op-drift",), stage) for stage, _ in OP_PROGRAMS),
    )
    untimed = transition_page.not_timed(f.steps)
    if untimed is None:
        # A transition without the runs a timing claim needs shows "–" there, not a count of none.
        columns = (*columns, ("slower", ("slowdown",), ""), ("faster", ("speedup",), ""))
    rows = [
        [md.link(transition_page.title(step), transition_page.page(step)), str(len(step.pairs))]
        + [
            _number(step, kinds, program) if step.timed or kinds[0] not in _TIMINGS else "–"
            for _, kinds, program in columns
        ]
        for step in f.steps
    ]
    timings = (
        "Slowdowns and speedups %s. " % md.text(untimed)
        if untimed is not None
        else "Slower and faster: – where no cell has the runs a timing claim needs. "
    )
    intro = (
        "Each release compared with the one before it, case by case and mode by mode; each page lists every"
        " change with its error, graph diff or timing evidence. Graphs are compared only when both hashes come from"
        " the same hashing scheme. Op drift is counted per program: the exported one, and the same decomposed to"
        " core ATen.\n\n%s%s\n\n" % (timings, transition_page.rule())
    )
    headers = ["transition", "cells compared"] + [name for name, _, _ in columns]
    table = md.table(headers, rows, ["l"] + ["r"] * (1 + len(columns)))
    charts = pages.charts(f, "transitions") + pages.charts(f, "export-time")
    return "## Release transitions\n\n" + intro + table + charts


def _number(step: Step, kinds: Tuple[str, ...], program: str = "") -> str:
    """The step's transitions of ``kinds`` ("" for none); of the op drifts, those of ``program`` where one is named."""
    count = sum(1 for m in step.of(*kinds) if not program or m.get("stage") == program)
    return str(count) if count else ""


def _saved_programs(f: Findings) -> str:
    """Programs saved on one release and loaded on another: the summary and the saved × loaded heatmap."""
    if f.artifacts is None:
        return ""
    lines = ["## Saved programs across releases\n"]
    # The epochs stand for the per-release prose of the artifacts page, which keeps it.
    epochs = report_verdicts.epochs_section(f.verdicts, f.cells["case"].astype(str))
    if epochs:
        lines.append(epochs)
    lines.append(_load_regressions(f.artifacts))
    for chart in f.artifacts.charts:
        lines.append("![%s](%s)\n" % (md.text(chart.title), chart.path))
    lines.append("Every saved × loaded pair, per case and mode, with its error: [saved programs](artifacts.md).\n")
    return "\n".join(lines)


def _load_regressions(saved: report_artifacts.Written) -> str:
    """The load regressions, one line each: counted once per (saving release, loading release) pair."""
    rows = saved.load_regressions
    if not rows:
        return "No load regression: no loading release does worse with any saved program than the release before it.\n"
    head = (
        "**%s**, affecting %s: a loading release that does worse with the programs saved on one release than the"
        " loading release before it, counted once per saving release however many programs it saved"
        " ([each program](%s#programs-affected)):\n"
        % (
            md.plural(saved.regressions, "load regression"),
            md.plural(saved.affected, "saved program"),
            report_artifacts.PAGE,
        )
    )
    lines = [
        "- saved on %s, loaded on %s after %s: %s; %s"
        % (
            md.text(row["saved"]),
            md.text(row["after"]),
            md.text(row["before"]),
            md.text(report_artifacts.affected(row)),
            md.text(report_artifacts.break_failure(row)),
        )
        for row in rows[:SHOWN_LOAD_REGRESSIONS]
    ]
    if len(rows) > SHOWN_LOAD_REGRESSIONS:
        lines.append(
            "- … and %d more on the [saved programs page](%s)."
            % (len(rows) - SHOWN_LOAD_REGRESSIONS, report_artifacts.PAGE)
        )
    return head + "\n" + "\n".join(lines) + "\n"


def _more(f: Findings) -> str:
    links = [
        "- [Status grid](%s): every case in every release and mode, and the counts per status." % pages.GRID,
        "- [Strict vs non-strict](%s): every case whose modes disagree (%d cells)."
        % (pages.MODES_PAGE, len(f.disagreements)),
        "- [Failure signatures](%s): all %d." % (pages.FAILURES, len(f.signatures)),
    ]
    if f.cells["expected"].map(lambda v: isinstance(v, str)).any():
        links.append("- [Documented claim vs observed](%s) (%d cells)." % (pages.CLAIMS, len(f.claims)))
    if not f.flaky.empty:
        links.append("- [Flaky cells](%s) (%d)." % (pages.FLAKY, len(f.flaky)))
    if f.warnings:
        links.append("- [Record warnings](%s) (%d)." % (pages.WARNINGS, len(f.warnings)))
    if f.candidates:
        links.append("- [Candidates against the newest release](%s): every cell." % candidate_page.PAGE)
    if f.builds:
        links.append(
            "- [Builds of one release compared](%s): another variant's build against PyPI's." % builds_page.PAGE
        )
    if f.model.devices:
        links.append("- [One build on two devices](%s): the cells that differ by device." % devices_page.PAGE)
    links.append("- One page per case under `cases/`, linked from every table.")
    return "## More\n\n" + "\n".join(links) + "\n"

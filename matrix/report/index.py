"""The report's front page, index.md, read top-down by whoever decides on a release.

Title and run header; a summary (pass rate per release, counts of what changed); every
regression; the most common failure signatures; strict vs non-strict in brief; one line
per release transition, linking the page that holds its detail; links to the other
pages (status grid, failures, claims, flaky cells). The detail lives on those pages, so
that the front page stays short however many cases and releases the matrix has.
"""

from __future__ import annotations

from typing import Any, Dict, List, Sequence, Tuple

import pandas as pd

from matrix.records import store, tables, transitions
from matrix.records.transitions import Step
from matrix.report import baseline as report_baseline
from matrix.report import markdown as md
from matrix.report import pages, transition_page
from matrix.report.findings import Findings
from matrix.schema import MODES, STAGES, Status

__all__ = ["Findings", "render"]

# The failure signatures shown on the front page; all of them are on pages.FAILURES.
TOP_SIGNATURES = 10
STAGE_LABELS = dict(STAGES)


def render(f: Findings) -> str:
    sections = [
        _header(f),
        _summary(f),
        _env_errors(f),
        _regressions(f),
        _signatures(f),
        _modes(f),
        _transitions(f),
        _saved_programs(f),
        _more(f),
    ]
    if f.baseline is not None:
        sections.append(report_baseline.render(f.baseline, f.baseline_name, f.cells))
    return "\n".join(s for s in sections if s).rstrip("\n") + "\n"


def _values(frame: pd.DataFrame, column: str, ordered: bool = False) -> List[str]:
    if column not in frame.columns:
        return []
    values = [str(v) for v in frame[column].dropna().unique() if str(v)]
    return store.ordered(values) if ordered else sorted(values)


def _header(f: Findings) -> str:
    cells = f.cells
    envs = f.environments
    releases = store.ordered(list(cells["release"]) + list(f.env_errors.get("torch_version", [])))
    started = sorted(str(v)[:10] for v in envs.get("started_at", pd.Series(dtype=object)).dropna())
    when = " to ".join(dict.fromkeys([started[0], started[-1]])) if started else "unknown"
    lines = [
        "# %s\n" % md.text(f.title),
        "| | |",
        "| :--- | :--- |",
        "| releases | %s |" % md.text(", ".join(releases)),
        "| variants | %s |" % md.text(", ".join(_values(cells, "variant"))),
        "| Python | %s |" % md.text(", ".join(_values(cells, "python", ordered=True))),
        "| sources | %s |" % md.text(", ".join(_values(cells, "source"))),
        "| machine | %s |" % md.text("; ".join(_machines(envs))),
        "| device | %s |" % md.text(", ".join(_values(envs, "device") or _values(cells, "device"))),
        "| run on | %s (UTC, from the environment records) |" % md.text(when),
        "| cells | %d (%d cases × %d modes; %d records) |"
        % (len(cells), cells["case"].nunique(), cells["mode"].nunique(), f.runs),
    ]
    return "\n".join(lines) + "\n"


def _machines(envs: pd.DataFrame) -> List[str]:
    found = set()
    for row in envs.to_dict("records"):
        parts = [str(row.get(k)) for k in ("machine", "cpu", "platform") if row.get(k)]
        if parts:
            found.add(", ".join(parts))
    return sorted(found)


def _count(f: Findings, *kinds: str) -> int:
    return int(f.moves["kind"].isin(kinds).sum()) if not f.moves.empty else 0


def _plural(count: int, one: str, many: str = "") -> str:
    return "%d %s" % (count, one if count == 1 else (many or one + "s"))


def _summary(f: Findings) -> str:
    stage = f.stage_failures
    per_stage = {name: int((stage["stage"] == name).sum()) if not stage.empty else 0 for name, _ in STAGES}
    envs = f.cells[["release", "variant", "python"]].drop_duplicates()
    lines = [
        "## Summary\n",
        "- %s (%s × %s) in %s."
        % (
            _plural(len(f.cells), "cell"),
            _plural(f.cells["case"].nunique(), "case"),
            _plural(f.cells["mode"].nunique(), "mode"),
            _plural(len(envs), "environment"),
        ),
        "- Between consecutive releases: **%s**, %s, %s, %s, %s, %s, %s, %s ([per transition](#release-transitions))."
        % (
            _plural(_count(f, "regression"), "regression"),
            _plural(_count(f, "fix"), "fix", "fixes"),
            _plural(_count(f, "stage-regression"), "stage regression"),
            _plural(_count(f, "stage-fix"), "stage fix", "stage fixes"),
            _plural(_count(f, "graph-change"), "graph change"),
            _plural(_count(f, "op-drift"), "op drift", "op drifts"),
            _plural(_count(f, "slowdown"), "slowdown"),
            _plural(_count(f, "speedup"), "speedup"),
        ),
        "- %s whose program does not save/load; %d whose decomposition fails (marked %s and %s in the"
        " [status grid](%s))."
        % (
            _plural(per_stage["serialize"], "passing cell"),
            per_stage["decompose"],
            md.STAGE_MARKS["serialize"],
            md.STAGE_MARKS["decompose"],
            pages.GRID,
        ),
        "- %s where strict and non-strict disagree; %s; %s contradicting their case's documented claim."
        % (
            _plural(len(f.disagreements), "cell"),
            _plural(len(f.flaky), "flaky cell"),
            _plural(len(f.claims), "cell"),
        ),
        "",
        "Pass rate = pass / applicable cells (%s and %s left out); a pass counts whether or not its program"
        " saves, loads and decomposes.\n" % (Status.NOT_APPLICABLE, Status.CASE_ERROR),
        _pass_rates(f),
    ]
    return "\n".join(lines) + pages.charts(f, "summary")


def _pass_rates(f: Findings) -> str:
    """One row per environment: its cells, the pass rate per mode, its passes with a failing stage."""
    summary = f.summary
    if summary.empty:
        return "_None._\n"
    env = ["release", "variant", "python"]
    summary = summary.assign(_env=tables.environment_labels(summary).to_numpy())
    modes = [m for m in MODES if m in set(summary["mode"])]
    failing: Dict[Tuple[str, ...], int] = {}
    for row in f.stage_failures.to_dict("records"):
        key = tuple(str(row[k]) for k in [*env, "stage"])
        failing[key] = failing.get(key, 0) + 1
    rows = []
    for key, group in summary.groupby(env, sort=False):
        rate = dict(zip(group["mode"], group["pass_rate"]))
        names = tuple(str(k) for k in key)
        rows.append(
            [md.text(group["_env"].iloc[0]), str(int(group["cells"].sum()))]
            + [md.percent(rate.get(m)) for m in modes]
            + [str(failing.get((*names, stage), 0)) for stage, _ in STAGES]
        )
    headers = ["release", "cells"] + ["%s pass rate" % m for m in modes] + ["%s fails" % label for _, label in STAGES]
    return md.table(headers, rows, ["l"] + ["r"] * (1 + len(modes) + len(STAGES)))


def _env_errors(f: Findings) -> str:
    if f.env_errors.empty:
        return ""
    rows = [
        [
            md.text(r["torch_version"]),
            md.text(r["variant"]),
            md.text(r["python"]),
            md.text(r.get("dependency_set") or "torch alone"),
            md.code(r["error_type"]),
            md.text(r["error_message"], 300),
        ]
        for r in f.env_errors.to_dict("records")
    ]
    table = md.table(["release", "variant", "Python", "environment", "error", "message"], rows)
    more = "\nWhat the installer said: [installer output](%s).\n" % pages.INSTALL_ERRORS
    return "## Environments that failed to install\n\n" + table + (more if pages.installer_outputs(f) else "")


def _step_link(move: Dict[str, Any]) -> str:
    return md.link(
        md.transition_title(move["before"], move["after"], move.get("variant_before"), move.get("variant")),
        md.transition_page(move["before"], move["after"]),
    )


def _change(move: Dict[str, Any]) -> str:
    if move["kind"] == "regression":
        return "%s → %s" % (md.status(move["status_before"]), md.status(move["status_after"]))
    return md.text("%s, %s starts failing" % (move["status_after"], STAGE_LABELS.get(move["stage"], move["stage"])))


def _error(kind: Any, message: Any) -> str:
    parts = [md.code(kind) if isinstance(kind, str) else "", md.text(message, 200) if isinstance(message, str) else ""]
    return ": ".join(p for p in parts if p)


def _regressions(f: Findings) -> str:
    found = f.moves[f.moves["kind"].isin(transitions.REGRESSIONS)] if not f.moves.empty else f.moves
    # One row per change, its modes together: the same case breaking the same way in both modes is one story.
    groups: Dict[Tuple[Any, ...], List[Dict[str, Any]]] = {}
    for move in found.to_dict("records"):
        fields = ["before", "after", "variant_before", "variant", "case", "kind"]
        fields += ["status_before", "status_after", "stage", "error_type", "error_message"]
        groups.setdefault(tuple(str(move[k]) for k in fields), []).append(move)
    rows = [
        [
            _step_link(members[0]),
            md.case_link(members[0]["case"]),
            md.text(", ".join(str(m["mode"]) for m in members)),
            _change(members[0]),
            _error(members[0]["error_type"], members[0]["error_message"]),
        ]
        for members in groups.values()
    ]
    intro = (
        "Every cell that got worse from one release to the next: its status, or a stage run on the exported"
        " program (save/load, decomposition) that starts failing while the cell still passes. Fixes, graph changes"
        " and timings are on the [transition pages](#release-transitions).\n\n"
    )
    table = md.table(["releases", "case", "mode", "change", "error in the newer release"], rows)
    return "## Regressions (%s)\n\n%s%s" % (_plural(len(found), "cell"), intro, table)


def _signatures(f: Findings) -> str:
    if f.signatures.empty:
        return "## Top failure signatures\n\n_None._\n"
    intro = (
        "Failing cells (mismatch, fail, crash, timeout) grouped by error class and the first line of the message;"
        " the %d most common of %d ([all of them](%s)).\n\n"
        % (min(TOP_SIGNATURES, len(f.signatures)), len(f.signatures), pages.FAILURES)
    )
    rows = pages.signature_rows(f, TOP_SIGNATURES)
    return "## Top failure signatures\n\n" + intro + md.table(pages.SIGNATURE_HEADERS, rows, pages.SIGNATURE_ALIGN)


def _modes(f: Findings) -> str:
    """Per environment: the cases run in both modes, and how often the two modes disagree."""
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
    headers = ["release", "cases in both modes", "disagree", "only strict passes", "only non-strict passes", "other"]
    return "## Strict vs non-strict\n\n" + intro + md.table(headers, rows, ["l"] + ["r"] * 5)


def _transitions(f: Findings) -> str:
    columns: Sequence[Tuple[str, Tuple[str, ...]]] = (
        ("regressions", ("regression",)),
        ("fixes", ("fix",)),
        ("stage regressions", ("stage-regression",)),
        ("stage fixes", ("stage-fix",)),
        ("graph changes", ("graph-change",)),
        ("op drift", ("op-drift",)),
        ("slower", ("slowdown",)),
        ("faster", ("speedup",)),
    )
    rows = [
        [md.link(transition_page.title(step), transition_page.page(step)), str(len(step.pairs))]
        + [_number(step, kinds) for _, kinds in columns]
        for step in f.steps
    ]
    intro = (
        "Each release compared with the one before it, case by case and mode by mode; each page lists every"
        " change with its error, graph diff or timing evidence. Graphs are compared only when both hashes come from"
        " the same hashing scheme; %s\n\n" % _lower_first(transition_page.rule())
    )
    headers = ["transition", "cells compared"] + [name for name, _ in columns]
    table = md.table(headers, rows, ["l"] + ["r"] * (1 + len(columns)))
    charts = pages.charts(f, "transitions") + pages.charts(f, "export-time")
    return "## Release transitions\n\n" + intro + table + charts


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def _number(step: Step, kinds: Tuple[str, ...]) -> str:
    count = step.count(*kinds)
    return str(count) if count else ""


def _saved_programs(f: Findings) -> str:
    """Programs saved on one release and loaded on another: the summary and the saved × loaded heatmap."""
    if f.artifacts is None:
        return ""
    lines = ["## Saved programs across releases\n"]
    if f.artifacts.summary:
        lines.append(md.text(f.artifacts.summary) + "\n")
    if f.artifacts.regressions:
        count = f.artifacts.regressions
        lines.append("%d load regression(s): a release that stopped loading what an earlier one loaded.\n" % count)
    for chart in f.artifacts.charts:
        lines.append("![%s](%s)\n" % (md.text(chart.title), chart.path))
    lines.append("Every saved × loaded pair, per case and mode, with its error: [saved programs](artifacts.md).\n")
    return "\n".join(lines)


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
    links.append("- One page per case under `cases/`, linked from every table.")
    return "## More\n\n" + "\n".join(links) + "\n"

"""The report's front page, index.md: the matrix, its summary, what changed between releases, the grid."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import pandas as pd

from matrix.records import store, tables
from matrix.report import baseline as report_baseline
from matrix.report import markdown as md
from matrix.report.charts import Chart
from matrix.schema import MODES, STATUSES, Status

# Long lists (ops, warnings) are cut with a count so that a page stays readable.
MAX_OPS = 8
MAX_WARNINGS = 50


@dataclass(frozen=True)
class Findings:
    """Everything the front page shows, computed from the records."""

    title: str
    cells: pd.DataFrame  # tables.cells
    labels: pd.Series  # environment label per row of cells
    environments: pd.DataFrame
    env_errors: pd.DataFrame
    moves: pd.DataFrame  # transitions.find
    summary: pd.DataFrame
    disagreements: pd.DataFrame
    claims: pd.DataFrame
    flaky: pd.DataFrame
    runs: int  # cell records behind the cells (after replacing re-runs)
    warnings: Tuple[str, ...] = ()
    baseline: Optional[tables.BaselineComparison] = None
    baseline_name: Optional[str] = None
    charts: Dict[str, List[Chart]] = field(default_factory=dict)


def render(f: Findings) -> str:
    sections = [
        _header(f),
        _summary(f),
        _env_errors(f),
        _regressions(f),
        _graph_changes(f),
        _timings(f),
        _modes(f),
        _claims(f),
        _flaky(f),
        _grid(f),
    ]
    if f.baseline is not None:
        sections.append(report_baseline.render(f.baseline, f.baseline_name, f.cells))
    if f.warnings:
        sections.append(_warnings(f))
    return "\n".join(s for s in sections if s).rstrip("\n") + "\n"


def _charts(f: Findings, key: str) -> str:
    return "".join("\n![%s](%s)\n" % (md.text(c.title), c.path) for c in f.charts.get(key, []))


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
    return (
        "\n".join(lines)
        + "\n\nPass rate = pass / applicable cells (%s and %s left out)" % (Status.NOT_APPLICABLE, Status.CASE_ERROR)
        + ".\n"
    )


def _machines(envs: pd.DataFrame) -> List[str]:
    found = set()
    for row in envs.to_dict("records"):
        parts = [str(row.get(k)) for k in ("machine", "cpu", "platform") if row.get(k)]
        if parts:
            found.add(", ".join(parts))
    return sorted(found)


def _summary(f: Findings) -> str:
    headers = ["release", "variant", "Python", "mode"] + ["%s %s" % (md.SYMBOLS[s], s) for s in STATUSES]
    rows = [
        [md.text(r["release"]), md.text(r["variant"]), md.text(r["python"]), md.text(r["mode"])]
        + [str(int(r[s])) if r[s] else "" for s in STATUSES]
        + [str(int(r["cells"])), md.percent(r["pass_rate"])]
        for r in f.summary.to_dict("records")
    ]
    body = md.table(headers + ["cells", "pass rate"], rows, ["l"] * 4 + ["r"] * (len(STATUSES) + 2))
    return "## Summary per release and mode\n\n" + body + _charts(f, "summary")


def _env_errors(f: Findings) -> str:
    if f.env_errors.empty:
        return ""
    rows, blocks = [], []
    for r in f.env_errors.to_dict("records"):
        rows.append(
            [
                md.text(r["torch_version"]),
                md.text(r["variant"]),
                md.text(r["python"]),
                md.code(r["error_type"]),
                md.text(r["error_message"], 300),
            ]
        )
        if isinstance(r.get("installer_output"), str) and r["installer_output"].strip():
            name = "torch %s %s py%s: installer output" % (r["torch_version"], r["variant"], r["python"])
            blocks.append(md.details(name, md.fence(r["installer_output"], "text")))
    table = md.table(["release", "variant", "Python", "error", "message"], rows)
    return "## Environments that failed to install\n\n" + table + "\n" + "\n".join(blocks)


def _releases(m: Any) -> str:
    return md.moved(m)


def _error(kind: Any, message: Any) -> str:
    parts = [md.code(kind) if isinstance(kind, str) else "", md.text(message, 200) if isinstance(message, str) else ""]
    return ": ".join(p for p in parts if p)


def _moves(f: Findings, kinds: Sequence[str]) -> List[Dict[str, Any]]:
    if f.moves.empty:
        return []
    return f.moves[f.moves["kind"].isin(kinds)].to_dict("records")


def _regressions(f: Findings) -> str:
    out = ["## Regressions and fixes\n"]
    for kind, title in (("regression", "Regressions"), ("fix", "Fixes")):
        found = _moves(f, [kind])
        out.append("### %s (%d)\n" % (title, len(found)))
        out.append(
            md.table(
                ["releases", "case", "mode", "variant", "status", "error"],
                [
                    [
                        _releases(m),
                        md.case_link(m["case"]),
                        md.text(m["mode"]),
                        md.text(m["variant"]),
                        "%s → %s" % (md.status(m["status_before"]), md.status(m["status_after"])),
                        _error(m["error_type"], m["error_message"]),
                    ]
                    for m in found
                ],
            )
        )
    return "\n".join(out) + _charts(f, "transitions")


def _ops(values: Any) -> str:
    names = list(values) if values is not None and not isinstance(values, (str, float)) else []
    shown = ", ".join(md.code(v) for v in names[:MAX_OPS])
    return shown + (" … (+%d)" % (len(names) - MAX_OPS) if len(names) > MAX_OPS else "")


def _graph_changes(f: Findings) -> str:
    changes = _moves(f, ["graph-change"])
    drift = _moves(f, ["op-drift"])
    out = ["## Graph changes and op drift\n", "### Graph changes (%d)\n" % len(changes)]
    out.append(
        md.table(
            ["releases", "case", "mode", "variant", "graph hash"],
            [
                [
                    _releases(m),
                    md.case_link(m["case"]),
                    md.text(m["mode"]),
                    md.text(m["variant"]),
                    "%s → %s" % (md.code(m["hash_before"]), md.code(m["hash_after"])),
                ]
                for m in changes
            ],
        )
    )
    out.append("### Op drift (%d)\n" % len(drift))
    out.append(
        md.table(
            ["releases", "case", "mode", "variant", "stage", "added", "removed"],
            [
                [
                    _releases(m),
                    md.case_link(m["case"]),
                    md.text(m["mode"]),
                    md.text(m["variant"]),
                    md.text(m["stage"]),
                    _ops(m["added"]),
                    _ops(m["removed"]),
                ]
                for m in drift
            ],
        )
    )
    return "\n".join(out)


def _timings(f: Findings) -> str:
    found = _moves(f, ["slowdown", "speedup"])
    table = md.table(
        ["releases", "case", "mode", "variant", "kind", "export time (median)"],
        [
            [
                _releases(m),
                md.case_link(m["case"]),
                md.text(m["mode"]),
                md.text(m["variant"]),
                md.text(m["kind"]),
                md.text(m["detail"]),
            ]
            for m in found
        ],
    )
    rule = "Export time changed by more than ×1.5 and more than 50 ms between consecutive releases.\n\n"
    return "## Slowdowns and speedups (%d)\n\n" % len(found) + rule + table + _charts(f, "export-time")


def _modes(f: Findings) -> str:
    order = store.ordered(f.cells["release"])
    rows = []
    for (case, variant, strict, loose), members in md.grouped(
        f.disagreements.to_dict("records"), ["case", "variant", "strict", "non-strict"]
    ):
        newest = members[-1]
        error = newest["strict_error"] if strict != "pass" else newest["non-strict_error"]
        rows.append(
            [
                md.case_link(case),
                md.text(variant),
                md.status(strict),
                md.status(loose),
                md.spans([m["release"] for m in members], order),
                md.text(error, 200),
            ]
        )
    intro = "Cells where strict and non-strict export end differently (both applicable), grouped by outcome.\n\n"
    table = md.table(["case", "variant", "strict", "non-strict", "releases", "error (newest release)"], rows)
    return "## Strict vs non-strict (%d cells)\n\n" % len(f.disagreements) + intro + table


def _claims(f: Findings) -> str:
    if not f.cells["expected"].map(lambda v: isinstance(v, str)).any():
        return ""
    order = store.ordered(f.cells["release"])
    rows = [
        [
            md.case_link(case),
            md.text(expected),
            md.text(mode),
            md.text(variant),
            md.status(status),
            md.spans([m["release"] for m in members], order),
            md.text(members[-1]["error"], 200),
        ]
        for (case, expected, mode, variant, status), members in md.grouped(
            f.claims.to_dict("records"), ["case", "expected", "mode", "variant", "status"]
        )
    ]
    intro = (
        "Cells whose outcome contradicts the case's documented claim (ExportDB's support level or the case's"
        " `expected`). A claim covers both modes unless it names one; `supported` means passes.\n\n"
    )
    table = md.table(["case", "claim", "mode", "variant", "observed", "releases", "error (newest release)"], rows)
    return "## Documented claim vs observed (%d cells)\n\n" % len(f.claims) + intro + table


def _flaky(f: Findings) -> str:
    if f.flaky.empty:
        return ""
    rows = [
        [
            md.text(r["release"]),
            md.text(r["variant"]),
            md.text(r["python"]),
            md.case_link(r["case"]),
            md.text(r["mode"]),
            md.status(r["status"]),
            md.text(r["statuses"]),
        ]
        for r in f.flaky.to_dict("records")
    ]
    intro = "Cells whose repeated runs ended differently; the most common status (ties: the worse) is reported.\n\n"
    table = md.table(["release", "variant", "Python", "case", "mode", "status", "runs"], rows)
    return "## Flaky cells (%d)\n\n" % len(f.flaky) + intro + table


def _grid(f: Findings) -> str:
    cells = f.cells.assign(_env=f.labels)
    envs = list(dict.fromkeys(store.sort_cells(cells, release="release")["_env"]))
    symbol: Dict[Tuple[str, str, str], str] = {}
    for case, env, mode, status in zip(cells["case"], cells["_env"], cells["mode"], cells["status"]):
        symbol[(str(case), str(env), str(mode))] = md.SYMBOLS.get(status, "?")
    by_tag: Dict[str, List[str]] = {}
    for case, tags in zip(cells.drop_duplicates("case")["case"], cells.drop_duplicates("case")["tags"]):
        names = sorted(str(t) for t in tags) if tags is not None and not isinstance(tags, (str, float)) else []
        for tag in names or ["untagged"]:
            by_tag.setdefault(tag, []).append(str(case))
    modes = [m for m in MODES if m in set(cells["mode"])]
    out = [
        "## Status grid\n",
        "Each cell shows %s, one symbol per mode; cases with several tags appear under each.\n" % " then ".join(modes),
        md.legend(),
    ]
    for tag in sorted(by_tag, key=lambda t: (t == "untagged", t)):
        rows = [
            [md.case_link(case)] + ["".join(symbol.get((case, env, m), md.NO_RECORD) for m in modes) for env in envs]
            for case in sorted(by_tag[tag])
        ]
        out.append("### %s (%d)\n" % (md.text(tag), len(by_tag[tag])))
        out.append(md.table(["case"] + [md.text(e) for e in envs], rows, ["l"] + ["c"] * len(envs)))
    out.append(_charts(f, "grid"))
    return "\n".join(out)


def _warnings(f: Findings) -> str:
    shown = ["- %s" % md.text(w) for w in f.warnings[:MAX_WARNINGS]]
    if len(f.warnings) > MAX_WARNINGS:
        shown.append("- … and %d more" % (len(f.warnings) - MAX_WARNINGS))
    return "## Record warnings (%d)\n\n" % len(f.warnings) + "\n".join(shown) + "\n"

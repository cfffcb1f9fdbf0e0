"""The run's summary in CI: a report folder's counts, and what is new since the published baseline.

``python -m matrix.commands.ci summary REPORT_DIR`` writes the run's Markdown summary and decides whether the
run has new regressions since the baseline report.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, List, Optional

from matrix.contract.errors import FAILED, UserError
from matrix.contract.schema import STATUSES

if TYPE_CHECKING:
    import pandas as pd

POLICIES = ("fail", "issue", "ignore")
LISTED = 50  # rows per list in the step summary; GitHub caps a step summary at 1 MiB


class SummaryError(UserError):
    """A report folder without the tables the summary reads; the message names it."""


@dataclass(frozen=True)
class Verdict:
    """The run's tables and what is new since the baseline, if there is one."""

    cells: pd.DataFrame
    new_transitions: pd.DataFrame  # regressions between consecutive releases that the baseline did not show
    worse_cells: pd.DataFrame  # cells whose status got worse than the baseline's for the same cell
    has_baseline: bool

    @property
    def new_regressions(self) -> int:
        return len(self.new_transitions) + len(self.worse_cells)


def verdict(report_dir: str, baseline_dir: Optional[str]) -> Verdict:
    """Compare a report folder's tables with a baseline report's; with no baseline nothing is new.

    A new regression is either a regression between two releases that the baseline report
    did not list (a new release broke a case, or a case was added broken), or a cell that
    passes less well than the very same cell did in the baseline.
    """
    import pandas as pd

    from matrix.records import baseline, devices, tables, transitions

    path = os.path.join(report_dir, "cells.parquet")
    if not os.path.isfile(path):
        raise SummaryError("%s: no cells.parquet; pass the --out folder of `export-matrix report`" % report_dir)
    try:
        cells = devices.main_cells(pd.read_parquet(path))  # the main device's cells, as the report judged them
        moves_path = os.path.join(report_dir, "transitions.parquet")
        moves = pd.read_parquet(moves_path) if os.path.isfile(moves_path) else transitions.find(cells)
    except (OSError, ValueError) as exc:
        raise SummaryError("%s: cannot read the report's tables: %s" % (report_dir, exc))
    empty = moves.iloc[0:0]
    if baseline_dir is None:
        return Verdict(cells, empty, pd.DataFrame(columns=[*tables.KEY, "status_baseline", "status"]), False)
    try:
        base, base_moves = baseline.read_baseline(baseline_dir)
    except baseline.BaselineError as exc:
        raise SummaryError(str(exc))
    if base_moves is None:
        base_moves = transitions.find(base)
    compared = baseline.compare(cells, moves, base, base_moves)
    fresh = compared.new_transitions
    # An empty comparison may come back without columns; treat it as "nothing new".
    fresh = fresh[fresh["kind"].isin(transitions.REGRESSIONS)] if "kind" in fresh.columns else empty
    worse = compared.changed[compared.changed["kind"].isin(transitions.REGRESSIONS)]
    return Verdict(
        cells=cells,
        new_transitions=fresh.reset_index(drop=True),
        worse_cells=worse.reset_index(drop=True),
        has_baseline=True,
    )


def markdown(found: Verdict, report_url: Optional[str] = None) -> str:
    """The step summary: counts per environment and mode, then what is new since the baseline."""
    from matrix.records import tables

    lines = ["## torch.export compatibility matrix", ""]
    environments = found.cells[["release", "variant", "python"]].drop_duplicates()
    lines.append("%d cells in %d environments." % (len(found.cells), len(environments)))
    if report_url:
        lines += ["", "Full report: %s" % report_url]
    lines.append("")
    counts = tables.summary(found.cells)
    if not counts.empty:
        # Status columns that are zero everywhere only widen the table.
        shown = [c for c in counts.columns if c not in STATUSES or counts[c].any()]
        counts = counts[shown].assign(pass_rate=counts["pass_rate"].map(_percent))
        lines += [_table(counts), ""]
    if not found.has_baseline:
        lines.append("No baseline report was found (first published run?): nothing to compare with yet.")
    elif not found.new_regressions:
        lines.append("**No new regressions** since the baseline.")
    else:
        count = found.new_regressions
        lines.append("### %d new regression%s since the baseline" % (count, "" if count == 1 else "s"))
        if len(found.new_transitions):
            moves = found.new_transitions
            stage = moves["stage"] if "stage" in moves.columns else [None] * len(moves)
            change = moves["status_before"].astype(str) + " → " + moves["status_after"].astype(str)
            rows = moves.assign(
                releases=moves["before"].astype(str) + " → " + moves["after"].astype(str),
                status=[
                    "%s, but %s stopped working" % (text, part) if kind == "stage-regression" else text
                    for text, kind, part in zip(change, moves["kind"], stage)
                ],
                error=[_error(t, m) for t, m in zip(moves["error_type"], moves["error_message"])],
            )[["case", "mode", "variant", "releases", "status", "error"]]
            lines += ["", "Between releases:", "", _table(rows.head(LISTED)), *_more(rows)]
        if len(found.worse_cells):
            worse = found.worse_cells
            rows = worse.assign(status=worse["status_baseline"].astype(str) + " → " + worse["status"].astype(str))
            rows = rows[["release", "variant", "python", "case", "mode", "status"]]
            lines += ["", "Worse than the same cell in the baseline:", "", _table(rows.head(LISTED)), *_more(rows)]
    return "\n".join(lines) + "\n"


def _table(frame: pd.DataFrame) -> str:
    def cell(value: Any) -> str:
        text = "" if value is None or (isinstance(value, float) and value != value) else str(value)
        return text.replace("|", "\\|").replace("\n", " ")

    header = [str(c) for c in frame.columns]
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False, name=None)]
    return "\n".join(out)


def _more(frame: pd.DataFrame) -> List[str]:
    return ["", "… and %d more (see the full report)" % (len(frame) - LISTED)] if len(frame) > LISTED else []


def _error(kind: Any, message: Any) -> str:
    parts = [str(v) for v in (kind, message) if isinstance(v, str) and v]
    return ": ".join(parts)[:160]


def _percent(value: Any) -> str:
    return "" if value is None or value != value else "%.0f%%" % (100 * value)


def configure_summary(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("report_dir", metavar="REPORT_DIR", help="the --out folder of `export-matrix report`")
    parser.add_argument("--baseline", metavar="DIR", help="an earlier report's folder (with cells.parquet)")
    parser.add_argument("--on-regression", choices=POLICIES, default="ignore",
                        help="fail: exit 1 on new regressions; issue/ignore: exit 0 (default ignore)")  # fmt: skip
    parser.add_argument("--report-url", help="link to the published report")
    parser.add_argument("--out", metavar="FILE", help="write the Markdown here instead of stdout")
    parser.add_argument("--issue-body", metavar="FILE", help="when there are new regressions, also write it here")
    parser.add_argument("--github-output", metavar="PATH", help="append new-regressions= and baseline= to this file")


@dataclass(frozen=True)
class SummaryOptions:
    """The options of ``python -m matrix.commands.ci summary``."""

    report_dir: str
    baseline: Optional[str] = None
    on_regression: str = "ignore"
    report_url: Optional[str] = None
    out: Optional[str] = None
    issue_body: Optional[str] = None
    github_output: Optional[str] = None


def run_summary(args: SummaryOptions) -> int:
    found = verdict(args.report_dir, args.baseline)
    text = markdown(found, args.report_url)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    if args.issue_body and found.new_regressions:
        with open(args.issue_body, "w", encoding="utf-8") as f:
            f.write(text)
    if args.github_output:
        with open(args.github_output, "a", encoding="utf-8") as f:
            f.write("new-regressions=%d\nbaseline=%s\n" % (found.new_regressions, str(found.has_baseline).lower()))
    if found.new_regressions and args.on_regression == "fail":
        print(
            "matrix.commands.ci summary: %d new regression(s) since the baseline" % found.new_regressions,
            file=sys.stderr,
        )
        return FAILED
    return 0

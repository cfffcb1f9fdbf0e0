"""The CI side of the matrix: the job plan from nox's session list, and the run's summary.

``python -m matrix.ci plan`` turns ``nox -l --json`` into a GitHub Actions job matrix,
filtered by the workflow's inputs. ``python -m matrix.ci summary REPORT_DIR`` writes the
run's Markdown summary and decides whether the run has new regressions since the
published baseline. Both are plain functions here so the workflow stays a thin shell.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union

from matrix.contract.errors import FAILED, UserError, report_errors
from matrix.contract.options import from_namespace
from matrix.contract.schema import STATUSES

if TYPE_CHECKING:
    import pandas as pd

SESSION = "run"  # the nox session parametrized over (torch, variant)
SELECTION_VARIABLE = "EXPORT_MATRIX_TORCH"  # the noxfile's choice of releases to list
ALL = "all"
CUDA_VARIANT = re.compile(r"cu\d+$")
ARTIFACT_UNSAFE = re.compile(r'[":<>|*?\\/\r\n]+')
POLICIES = ("fail", "issue", "ignore")
LISTED = 50  # rows per list in the step summary; GitHub caps a step summary at 1 MiB

# One label, or several that a runner must all carry (``self-hosted, gpu``).
Runner = Union[str, Tuple[str, ...]]


class PlanError(UserError):
    """Unusable session list or a filter that selects nothing; the message says which."""


@dataclass(frozen=True)
class Session:
    """One nox ``run`` session: a (torch release, wheel variant) environment."""

    name: str
    torch: str
    variant: str
    tags: Tuple[str, ...] = ()

    @property
    def gpu(self) -> bool:
        return "cuda" in self.tags or bool(CUDA_VARIANT.match(self.variant))


@dataclass(frozen=True)
class Job:
    """One entry of the job matrix."""

    session: str
    torch: str
    variant: str
    gpu: bool
    runner: Runner
    artifact: str

    def to_json(self) -> Dict[str, Any]:
        return {
            "session": self.session,
            "torch": self.torch,
            "variant": self.variant,
            "gpu": self.gpu,
            "runner": self.runner if isinstance(self.runner, str) else list(self.runner),
            "artifact": self.artifact,
        }


def parse_sessions(text: str, source: str = "nox -l --json") -> List[Session]:
    """The ``run`` sessions in nox's JSON session list."""
    try:
        listed = json.loads(text)
    except ValueError as exc:
        raise PlanError("%s: not JSON (%s); expected the output of `nox -l --json`" % (source, exc))
    if not isinstance(listed, list):
        raise PlanError("%s: expected a JSON list of sessions, got %s" % (source, type(listed).__name__))
    sessions = []
    for entry in listed:
        if not isinstance(entry, dict) or entry.get("name") != SESSION:
            continue
        spec = entry.get("call_spec") or {}
        if "torch" not in spec or "variant" not in spec:
            raise PlanError("%s: session %r has no torch/variant parameters" % (source, entry.get("session")))
        sessions.append(
            Session(
                name=str(entry["session"]),
                torch=str(spec["torch"]),
                variant=str(spec["variant"]),
                tags=tuple(str(tag) for tag in entry.get("tags") or ()),
            )
        )
    if not sessions:
        raise PlanError("%s: lists no %r session; is this the project's noxfile?" % (source, SESSION))
    return sessions


def tokens(text: Optional[str]) -> List[str]:
    """Filter words from a workflow input: separated by commas or whitespace; empty means all."""
    return [token for token in re.split(r"[,\s]+", text or "") if token]


def _matches(token: str, value: str, tags: Sequence[str]) -> bool:
    # A release filter may name a nox tag ("latest"), a version ("2.4.1"), a glob ("2.4.*")
    # or a minor series ("2.4"); a variant filter a tag ("cuda") or a variant glob ("cu12*").
    return (
        token == ALL or token in tags or fnmatch.fnmatchcase(value, token) or fnmatch.fnmatchcase(value, token + ".*")
    )


def select(sessions: Sequence[Session], releases: Sequence[str], variants: Sequence[str]) -> List[Session]:
    """The sessions chosen by release and variant filters; a filter word that matches nothing is an error."""
    for words, field, what in ((releases, "torch", "release"), (variants, "variant", "variant")):
        for word in words:
            if not any(_matches(word, getattr(s, field), s.tags) for s in sessions):
                known = sorted({getattr(s, field) for s in sessions} | {t for s in sessions for t in s.tags})
                raise PlanError("%s filter %r matches no session; known: %s" % (what, word, ", ".join(known)))
    return [
        s
        for s in sessions
        if (not releases or any(_matches(w, s.torch, s.tags) for w in releases))
        and (not variants or any(_matches(w, s.variant, s.tags) for w in variants))
    ]


def runner_label(label: str) -> Runner:
    """A runner label, or a list of labels when given comma-separated (``self-hosted,gpu``)."""
    parts = tokens(label)
    return parts[0] if len(parts) == 1 else tuple(parts)


def artifact_name(session: Session) -> str:
    return ARTIFACT_UNSAFE.sub("_", "records-torch-%s-%s" % (session.torch, session.variant))


def plan(sessions: Sequence[Session], cpu_runner: str, gpu_runner: str) -> Tuple[List[Job], List[Session]]:
    """Jobs for the chosen sessions, and the CUDA sessions left out because no GPU runner is configured."""
    jobs: List[Job] = []
    skipped: List[Session] = []
    for session in sorted(sessions, key=lambda s: s.name):
        if session.gpu and not gpu_runner.strip():
            skipped.append(session)
            continue
        label = gpu_runner if session.gpu else cpu_runner
        jobs.append(
            Job(
                session=session.name,
                torch=session.torch,
                variant=session.variant,
                gpu=session.gpu,
                runner=runner_label(label),
                artifact=artifact_name(session),
            )
        )
    return jobs, skipped


def list_sessions(noxfile: str) -> str:
    """Ask nox for its session list (``run`` is not a default session, so name it).

    The project's noxfile lists only a quick selection of releases unless
    ``EXPORT_MATRIX_TORCH`` says otherwise; the plan filters the full list itself.
    """
    command = [sys.executable, "-m", "nox", "--noxfile", noxfile, "-l", "--json", "-s", SESSION]
    env = dict(os.environ)
    env.setdefault(SELECTION_VARIABLE, ALL)
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise PlanError("`%s` failed (exit %d): %s" % (" ".join(command), done.returncode, done.stderr.strip()))
    return done.stdout


def _configure_plan(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sessions", metavar="FILE", help="saved `nox -l --json` output ('-': stdin); default: run nox"
    )
    parser.add_argument("--noxfile", default="noxfile.py", help="noxfile to list when --sessions is not given")
    parser.add_argument(
        "--releases", default=ALL, help="tags, versions or globs: 'latest', '2.4.1 2.5.*' (default all)"
    )
    parser.add_argument("--variants", default=ALL, help="tags or variant globs: 'cpu', 'pypi,cu124' (default all)")
    parser.add_argument("--cpu-runner", default="ubuntu-latest", help="runner label for CPU variants")
    parser.add_argument("--gpu-runner", default="", help="runner label(s) for CUDA variants; empty: skip them")
    parser.add_argument("--github-output", metavar="PATH", help="also append matrix= and count= to this file")


@dataclass(frozen=True)
class PlanOptions:
    """The options of ``python -m matrix.ci plan``."""

    sessions: Optional[str] = None
    noxfile: str = "noxfile.py"
    releases: str = ALL
    variants: str = ALL
    cpu_runner: str = "ubuntu-latest"
    gpu_runner: str = ""
    github_output: Optional[str] = None

    @classmethod
    def from_args(cls, namespace: argparse.Namespace) -> PlanOptions:
        return from_namespace(cls, namespace)


def run_plan(args: PlanOptions) -> int:
    if args.sessions == "-":
        text, source = sys.stdin.read(), "stdin"
    elif args.sessions:
        with open(args.sessions, encoding="utf-8") as f:
            text, source = f.read(), args.sessions
    else:
        text, source = list_sessions(args.noxfile), "nox -l --json"
    chosen = select(parse_sessions(text, source), tokens(args.releases), tokens(args.variants))
    jobs, skipped = plan(chosen, args.cpu_runner, args.gpu_runner)
    for session in skipped:
        print("matrix.ci plan: note: %s needs a GPU runner; none configured, skipped" % session.name, file=sys.stderr)
    matrix = json.dumps({"include": [job.to_json() for job in jobs]}, sort_keys=True)
    print(matrix)
    if args.github_output:
        with open(args.github_output, "a", encoding="utf-8") as f:
            f.write("matrix=%s\ncount=%d\n" % (matrix, len(jobs)))
    return 0


# --- the run's summary -------------------------------------------------------------------------


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
        return "\n".join(lines) + "\n"
    if not found.new_regressions:
        lines.append("**No new regressions** since the baseline.")
        return "\n".join(lines) + "\n"
    lines.append("### %d new regression%s since the baseline" % (found.new_regressions, _s(found.new_regressions)))
    if len(found.new_transitions):
        moves = found.new_transitions
        stage = moves["stage"] if "stage" in moves.columns else pd.Series([None] * len(moves), index=moves.index)
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


def _s(count: int) -> str:
    return "" if count == 1 else "s"


def _configure_summary(parser: argparse.ArgumentParser) -> None:
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
    """The options of ``python -m matrix.ci summary``."""

    report_dir: str
    baseline: Optional[str] = None
    on_regression: str = "ignore"
    report_url: Optional[str] = None
    out: Optional[str] = None
    issue_body: Optional[str] = None
    github_output: Optional[str] = None

    @classmethod
    def from_args(cls, namespace: argparse.Namespace) -> SummaryOptions:
        return from_namespace(cls, namespace)


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
        print("matrix.ci summary: %d new regression(s) since the baseline" % found.new_regressions, file=sys.stderr)
        return FAILED
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m matrix.ci", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _configure_plan(commands.add_parser("plan", help="print the job matrix for the chosen releases and variants"))
    _configure_summary(commands.add_parser("summary", help="write the run's Markdown summary; judge new regressions"))
    args = parser.parse_args(argv)
    prog = "matrix.ci " + args.command
    if args.command == "plan":
        return report_errors(prog, lambda: run_plan(PlanOptions.from_args(args)))
    return report_errors(prog, lambda: run_summary(SummaryOptions.from_args(args)))


if __name__ == "__main__":
    sys.exit(main())

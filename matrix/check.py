"""``export-matrix check``: run one case file against several torch releases and print a table.

Each release gets its environment (installed once, then reused), the worker runs the
case there in the chosen modes, and the records become one row per release and mode:
status, the error's first line, the graph hash and the export time.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from .envs import environments, releases
from .errors import UserError
from .options import add_jobs, from_namespace, positive_seconds
from .probe import read_folder, run_case, validate_case
from .schema import MODES
from .worker import resources

CURRENT = "current"
ERROR_WIDTH = 90


class CheckError(UserError):
    """Bad input to check or bisect (a missing case file, an unknown release); the message says which."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("case", metavar="CASE_FILE", help="a case module (see cases/ for the format)")
    parser.add_argument(
        "--torch",
        nargs="+",
        default=["quick"],
        metavar="RELEASE",
        help="releases: 2.4 (its latest patch), 2.4.1, 2.4.1+cpu, latest, quick, all, or current"
        " (the torch of this interpreter, nothing installed); default: quick",
    )
    parser.add_argument(
        "--variant", default=None, help="wheel variant for releases given without a +tag (default pypi)"
    )
    parser.add_argument(
        "--mode",
        choices=("strict", "non-strict", "both"),
        default="both",
        help="export with strict=True, strict=False, or both (default both)",
    )
    parser.add_argument(
        "--python",
        default=None,
        metavar="X.Y",
        help="Python of the environments (default: this one where the release supports it)",
    )
    parser.add_argument("--timeout", type=float, default=300.0, metavar="S", help="seconds per cell (default 300)")
    parser.add_argument("--out", default=None, metavar="DIR", help="keep the records here (default: discard them)")
    parser.add_argument(
        "--format",
        choices=("text", "markdown", "json"),
        default="text",
        help="a table for the terminal, a Markdown table, or JSON rows (default text)",
    )
    parser.add_argument("--reinstall", action="store_true", help="rebuild the environments even if they exist")
    add_jobs(parser, "releases checked at once (default: the usable cores, as memory allows)")
    parser.add_argument("--verbose", "-v", action="store_true", help="show the worker's output")  # fmt: skip


@dataclass(frozen=True)
class Target:
    """Where to run: a build to install, or (build None) the running interpreter."""

    build: Optional[releases.Build]
    python: Optional[str] = None

    @property
    def label(self) -> str:
        return self.build.torch_version if self.build else CURRENT

    @property
    def spec(self) -> environments.Spec:
        assert self.build is not None and self.python is not None
        return environments.Spec(self.build, self.python)


@dataclass(frozen=True)
class Row:
    """One line of the table: a release and mode, and what happened."""

    torch: str
    variant: str
    python: str
    mode: str
    status: str
    graph_hash: Optional[str] = None
    export_s: Optional[float] = None
    error: Optional[str] = None
    diagnosis: Tuple[Dict[str, Any], ...] = ()  # draft_export's problems, for a failed export

    def __post_init__(self) -> None:
        object.__setattr__(self, "diagnosis", tuple(self.diagnosis))


def modes_of(mode: str) -> List[str]:
    return list(MODES) if mode == "both" else [mode]


def targets(words: Sequence[str], variant: Optional[str], python: Optional[str]) -> List[Target]:
    """The targets for ``--torch`` words, in the order given."""
    matrix = releases.default_matrix()
    found: List[Target] = []
    for word in words:
        if word == CURRENT:
            if importlib.util.find_spec("torch") is None:
                raise CheckError(
                    "--torch current: this interpreter (%s) has no torch; install it here, or name releases"
                    " to check in their own environments, e.g. --torch 2.5 2.8" % sys.executable
                )
            found.append(Target(None))
            continue
        try:
            builds = matrix.select([word], variant)
        except releases.ReleaseError as exc:
            raise CheckError("--torch %s: %s" % (word, exc))
        for build in builds:
            target = Target(build, python or environments.default_python(build.release))
            if target not in found:
                found.append(target)
    return found


def short_error(error_type: Any, message: Any) -> Optional[str]:
    kind = str(error_type).rsplit(".", 1)[-1] if error_type else ""
    text = ": ".join(part for part in (kind, str(message or "").strip()) if part)
    if not text:
        return None
    return text if len(text) <= ERROR_WIDTH else text[: ERROR_WIDTH - 1] + "…"


def rows_for(found: Iterable[Dict[str, Any]], case: str, modes: Sequence[str], label: str) -> List[Row]:
    """One row per mode from one environment's records: the last cell record wins, an env-error fills in."""
    cells: Dict[str, Dict[str, Any]] = {}
    env_error: Optional[Dict[str, Any]] = None
    for record in found:
        if record.get("kind") == "cell" and record.get("case") == case and record.get("mode") in modes:
            cells[record["mode"]] = record
        elif record.get("kind") == "env-error":
            env_error = record
    rows = []
    for mode in modes:
        cell = cells.get(mode)
        if cell is not None:
            rows.append(
                Row(
                    torch=cell["torch_version"],
                    variant=cell.get("variant") or "",
                    python=cell.get("python") or "",
                    mode=mode,
                    status=cell["status"],
                    graph_hash=cell.get("graph_hash"),
                    export_s=cell.get("export_s"),
                    error=short_error(cell.get("error_type"), cell.get("error_message")),
                    diagnosis=tuple(p for p in cell.get("diagnosis") or () if isinstance(p, dict)),
                )
            )
        elif env_error is not None:
            rows.append(
                Row(
                    torch=env_error.get("torch_version") or label,
                    variant=env_error.get("variant") or "",
                    python=env_error.get("python") or "",
                    mode=mode,
                    status="env-error",
                    error=short_error(None, env_error.get("error_message")),
                )
            )
        else:
            rows.append(Row(torch=label, variant="", python="", mode=mode, status="no-record"))
    return rows


HEADERS = ("torch", "variant", "python", "mode", "status", "graph hash", "export s", "error")


def format_rows(rows: Sequence[Row], fmt: str = "text") -> str:
    """The table as plain text, Markdown or JSON."""
    if fmt == "json":
        return json.dumps([asdict(r) for r in rows], indent=1, sort_keys=True)
    from tabulate import tabulate

    table = [
        (
            r.torch,
            r.variant,
            r.python,
            r.mode,
            r.status,
            r.graph_hash or "",
            "" if r.export_s is None else "%.2f" % r.export_s,
            r.error or "",
        )
        for r in rows
    ]
    text = tabulate(table, headers=HEADERS, tablefmt="github" if fmt == "markdown" else "simple", disable_numparse=True)
    notes = diagnosis_lines(rows)
    return text + ("\n\n" + "\n".join(notes) if notes else "")


def diagnosis_lines(rows: Sequence[Row]) -> List[str]:
    """Under the table: per failing row, one line per problem kind that draft_export found."""
    lines: List[str] = []
    for row in rows:
        if not row.diagnosis:
            continue
        lines.append("draft_export on %s %s:" % (row.torch, row.mode))
        kinds: Dict[str, List[Dict[str, Any]]] = {}
        for problem in row.diagnosis:
            kinds.setdefault(str(problem.get("kind")), []).append(problem)
        for kind, problems in sorted(kinds.items()):
            first = problems[0]
            count = sum(int(p.get("count") or 1) for p in problems)
            where = " at %s" % first["frame"] if first.get("frame") else ""
            more = " (and %d more)" % (len(problems) - 1) if len(problems) > 1 else ""
            lines.append("  %s ×%d: %s%s%s" % (kind, count, first.get("message"), where, more))
    return lines


def check_target(
    target: Target,
    case_file: str,
    case: str,
    modes: Sequence[str],
    out: Path,
    timeout: float,
    reinstall: bool = False,
    verbose: bool = False,
    jobs: int = 0,
) -> List[Row]:
    """Install (or reuse) the target's environment, run the case there, and read back the rows."""
    variant = None
    if target.build is None:
        folder = out / CURRENT
        command, env = environments.current_worker()
    else:
        folder = out / target.spec.name
        environment = environments.prepare_or_record(target.spec, folder, force=reinstall)
        if environment is None:
            return rows_for(read_folder(folder), case, modes, target.label)
        command, env = environment.worker_command(), environment.worker_env()
        variant = target.build.variant.name
    problem = run_case(command, env, case_file, modes, folder, timeout, verbose, variant, jobs)
    rows = rows_for(read_folder(folder), case, modes, target.label)
    if problem:
        rows = [
            r if r.status != "no-record" else Row(r.torch, r.variant, r.python, r.mode, "error", error=problem)
            for r in rows
        ]
    return rows


@dataclass(frozen=True)
class CheckOptions:
    """The options of ``export-matrix check``."""

    case: str
    torch: Tuple[str, ...] = ("quick",)
    variant: Optional[str] = None
    mode: str = "both"
    python: Optional[str] = None
    timeout: float = 300.0
    out: Optional[str] = None
    format: str = "text"
    reinstall: bool = False
    verbose: bool = False
    jobs: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "torch", tuple(self.torch))
        if self.jobs < 0:
            raise CheckError("--jobs %d: give a number of releases above 0, or 0 for the default" % self.jobs)
        object.__setattr__(self, "timeout", positive_seconds("--timeout", self.timeout))

    @classmethod
    def from_args(cls, namespace: argparse.Namespace) -> CheckOptions:
        return from_namespace(cls, namespace)


OPTIONS = CheckOptions


# What one release's worker may take while it runs one case: torch and a small export.
MB_PER_RELEASE = 1500


def main(options: CheckOptions) -> int:
    case = validate_case(options.case)
    chosen = targets(options.torch, options.variant, options.python)
    modes = modes_of(options.mode)
    workers = min(len(chosen), resources.jobs(options.jobs or None, MB_PER_RELEASE))
    with tempfile.TemporaryDirectory(prefix="export-matrix-check-") as scratch:
        out = Path(options.out) if options.out else Path(scratch)
        print(
            "checking %s in %s on %d release(s), %d at a time" % (case, "/".join(modes), len(chosen), workers),
            file=sys.stderr,
            flush=True,
        )

        # Releases side by side share the cores: each worker runs its cells on its share of them.
        cells_at_once = max(1, resources.usable_cores() // workers)

        def one(target: Target) -> List[Row]:
            return check_target(
                target, options.case, case, modes, out, options.timeout, options.reinstall, options.verbose,
                cells_at_once,
            )  # fmt: skip

        found: Dict[str, List[Row]] = {}
        with ThreadPoolExecutor(max_workers=workers) as pool:
            running = {pool.submit(one, target): target for target in chosen}
            for done in as_completed(running):
                target = running[done]
                found[target.label] = done.result()
                for row in found[target.label]:  # as they arrive; the table below is in release order
                    print("  %-14s %-10s %s" % (row.torch, row.mode, row.status), file=sys.stderr, flush=True)
    rows = [row for target in chosen for row in found[target.label]]
    print(format_rows(rows, options.format))
    verdict = passing_summary(rows)
    if verdict and options.format == "text":
        print(verdict)
    return 0


def passing_summary(rows: Sequence[Row]) -> Optional[str]:
    """For a case that fails somewhere: where it passes, and from which release on it keeps passing.

    Releases are taken in the order of the rows (the order asked, oldest first for the
    usual selections); a release passes when every mode asked passes there.
    """
    statuses: Dict[str, List[str]] = {}
    for row in rows:
        statuses.setdefault(row.torch, []).append(row.status)
    labels = list(statuses)
    passing = [label for label in labels if all(status == "pass" for status in statuses[label])]
    if len(passing) == len(labels):
        return None
    if not passing:
        return "passes on none of the releases checked (%s)" % ", ".join(labels)
    text = "passes on %s" % ", ".join(passing)
    if labels[-1] not in passing:
        return text + "; fails on the newest release checked (%s)" % labels[-1]
    since = labels[-1]
    for label in reversed(labels):
        if label not in passing:
            break
        since = label
    return text + "; keeps passing from %s on" % since

"""``export-matrix check``: run case files against several torch releases and print a table per case.

Each release gets its environment (installed once, then reused), one worker runs every case
there in the chosen modes (one per dependency set where cases name packages), and the records
become one row per release and mode: status, the error's first line, the graph hash and the
export time; with ``--stages ...,aoti``, the AOTInductor stage's outcome and its compile and load
times too. A folder stands for the case files under it; with several cases, each gets its table
and ``--fail-on`` judges them all.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from .contract import dependencies, resources, stages
from .contract.case import CaseError, CaseInfo, discover
from .contract.errors import UserError
from .contract.options import (
    DEFAULT_AOTI_TIMEOUT_S,
    DEFAULT_TIMEOUT_S,
    FAIL_ON,
    add_jobs,
    add_mode,
    add_timeout,
    add_variant,
    add_with,
    from_namespace,
    positive_seconds,
    requirements,
)
from .contract.requests import STAGES
from .contract.schema import MODES, STAGE_OK, STATUSES, NoCell, Status
from .envs import environments, releases, sets
from .probe import Probed, cases_request, probe_cases, validate_case
from .records.channel import is_candidate

CURRENT = "current"
ERROR_WIDTH = 90


class CheckError(UserError):
    """Bad input to check or bisect (a missing case file, an unknown release); the message says which."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "cases",
        nargs="+",
        metavar="PATH",
        help="case modules (see cases/ for the format), or folders of them: every *.py under a folder but those"
        " whose name, or a folder's on the way, starts with _ or .",
    )
    parser.add_argument(
        "--torch",
        nargs="+",
        default=["quick"],
        metavar="RELEASE",
        help="releases: 2.4 (its latest patch), 2.4.1, 2.4.1+cpu, latest, quick, all, or current"
        " (the torch of this interpreter, nothing installed); default: quick",
    )
    add_variant(parser, "wheel variant for releases given without a +tag (default pypi)")
    add_mode(parser)
    add_with(parser)
    parser.add_argument(
        "--python",
        default=None,
        metavar="X.Y",
        help="Python of the environments (default: this one where the release supports it)",
    )
    add_timeout(parser, "cell")
    parser.add_argument(
        "--stages",
        default=",".join(STAGES),
        help="stages after export, as `run --stages` takes them; check,aoti also compiles each passing cell's"
        " program with AOTInductor (a C++ compiler, g++, is needed), loads the package in a fresh process and"
        " compares it with eager, and the table shows the outcome and the compile and load times (default: %s)"
        % ",".join(STAGES),
    )
    parser.add_argument(
        "--aoti-timeout",
        type=float,
        default=DEFAULT_AOTI_TIMEOUT_S,
        metavar="S",
        help="seconds the aoti stage may take per cell, on top of --timeout (default %g)" % DEFAULT_AOTI_TIMEOUT_S,
    )
    parser.add_argument(
        "--device",
        choices=("cpu", "cuda"),
        default="cpu",
        help="where the cases run, as `run --device` (default cpu); cuda needs a CUDA build and a GPU",
    )
    parser.add_argument("--out", default=None, metavar="DIR", help="keep the records here (default: discard them)")
    parser.add_argument(
        "--format",
        choices=("text", "markdown", "json"),
        default="text",
        help="a table for the terminal, a Markdown table, or JSON rows (default text)",
    )
    parser.add_argument("--reinstall", action="store_true", help="rebuild the environments even if they exist")
    add_jobs(parser, "releases checked at once (default: the usable cores, as memory allows)")
    parser.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="never",
        help="exit 1 when a candidate (a nightly or release candidate among --torch) regresses against the newest"
        " release checked (regression), when any cell fails (failing), or never (default): for CI",
    )
    parser.add_argument("--verbose", "-v", action="store_true", help="show the worker's output")  # fmt: skip


@dataclass(frozen=True)
class Target:
    """Where to run: a build to install, or (build None) the running interpreter."""

    build: Optional[releases.Build]
    python: Optional[str] = None
    dependency_set: str = ""  # the case's PEP 723 dependencies and every --with

    @property
    def label(self) -> str:
        return self.build.torch_version if self.build else CURRENT

    @property
    def spec(self) -> environments.Spec:
        assert self.build is not None and self.python is not None
        return environments.Spec(self.build, self.python, self.dependency_set)


# What a row's status column can hold: a cell's status, or why there is no cell.
Shown = Union[Status, NoCell]


def shown(status: str) -> Shown:
    """A status text as the schema value it names (ValueError for one the schema does not know)."""
    return Status(status) if status in STATUSES else NoCell(status)


@dataclass(frozen=True)
class Row:
    """One line of the table: a release and mode, and what happened."""

    torch: str
    variant: str
    python: str
    mode: str
    status: Shown
    graph_hash: Optional[str] = None
    export_s: Optional[float] = None
    error: Optional[str] = None
    diagnosis: Tuple[Dict[str, Any], ...] = ()  # draft_export's problems, for a failed export
    packages: str = ""  # the versions of the case's dependencies in this environment, e.g. "transformers 4.57.6"
    aoti: Dict[str, Any] = field(default_factory=dict)  # the aoti_* fields of a cell whose run selected the stage

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", shown(self.status))
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


def packages_of(probed: Probed, wanted: Sequence[str]) -> str:
    """The versions the environment has of the packages a case names: "transformers 4.57.6, timm 1.0.20"."""
    added = (probed.environment or {}).get("added_packages") or {}
    names = list(dict.fromkeys(dependencies.name_of(r) for r in wanted))  # a case's name and a --with pin: once
    return ", ".join("%s %s" % (name, added[name]) for name in names if name and name in added)


def rows_for(probed: Probed, modes: Sequence[str], label: str, wanted: Sequence[str] = ()) -> List[Row]:
    """One row per mode from what the case left in one environment: its cell, else why there is none."""
    rows = []
    packages = packages_of(probed, wanted)
    for mode in modes:
        cell = probed.cell(mode)
        if cell is not None:
            if cell.get("status") not in STATUSES:
                raise CheckError(
                    "%s: a cell record with status %r, which this torch-export-matrix does not know;"
                    " check into an empty --out folder" % (cell.get("cell_id") or label, cell.get("status"))
                )
            rows.append(
                Row(
                    torch=cell["torch_version"],
                    variant=cell.get("variant") or "",
                    python=cell.get("python") or "",
                    mode=mode,
                    status=Status(cell["status"]),
                    graph_hash=cell.get("graph_hash"),
                    export_s=cell.get("export_s"),
                    error=short_error(cell.get("error_type"), cell.get("error_message")),
                    diagnosis=tuple(p for p in cell.get("diagnosis") or () if isinstance(p, dict)),
                    packages=packages,
                    aoti={key: value for key, value in cell.items() if key.startswith("aoti_")},
                )
            )
        elif probed.env_error is not None:
            env_error = probed.env_error
            rows.append(
                Row(
                    torch=env_error.get("torch_version") or label,
                    variant=env_error.get("variant") or "",
                    python=env_error.get("python") or "",
                    mode=mode,
                    status=NoCell.ENV_ERROR,
                    error=short_error(None, env_error.get("error_message")),
                )
            )
        else:
            rows.append(
                Row(torch=label, variant="", python="", mode=mode, status=NoCell.NO_RECORD, error=probed.problem)
            )
    return rows


HEADERS = ("torch", "variant", "python", "mode", "status", "graph hash", "export s", "error")
# The columns a table gains where the aoti stage ran: its outcome, the compile's and the fresh load's seconds.
AOTI_HEADERS = ("aoti", "compile s", "load s")


def seconds(value: Any) -> str:
    return "%.2f" % value if isinstance(value, (int, float)) and not isinstance(value, bool) else ""


def aoti_cells(row: Row) -> Tuple[str, str, str]:
    """A row's aoti columns: the stage's outcome, the compile's seconds and the fresh load's."""
    return (
        str(row.aoti.get("aoti_status") or ""),
        seconds(row.aoti.get("aoti_compile_s")),
        seconds(row.aoti.get("aoti_load_s")),
    )


def error_text(row: Row) -> str:
    """The error column: the cell's error, else what failed in the aoti stage."""
    outcome = row.aoti.get("aoti_status")
    if row.error or not outcome or outcome == STAGE_OK:
        return row.error or ""
    return "aoti " + (short_error(row.aoti.get("aoti_error_type"), row.aoti.get("aoti_error")) or str(outcome))


def format_rows(rows: Sequence[Row], fmt: str = "text") -> str:
    """The table as plain text, Markdown or JSON."""
    if fmt == "json":
        return json.dumps([asdict(r) for r in rows], indent=1, sort_keys=True)
    from tabulate import tabulate

    aoti = any(r.aoti for r in rows)
    table = [
        (
            r.torch,
            r.variant,
            r.python,
            r.mode,
            r.status,
            r.graph_hash or "",
            "" if r.export_s is None else "%.2f" % r.export_s,
            *(aoti_cells(r) if aoti else ()),
            error_text(r),
        )
        for r in rows
    ]
    headers = HEADERS[:-1] + (AOTI_HEADERS if aoti else ()) + HEADERS[-1:]
    text = tabulate(table, headers=headers, tablefmt="github" if fmt == "markdown" else "simple", disable_numparse=True)
    notes = package_lines(rows) + diagnosis_lines(rows)
    return text + ("\n\n" + "\n".join(notes) if notes else "")


def package_lines(rows: Sequence[Row]) -> List[str]:
    """Under the table: the versions of the case's dependencies that each release resolved."""
    seen: Dict[str, str] = {}
    for row in rows:
        if row.packages and row.torch not in seen:
            seen[row.torch] = row.packages
    return ["with torch %s: %s" % (torch, packages) for torch, packages in seen.items()]


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
    infos: Sequence[CaseInfo],
    modes: Sequence[str],
    out: Path,
    timeout: float,
    reinstall: bool = False,
    verbose: bool = False,
    jobs: int = 0,
    added: Sequence[str] = (),
    stages: Sequence[str] = STAGES,
    aoti_timeout: float = DEFAULT_AOTI_TIMEOUT_S,
    device: str = "cpu",
) -> Dict[str, List[Row]]:
    """Install (or reuse) the target's environment, run the cases there in one worker, and read back each
    case's rows, by its name. The cases share the target's dependency set (``sets.group``)."""
    spec = None if target.build is None else target.spec
    folder = out / (CURRENT if spec is None else spec.name)
    request = cases_request([info.path for info in infos], modes, folder, timeout, verbose, jobs, added)
    request = replace(request, stages=tuple(stages), aoti_timeout=aoti_timeout, device=device)
    probed = probe_cases(spec, infos, request, reinstall, verbose)
    return {info.name: rows_for(probed[info.name], modes, target.label, _named(info, added)) for info in infos}


def _named(info: CaseInfo, added: Sequence[str]) -> Tuple[str, ...]:
    """What a case names beside torch: its PEP 723 dependencies and every ``--with``."""
    return dependencies.key_requirements(dependencies.set_key((*info.dependencies, *added)))


@dataclass(frozen=True)
class CheckOptions:
    """The options of ``export-matrix check``."""

    cases: Tuple[str, ...] = ()  # case files and folders
    torch: Tuple[str, ...] = ("quick",)
    variant: Optional[str] = None
    mode: str = "both"
    python: Optional[str] = None
    timeout: float = DEFAULT_TIMEOUT_S
    out: Optional[str] = None
    format: str = "text"
    reinstall: bool = False
    verbose: bool = False
    jobs: int = 0
    with_requirements: Tuple[str, ...] = ()
    stages: Tuple[str, ...] = STAGES  # "check,aoti" is read as run reads it
    aoti_timeout: float = DEFAULT_AOTI_TIMEOUT_S
    device: str = "cpu"
    fail_on: str = "never"  # candidate.FAIL_ON
    case: str = ""  # one case file, as callers from before several paths name it: the same as cases=(case,)

    def __post_init__(self) -> None:
        paths = tuple(self.cases) + ((self.case,) if self.case else ())
        if not paths:
            raise CheckError("name a case file or a folder of case files")
        object.__setattr__(self, "cases", paths)
        object.__setattr__(self, "torch", tuple(self.torch))
        object.__setattr__(self, "stages", stages.parse(self.stages))
        wrong = stages.unknown(self.stages)  # as run reads --stages
        if wrong:
            raise CheckError(wrong)
        object.__setattr__(self, "aoti_timeout", positive_seconds("--aoti-timeout", self.aoti_timeout))
        object.__setattr__(self, "with_requirements", requirements("--with", self.with_requirements))
        if self.jobs < 0:
            raise CheckError("--jobs %d: give a number of releases above 0, or 0 for the default" % self.jobs)
        object.__setattr__(self, "timeout", positive_seconds("--timeout", self.timeout))

    @classmethod
    def from_args(cls, namespace: argparse.Namespace) -> CheckOptions:
        return from_namespace(cls, namespace)


OPTIONS = CheckOptions


# What one release's worker may take while it runs the cases: torch and small exports.
MB_PER_RELEASE = 1500


def case_files(paths: Sequence[str]) -> List[CaseInfo]:
    """The cases that ``paths`` name, each validated before anything is installed: a file is one case, a folder
    the case files under it as ``run --cases`` finds them, in name order; a case named twice counts once."""
    found: Dict[str, CaseInfo] = {}
    for path in paths:
        if Path(path).is_dir():
            try:
                files = [info.path for info in discover([path])]
            except CaseError as exc:
                raise CheckError(str(exc))
            if not files:
                raise CheckError("%s: a folder with no case file (*.py not starting with _ or .)" % path)
        else:
            files = [path]
        for file in files:
            info = validate_case(file)
            other = found.get(info.name)
            if other is None:
                found[info.name] = info
            elif Path(other.path).resolve() != Path(info.path).resolve():
                # A cell is named after its case's file: two files of one name would share their cells.
                raise CheckError(
                    "%s and %s: two case files named %s; check them in separate commands"
                    % (other.path, info.path, info.name)
                )
    return list(found.values())


def main(options: CheckOptions) -> int:
    cases = case_files(options.cases)
    chosen = targets(options.torch, options.variant, options.python)
    several = len(cases) > 1
    judged: Tuple[Any, ...] = ()  # candidate.Verdict, of the last case
    with tempfile.TemporaryDirectory(prefix="export-matrix-check-") as scratch:
        checked = check_cases(cases, chosen, options, Path(options.out) if options.out else Path(scratch))
    for number, (info, rows) in enumerate(checked):
        if options.format != "json":
            if several:
                print(("\n" if number else "") + heading(info, options.format))
            print(format_rows(rows, options.format))
            verdict = passing_summary(rows)
            if verdict and options.format == "text":
                print(verdict)
        judged = judge([(info, rows)], options.fail_on)
        for one_verdict in judged:
            print(candidate_summary(one_verdict), file=sys.stderr if options.format == "json" else sys.stdout)
    if several:
        judged = judge(checked, options.fail_on)
    if options.format == "json":
        print(format_rows(checked[0][1], "json") if not several else json_by_case(checked))
    elif several:
        print("\n" + cases_summary(checked))
        for one_verdict in judged:
            print(candidate_summary(one_verdict, by_case=True))
    if options.format != "json":
        answer = upgrade_summary(checked, options.format)
        if answer:
            print("\n" + answer)
    if options.fail_on == "never":
        return 0
    from .records import candidate  # pandas: only where a candidate is judged

    why = candidate.should_fail(options.fail_on, candidate.failing(cell_tables(checked)), judged)
    if why is not None:
        print("--fail-on %s: %s" % (options.fail_on, why), file=sys.stderr)
        return 1
    return 0


def judge(checked: Sequence[Tuple[CaseInfo, Sequence[Row]]], fail_on: str) -> Tuple[Any, ...]:
    """Each candidate among the rows (a nightly, a release candidate) against the newest release checked:
    ``candidate.Verdict``s; none judged where there is no candidate and ``--fail-on`` is never."""
    if fail_on == "never" and not any(is_candidate(r.torch, r.variant) for _, rows in checked for r in rows):
        return ()
    from .records import candidate  # pandas: only where a candidate is judged

    return candidate.judge(cell_tables(checked))


def groups(target: Target, cases: Sequence[CaseInfo], added: Sequence[str]) -> List[Tuple[Target, List[CaseInfo]]]:
    """The workers one target needs: one per dependency set of the cases (torch alone first), each with the
    set's environment; the running interpreter (``current``) runs every case in one."""
    if target.build is None:
        return [(target, list(cases))]
    return [(replace(target, dependency_set=key), infos) for key, infos in sets.group(cases, added).items()]


def check_cases(
    cases: Sequence[CaseInfo], chosen: Sequence[Target], options: CheckOptions, out: Path
) -> List[Tuple[CaseInfo, List[Row]]]:
    """Every case on every target, releases side by side, one worker per release (and dependency set) running
    all of its cases: each case with its rows in the order of the targets."""
    modes = modes_of(options.mode)
    workers = min(len(chosen), resources.jobs(options.jobs or None, MB_PER_RELEASE))
    named = cases[0].name if len(cases) == 1 else "%d cases (%s)" % (len(cases), ", ".join(i.name for i in cases))
    print(
        "checking %s in %s on %d release(s), %d at a time" % (named, "/".join(modes), len(chosen), workers),
        file=sys.stderr,
        flush=True,
    )
    # Releases side by side share the cores: each worker runs its cells on its share of them.
    cells_at_once = max(1, resources.usable_cores() // workers)

    def one(target: Target) -> Dict[str, List[Row]]:
        found: Dict[str, List[Row]] = {}
        # The sets of one release one after the other: their environments share the release's base.
        for mine, infos in groups(target, cases, options.with_requirements):
            rows = check_target(
                mine, infos, modes, out, options.timeout, options.reinstall, options.verbose, cells_at_once,
                options.with_requirements, stages=options.stages, aoti_timeout=options.aoti_timeout,
                device=options.device,
            )  # fmt: skip
            found.update(rows)
        return found

    by_target: Dict[Target, Dict[str, List[Row]]] = {}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        running = {pool.submit(one, target): target for target in chosen}
        for done in as_completed(running):
            arrived = by_target[running[done]] = done.result()
            for info in cases:  # as they arrive; the tables are in release order
                for row in arrived[info.name]:
                    progress(row, info.name if len(cases) > 1 else None)
    return [(info, [row for target in chosen for row in by_target[target][info.name]]) for info in cases]


def progress(row: Row, case: Optional[str]) -> None:
    """One line on stderr as a row arrives: its release, its case where there are several, its mode and status."""
    after = "  aoti %s" % row.aoti["aoti_status"] if row.aoti.get("aoti_status") else ""
    named = "%-20s " % case if case else ""
    print("  %-14s %s%-10s %s%s" % (row.torch, named, row.mode, row.status, after), file=sys.stderr, flush=True)


def heading(info: CaseInfo, fmt: str) -> str:
    """The line above a case's table when several are checked."""
    if fmt == "markdown":
        return "### %s\n\n`%s`\n" % (info.name, info.path)
    return "== %s (%s)" % (info.name, info.path)


def json_by_case(checked: Sequence[Tuple[CaseInfo, Sequence[Row]]]) -> str:
    """The rows of several cases as one JSON object: each case's name, its rows."""
    return json.dumps({info.name: [asdict(r) for r in rows] for info, rows in checked}, indent=1, sort_keys=True)


def cases_summary(checked: Sequence[Tuple[CaseInfo, Sequence[Row]]]) -> str:
    """After several tables: how many cases pass on every release checked, and which do not."""
    short = [info.name for info, rows in checked if passing_summary(rows) is not None]
    text = "%d cases: %d pass on every release checked" % (len(checked), len(checked) - len(short))
    if short:
        text += "; %d do%s not: %s" % (len(short), "es" if len(short) == 1 else "", ", ".join(short))
    return text


def cell_tables(checked: Sequence[Tuple[CaseInfo, Sequence[Row]]]) -> Any:
    """The rows of every case checked as one cell table (a DataFrame)."""
    import pandas as pd

    return pd.concat([cell_table(rows, info.name) for info, rows in checked], ignore_index=True)


def cell_table(rows: Sequence[Row], case: str) -> Any:
    """The table's rows as cells (``tables.cells``' columns that a candidate verdict reads), a DataFrame."""
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "release": row.torch, "variant": row.variant, "python": row.python, "with_set": "", "case": case,
                "mode": row.mode, "status": str(row.status.value), "graph_hash": row.graph_hash,
                "error_type": None, "error_message": row.error,
            }
            for row in rows
        ],
        columns=["release", "variant", "python", "with_set", "case", "mode", "status", "graph_hash",
                 "error_type", "error_message"],
    )  # fmt: skip


def candidate_summary(v: Any, by_case: bool = False) -> str:
    """One line per candidate (a ``candidate.Verdict``): ``candidate 2.16.0.dev20260115+cpu (nightly-cpu) vs
    2.15.0+cpu (cpu): regresses (strict: pass → fail)``, each build with its variant, as a candidate may carry the
    release's own version; ``by_case``: each cell named by its case too (``my_model strict: pass → fail``)."""
    head = "candidate %s (%s) vs %s (%s): " % (v.candidate, v.variant, v.reference, v.reference_variant)
    if not v.compared:
        return head + "nothing to compare"
    if not v.broken:
        return head + "no regression"
    cells = ["%s %s" % (m.get("case"), m["mode"]) if by_case else m["mode"] for m in v.broken]
    return head + "regresses (%s)" % "; ".join("%s: %s" % (c, m.get("detail")) for c, m in zip(cells, v.broken))


def upgrade_summary(checked: Sequence[Tuple[CaseInfo, Sequence[Row]]], fmt: str = "text") -> Optional[str]:
    """The report's upgrade answer (``records.upgrade``) from the oldest release checked to the newest, in its
    words: each case's verdict, then the tallies; a question ``check`` does not run (a program saved on one release
    loaded on another) says so. ``fmt`` markdown makes it a list. None with fewer than two releases."""
    from .records import upgrade  # pandas: only where two releases are compared
    from .report import upgrade as words

    found = upgrade.Upgrades(cell_tables(checked))
    if len(found.releases) < 2:
        return None
    answer = found.answer(found.releases[0], found.releases[-1])
    lines = ["upgrade %s → %s:" % (answer.before, answer.after)]
    for case in answer.cases:
        broken = words.breaks_words(case)
        lines.append("  %s: %s%s" % (case.case, words.VERDICTS[case.verdict], " (%s)" % broken if broken else ""))
    lines += ["  %s" % line for line in words.tallies_words(answer)]
    if fmt == "markdown":
        lines = [lines[0]] + ["- " + line.strip() for line in lines[1:]]
    return "\n".join(lines)


def passing_summary(rows: Sequence[Row]) -> Optional[str]:
    """For a case that fails somewhere: where it passes, and from which release on it keeps passing.

    Releases are taken in the order of the rows (the order asked, oldest first for the
    usual selections); a release passes when every mode asked passes there.
    """
    statuses: Dict[str, List[Shown]] = {}
    variants: Dict[str, set] = {}
    for row in rows:
        variants.setdefault(row.torch, set()).add(row.variant)
    for row in rows:
        # Two builds of one version (a release and its candidate) are named apart by their variants.
        label = row.torch if len(variants[row.torch]) == 1 else "%s (%s)" % (row.torch, row.variant)
        statuses.setdefault(label, []).append(row.status)
    labels = list(statuses)
    passing = [label for label in labels if all(status == Status.PASS for status in statuses[label])]
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

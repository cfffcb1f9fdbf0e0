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
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..check_table import Row, cell_tables, progress, short_error, show
from ..contract import dependencies, resources, stages
from ..contract.case import CaseError, CaseInfo, discover
from ..contract.commands import add_run_options
from ..contract.errors import UserError
from ..contract.options import DEFAULT_TIMEOUT_S, FAIL_ON, add_jobs, add_variant
from ..contract.requests import STAGES, RunRequest
from ..contract.schema import MODES, STATUSES, NoCell, Status
from ..envs import environments, pythons, releases, sets
from . import nightly_range
from .probe import Probed, cases_request, probe_cases, validate_case

CURRENT = "current"
# The fields a row keeps of each stage whose outcome its table shows (Stage.shown).
SHOWN_KEYS = stages.keys_of([stage.name for stage in stages.SHOWN])


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
    add_run_options(parser, mode=None, with_requirements=None)
    parser.add_argument(
        "--python",
        default=None,
        metavar="X.Y",
        help="Python of the environments (default: this one where the release supports it)",
    )
    # run's options, as run declares and checks them, in check's words; each stage's budget as run declares it
    add_run_options(
        parser,
        timeout=None,
        stages="stages after export, as `run --stages` takes them: %s (default: %s)" % (stages.HELP, ",".join(STAGES)),
        **{budget.field: None for budget in stages.BUDGETS},
        device="where the cases run, as `run --device` (default cpu); cuda needs a CUDA build and a GPU",
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
            target = Target(build, python or pythons.default_python(build.release))
            if target not in found:
                found.append(target)
    return found


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
                    stages={key: value for key, value in cell.items() if key in SHOWN_KEYS},
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


def check_target(
    target: Target, infos: Sequence[CaseInfo], options: CheckOptions, out: Path, jobs: int = 0
) -> Dict[str, List[Row]]:
    """Install (or reuse) the target's environment, run the cases there in one worker (``jobs`` cells at once, 0
    for the worker's default), and read back each case's rows, by its name. The cases share the target's
    dependency set (``sets.group``)."""
    spec = None if target.build is None else target.spec
    folder = out / (CURRENT if spec is None else spec.name)
    modes, added = modes_of(options.mode), options.with_requirements
    request = cases_request([info.path for info in infos], modes, folder, options.timeout, options.verbose, jobs, added)
    request = replace(request, stages=tuple(options.stages), device=options.device, **stages.budget_values(options))
    probed = probe_cases(spec, infos, request, options.reinstall, options.verbose)
    return {info.name: rows_for(probed[info.name], modes, target.label, _named(info, added)) for info in infos}


def _named(info: CaseInfo, added: Sequence[str]) -> Tuple[str, ...]:
    """What a case names beside torch: its PEP 723 dependencies and every ``--with``."""
    return dependencies.key_requirements(dependencies.set_key((*info.dependencies, *added)))


@dataclass(frozen=True)
@stages.with_budgets  # and each stage's budget, as run's request holds it
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
    stages: Tuple[str, ...] = STAGES  # "check,onnx" is read as run reads it
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
        object.__setattr__(self, "with_requirements", tuple(self.with_requirements))
        for budget in stages.BUDGETS:
            object.__setattr__(self, budget.field, float(getattr(self, budget.field)))
        run = RunRequest(
            out="", mode=self.mode, timeout=self.timeout, device=self.device, stages=self.stages,
            with_requirements=self.with_requirements, **stages.budget_values(self),
        )  # fmt: skip
        try:  # the options check passes on to run, checked as run checks them
            run.validate()
        except UserError as exc:
            raise CheckError(str(exc))
        if self.jobs < 0:
            raise CheckError("--jobs %d: give a number of releases above 0, or 0 for the default" % self.jobs)
        object.__setattr__(self, "timeout", float(self.timeout))


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
    with tempfile.TemporaryDirectory(prefix="export-matrix-check-") as scratch:
        checked = check_cases(cases, chosen, options, Path(options.out) if options.out else Path(scratch))
    judged = show(checked, options.format, options.fail_on)
    if options.fail_on == "never":
        return 0
    from ..records import candidate  # pandas: only where a candidate is judged

    why = candidate.should_fail(options.fail_on, candidate.failing(cell_tables(checked)), judged)
    if why is not None:
        if options.fail_on == "regression":
            offer_bisect(judged, {info.name: info.path for info in cases}, options)
        print("--fail-on %s: %s" % (options.fail_on, why), file=sys.stderr)
        return 1
    return 0


def offer_bisect(judged: Sequence[Any], paths: Dict[str, str], options: CheckOptions) -> None:
    """After the tables: the command that finds the nightly that broke each cell, for the gate's reader."""
    commands = nightly_range.bisect_commands(judged, paths, options.with_requirements)
    if not commands:
        return
    if options.format == "markdown":
        print("\n#### The nightly that broke it\n\n```sh\n%s\n```" % "\n".join(commands))
        return
    where = sys.stderr if options.format == "json" else sys.stdout
    print("\nThe nightly that broke it:\n%s" % "\n".join("  " + c for c in commands), file=where)


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
    line = "checking %s in %s on %d release(s), %d at a time" % (named, "/".join(modes), len(chosen), workers)
    print(line, file=sys.stderr, flush=True)
    # Releases side by side share the cores: each worker runs its cells on its share of them.
    cells_at_once = max(1, resources.usable_cores() // workers)

    def one(target: Target) -> Dict[str, List[Row]]:
        found: Dict[str, List[Row]] = {}
        # The sets of one release one after the other: their environments share the release's base.
        for mine, infos in groups(target, cases, options.with_requirements):
            found.update(check_target(mine, infos, options, out, cells_at_once))
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

"""What reproduces a failing cell: the cell's facts, the stages to run again, the commands, its distinct failures.

A cell is *failing* when its status is neither pass nor not-applicable, or when a stage run on
its exported program (decomposition, save/load) failed. For each, :func:`check_command` is the
``export-matrix check`` that runs it again, :func:`install` the ``pip install`` of its exact
torch build (a channel's build from its channel's index alone) and of the versions its
environment resolved, and :func:`plan` the steps a standalone script runs to reproduce it
(:mod:`matrix.records.repro_script` writes that script).

A report shows a repro per *distinct failure* of a case (:func:`failures`): cells of one mode
and ``--with`` set that end the same way (status, error class and first line, failing stages)
are one failure, reproduced on the newest release where it shows. A failure that later
releases fixed keeps its repro on the last release that still has it.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import pandas as pd

from matrix.contract import dependencies, stages
from matrix.contract.case import EXPORTDB_SOURCE
from matrix.contract.errors import UserError
from matrix.contract.schema import MODES, STAGE_ERROR, STAGE_MISMATCH, Status, cell_id, first_line
from matrix.envs import releases
from matrix.records import packages, transitions
from matrix.records.channel import channel_of
from matrix.records.columns import EXPORTED

# The steps a repro script runs, in the order a cell runs them: the eager run and the export, then the stages on the
# exported program, named as they are declared.
EAGER, EXPORT = "eager", "export"
CHECK, DECOMPOSE, SERIALIZE = stages.CHECK.name, stages.DECOMPOSE.name, stages.SERIALIZE.name
STEPS = (EAGER, EXPORT, CHECK, DECOMPOSE, SERIALIZE)
# The steps on an exported program: a cell that exported fails at one of these.
STAGES_AFTER = (CHECK, DECOMPOSE, SERIALIZE)
# What each step does, as a script's header says it.
STEP_TEXT = {
    EAGER: "the case's eager run, on copies of the model and inputs",
    EXPORT: "torch.export.export",
    CHECK: "running the exported program on each input and comparing it with eager",
    DECOMPOSE: "ExportedProgram.run_decompositions()",
    SERIALIZE: "torch.export.save, then torch.export.load and a run in a fresh process",
}
# Statuses whose cell has nothing to reproduce, unless a stage on its program failed.
QUIET = (Status.PASS.value, Status.NOT_APPLICABLE.value)


class ReproError(UserError):
    """A cell that cannot be reproduced as asked: not found, ambiguous, passing; the message says which and where."""


@dataclass(frozen=True)
class Cell:
    """One cell as a repro needs it: where it ran, its case, how it ended, what its environment resolved."""

    release: str  # torch's version, local tag included: 2.13.0+cpu
    variant: str
    python: str
    case: str
    mode: str
    case_file: Optional[str] = None
    source: Optional[str] = None  # "cases", or "exportdb" for torch's bundled examples
    with_set: str = ""  # what --with added ("" for none)
    status: str = ""
    failed_stage: Optional[str] = None
    error_type: Optional[str] = None
    error_message: Optional[str] = None
    check_status: Optional[str] = None
    decompose_error: Optional[str] = None  # set where the decomposition of the exported program failed
    serialize_error: Optional[str] = None  # set where saving or loading the exported program failed
    dependency_set: str = ""  # the case's PEP 723 requirements and every --with
    added_packages: Tuple[Tuple[str, str], ...] = ()  # (distribution, version) the set added to torch
    git_version: Optional[str] = None  # torch.version.git_version of the build, where its environment record says
    device: str = "cpu"  # where it ran (--device); a row without one ran on the CPU
    gpu: Optional[str] = None  # on a GPU, the one its record names (NVIDIA H200, compute 9.0, driver 580.1)

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Cell:
        """A cell from a row of the cell table (``tables.cells``) or from a cell record (``torch_version``)."""
        status = _text(row.get("status")) or ""
        fields: Dict[str, Any] = {name: _text(row.get(name)) or "" for name in _TEXTS}
        fields.update((name, _text(row.get(name))) for name in _OPTIONAL)
        return cls(
            release=_text(row.get("release")) or _text(row.get("torch_version")) or "",
            **fields,
            decompose_error=_stage_error(row, DECOMPOSE, status),
            serialize_error=_stage_error(row, SERIALIZE, status),
            added_packages=_pairs(row.get("added_packages")),
            device=_text(row.get("device")) or "cpu",
            gpu=_text(row.get("gpu")),
        )

    @property
    def cell_id(self) -> str:
        return cell_id(self.release, self.mode, self.case)

    @property
    def failing(self) -> bool:
        """Whether there is a failure to reproduce: a status other than pass and not-applicable, or a failed stage."""
        return self.status not in QUIET or bool(self.decompose_error or self.serialize_error)

    @property
    def reproducible(self) -> bool:
        """Whether a case file of ours ran (torch's bundled ExportDB examples have none to inline or check)."""
        return bool(self.case_file) and self.source != EXPORTDB_SOURCE


# The fields a row gives as they are: text ("" where missing), or text or None.
_TEXTS = ("variant", "python", "case", "mode", "with_set", "status", "dependency_set")
_OPTIONAL = ("case_file", "source", "failed_stage", "error_type", "error_message", "check_status")


def _text(value: Any) -> Optional[str]:
    return value if isinstance(value, str) and value else None


def _stage_error(row: Mapping[str, Any], stage: str, status: str) -> Optional[str]:
    """The stage's error where it failed on an exported program; a stage that never ran says nothing."""
    outcome = row.get(stage + "_outcome", row.get(stage + "_status") if status in EXPORTED else None)
    if outcome not in (STAGE_ERROR, STAGE_MISMATCH):
        return None
    return _text(row.get(stage + "_error")) or "%s failed" % stage


def _pairs(value: Any) -> Tuple[Tuple[str, str], ...]:
    if not isinstance(value, Mapping):
        return ()
    return tuple(sorted((str(name), str(version)) for name, version in value.items() if version is not None))


# --- what a script runs ------------------------------------------------------------------------


def plan(cell: Cell) -> Tuple[str, ...]:
    """The steps that reproduce the cell's failure, in the order the cell ran them.

    The eager run always comes first, as in the cell: what it does (a lazy registration, a
    cache) can decide what the export meets. Then the export, and the later steps that
    failed; a crash or timeout, which may have struck anywhere, runs every step.
    """
    if cell.status in (Status.CRASH.value, Status.TIMEOUT.value):
        return STEPS
    if cell.status in (Status.CASE_ERROR.value, Status.FAIL.value):
        return (EAGER, EXPORT)
    steps = [EAGER, EXPORT]
    if cell.status == Status.MISMATCH.value:
        steps.append(CHECK)
    if cell.decompose_error:
        steps.append(DECOMPOSE)
    if cell.serialize_error:
        steps.append(SERIALIZE)
    return tuple(steps)


def reproduces(cell: Cell) -> str:
    """What the script reproduces, in words: the step that failed, or every step for a crash or timeout."""
    if cell.status == Status.CRASH.value:
        return "a crash (the cell's process died%s): every step the cell runs, in its order" % _during(cell)
    if cell.status == Status.TIMEOUT.value:
        return "a timeout (the cell ran past its time limit%s): every step the cell runs, in its order" % _during(cell)
    if cell.status == Status.CASE_ERROR.value:
        where = "as it loads" if cell.failed_stage == "load" else "in its eager run"
        return "the case failing on this release %s, before any export" % where
    failed = [EXPORT] if cell.status == Status.FAIL.value else [s for s in plan(cell) if s in STAGES_AFTER]
    return "; ".join("the %s step: %s" % (step, STEP_TEXT[step]) for step in failed)


def _during(cell: Cell) -> str:
    return ", during %s" % cell.failed_stage if cell.failed_stage else ""


def recorded(cell: Cell) -> List[str]:
    """What the records say went wrong, one line per failure: the outcome (:func:`outcomes`) and its error."""
    return ["%s: %s" % (outcome, error) if error else outcome for outcome, error in _outcome_errors(cell)]


def outcomes(cell: Cell) -> List[str]:
    """How the cell failed, in a few words each: ``mismatch at check``, ``decompose failed``."""
    return [outcome for outcome, _ in _outcome_errors(cell)]


def _outcome_errors(cell: Cell) -> List[Tuple[str, str]]:
    """Each failure of the cell: how it ended (``mismatch at check``, ``decompose failed``) and its error's line."""
    found = []
    if cell.status not in QUIET:
        error = ": ".join(p for p in (cell.error_type, first_line(cell.error_message, limit=300)) if p)
        found.append((cell.status + (" at %s" % cell.failed_stage if cell.failed_stage else ""), error))
    after = ((DECOMPOSE, cell.decompose_error), (SERIALIZE, cell.serialize_error))
    return found + [("%s failed" % step, first_line(error, limit=300)) for step, error in after if error]


# --- commands --------------------------------------------------------------------------------


def torch_version(cell: Cell, matrix: Optional[releases.Matrix] = None) -> str:
    """The torch version to install and check: the cell's, less a local tag its variant's index does not use.

    PyPI's Linux builds report a CUDA tag (``2.2.2+cu121``) that PyPI's versions do not carry:
    that build is installed, and checked, as ``2.2.2``. A variant the matrix does not know keeps
    the version as recorded.
    """
    variant = variant_of(cell.variant, matrix)
    if variant is None:
        return cell.release
    public = transitions.base(cell.release)
    return public if variant.local_tag is None else "%s+%s" % (public, variant.local_tag)


def variant_of(name: str, matrix: Optional[releases.Matrix] = None) -> Optional[releases.Variant]:
    """The matrix's variant of that name (the default matrix's without one); None where it has none."""
    try:
        return (matrix or releases.default_matrix()).variant(name)
    except releases.ReleaseError:
        return None


def check_command(cell: Cell, matrix: Optional[releases.Matrix] = None) -> Optional[str]:
    """The ``export-matrix check`` that runs the cell again in its own environment; None without a case file."""
    if not cell.reproducible or cell.case_file is None:
        return None
    words = ["export-matrix", "check", cell.case_file, "--torch", torch_version(cell, matrix)]
    words += ["--variant", cell.variant, "--mode", cell.mode, "--python", cell.python]
    for requirement in packages.requirements(cell.with_set):
        words += ["--with", requirement]
    if cell.device != "cpu":
        words += ["--device", cell.device]
    return _words(words)


@dataclass(frozen=True)
class Install:
    """What to install to run a cell's script: the exact torch build, what goes with it, and where from."""

    requirements: Tuple[str, ...]  # torch==VERSION first, then the release's pins, then the case's packages
    index_url: Optional[str]  # the variant's index, where torch does not come from PyPI
    resolved: Tuple[
        Tuple[str, str], ...
    ] = ()  # what else the dependency set pulled in, as the cell's environment had it
    note: Optional[str] = None  # where the variant is unknown to this matrix
    channel: Optional[str] = None  # the channel whose index alone torch comes from (nightly, test)

    @property
    def command(self) -> str:
        """One line to paste: for a channel's build, torch from its index alone, then the rest from PyPI."""
        if self.channel and self.index_url:
            # A candidate carries its release's number: with PyPI or another index beside the channel's,
            # pip could take the release's build of that number. PyTorch's indexes hold torch's dependencies.
            first = ["pip", "install", self.requirements[0], "--index-url", self.index_url]
            rest = ["pip", "install", *self.requirements[1:]] if len(self.requirements) > 1 else []
            return " && ".join(_words(words) for words in (first, rest) if words)
        words = ["pip", "install", *self.requirements]
        if self.index_url:
            # An extra index, not the only one: the case's own packages come from PyPI.
            words += ["--extra-index-url", self.index_url]
        return _words(words)


def _words(words: Sequence[str]) -> str:
    return " ".join(shlex.quote(word) for word in words)


def install(cell: Cell, declared: Sequence[str] = (), matrix: Optional[releases.Matrix] = None) -> Install:
    """The install of a cell's environment: torch at its exact version, from its variant's index, with the
    release's pins (``releases.toml``) and each package of the cell's dependency set at the version its
    environment resolved; ``declared`` (the case's PEP 723 requirements) stands in for a set the records lack."""
    matrix = matrix or releases.default_matrix()
    release = matrix.release_like(cell.release)
    index_url, note, channel = None, None, None
    variant = variant_of(cell.variant, matrix)
    if variant is None:
        note = "variant %s is not in releases.toml: install its build of torch %s from its index" % (
            cell.variant,
            cell.release,
        )
    else:
        index_url, channel = (variant.index_url if variant.local_tag else None), variant.channel
    named = packages.requirements(cell.dependency_set) or tuple(declared)
    versions = packages.resolved(dict(cell.added_packages))
    pinned = [_pinned(requirement, versions) for requirement in named]
    names = {dependencies.name_of(r) for r in named}
    rest = tuple((name, version) for name, version in sorted(versions.items()) if name not in names)
    wanted = ("torch==" + torch_version(cell, matrix), *release.requirements, *pinned)
    return Install(tuple(dict.fromkeys(wanted)), index_url, rest, note, channel)


def _pinned(requirement: str, versions: Dict[str, str]) -> str:
    """``name==VERSION`` where the environment's version is known, else the requirement as written."""
    name = dependencies.name_of(requirement)
    version = versions.get(name) if name else None
    return "%s==%s" % (name, version) if version else requirement


def file_name(cell: Cell) -> str:
    """The script's file name, unique among a case's cells: ``torch-2.13.0+cpu_py3.11_strict.py``; a channel's
    build names its variant too (``torch-2.7.1+cpu_test-cpu_py3.11_strict.py``), as a candidate carries the
    number of the release it precedes, and a cell off the CPU its device (``..._strict_cuda.py``)."""
    channel = "_" + cell.variant if channel_of(cell.variant) else ""
    name = "torch-%s%s_py%s_%s" % (cell.release, channel, cell.python, cell.mode)
    name += dependencies.set_suffix(cell.with_set) + ("" if cell.device == "cpu" else "_" + cell.device)
    return "".join(c if c.isalnum() or c in "._+-" else "_" for c in name) + ".py"


# --- distinct failures ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Failure:
    """One distinct failure of a case, and the newest cell that shows it: the cell its repro is written for."""

    cell: Cell
    releases: Tuple[str, ...]  # every release the failure shows on, in report order

    @property
    def case(self) -> str:
        return self.cell.case

    @property
    def title(self) -> str:
        """The mode (and ``--with`` set) and how the cell failed: ``strict · mismatch at check · decompose failed``."""
        mode = self.cell.mode + (" [%s]" % self.cell.with_set if self.cell.with_set else "")
        return " · ".join([mode, *outcomes(self.cell)])


def failures(cells: pd.DataFrame) -> Tuple[Failure, ...]:
    """Each case's distinct failures (see the module's docstring), by case, then mode, then first release.

    ``cells`` is the cell table (``tables.cells``) in report order; cells without a case file
    of ours (torch's bundled ExportDB examples) have nothing to inline and are left out.
    """
    if cells.empty:
        return ()
    failing = ~cells["status"].isin(QUIET)
    for stage in (DECOMPOSE, SERIALIZE):
        failing |= cells[stage + "_outcome"].isin((STAGE_ERROR, STAGE_MISMATCH))
    found: Dict[Tuple[str, ...], List[Cell]] = {}
    for row in cells[failing].to_dict("records"):
        cell = Cell.from_row(row)
        if cell.failing and cell.reproducible:
            found.setdefault(_signature(cell), []).append(cell)
    chosen = [Failure(members[-1], tuple(dict.fromkeys(m.release for m in members))) for members in found.values()]
    order = {key: number for number, key in enumerate(found)}
    return tuple(
        sorted(chosen, key=lambda f: (f.case, _mode_index(f.cell.mode), f.cell.with_set, order[_signature(f.cell)]))
    )


def _signature(cell: Cell) -> Tuple[str, ...]:
    ended = (
        ("", "", "") if cell.status in QUIET else (cell.status, cell.error_type or "", first_line(cell.error_message))
    )
    return (
        cell.case,
        cell.mode,
        cell.with_set,
        *ended,
        first_line(cell.decompose_error),
        first_line(cell.serialize_error),
    )


def _mode_index(mode: str) -> int:
    return MODES.index(mode) if mode in MODES else len(MODES)

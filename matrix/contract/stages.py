"""The stages a cell runs on its exported program, each declared once.

A stage has a name (the word of ``--stages``), what ``--stages``' help says of it, whether it runs by default
or only where ``--stages`` names it, the record fields only a run that selected it writes (beside
``schema.CELL_KEYS``), the option that bounds what it may take (:class:`Budget`), what a report needs to draw
its outcome with no code of its own (:class:`Shown`), and the worker module that runs it: ``matrix.worker.stage``
imports each declared module and the cell runs the selected stages through it, in the order of :data:`DECLARED`.
A new stage is that module and its declaration here. ``run --stages``, ``check --stages``, the budget options,
the record's columns and the report's stage columns read :data:`DECLARED`.

Standard library only, and Python 3.8 syntax: the worker imports this module inside every torch environment.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Type, TypeVar, Union

from .options import add_fields


@dataclass(frozen=True)
class Budget:
    """The option that bounds what a stage may take: ``run``'s and ``check``'s parsers add it from here."""

    option: str  # the flag, e.g. ``--aoti-timeout``; its dashes read as underscores name the request's field
    default: float  # seconds
    help: str  # what the option's help says, with ``%g`` for the default
    # Whether a cell that runs the stage may take this much on top of --timeout (the stage runs in a process of its
    # own with this deadline); False: the budget is spent within the cell's --timeout.
    extends_cell: bool = False

    @property
    def field(self) -> str:
        """The request's field (``RunRequest.aoti_timeout``) that holds the option's value."""
        return self.option.lstrip("-").replace("-", "_")


@dataclass(frozen=True)
class Shown:
    """What a report needs to draw a stage's outcome with no code of its own: read these fields, nothing else.

    ``status_key`` holds one of ``outcomes`` (or None where the stage did not run on a cell); ``detail_keys``
    say what failed, in the order a reader wants them; ``meanings`` say each outcome in words; ``passing`` is
    the outcome that means it worked, ``tried`` the outcomes that say something of torch (the others, such as
    not-applicable, are never counted as failures). ``error_keys`` (among ``detail_keys``) are the fields whose
    values, joined by ": ", say what failed in one line: a page's error, the line a known issue is searched for in.
    """

    label: str  # the report's name for the outcome's column, e.g. "ONNX"
    status_key: str
    outcomes: Tuple[str, ...]
    meanings: Mapping[str, str]
    passing: str
    tried: Tuple[str, ...]
    detail_keys: Tuple[str, ...] = ()
    error_keys: Tuple[str, ...] = ()

    def failed(self, outcome: object) -> bool:
        """Whether ``outcome`` tried and did not pass: a failure every view counts (not-tried outcomes never are)."""
        return outcome in self.tried and outcome != self.passing


@dataclass(frozen=True)
class Stage:
    """One stage (see the module's docstring)."""

    name: str
    words: str = ""  # what --stages' help says it does, after its name ("" says nothing more)
    default: bool = True  # runs unless --stages leaves it out; False: only where --stages names it
    label: Optional[str] = None  # the report's name for its outcome column; None: no column of its own
    # Where it has a column of its own (REPORTED): the sign after a status glyph when it failed on the cell's program,
    # so that such a pass never reads as a clean one, and what that sign means.
    mark: str = ""
    meaning: str = ""
    keys: Tuple[str, ...] = ()  # record fields only a run that selected it writes, None where they do not apply
    budget: Optional[Budget] = None  # the option that bounds what it may take
    # The module of matrix.worker that runs it: its ``STAGE`` follows ``matrix.worker.stage.StageRun``.
    module: str = ""
    # Whether it keeps a product that the run uses again in a fresh process (a follow-up, contract/products.py):
    # the run then keeps the cells' programs, signed, in a scratch folder where --artifacts is not given.
    follows: bool = False
    # Whether its results depend on what the run learns as it imports torch (a C++ compiler's identity): a run
    # that selects it is never answered from the result cache without importing torch.
    needs_set_up: bool = False
    shown: Optional[Shown] = None  # where the report draws its outcome from the declaration alone
    # The packages it runs with beside torch: a run that selects it installs them into each dependency set's
    # environment (never the release's base one), bounded per release by matrix/envs/companions.toml; a run
    # without it installs none. Where they cannot be installed, its cells run without them (the stage then
    # records not-applicable).
    requires: Tuple[str, ...] = ()


CHECK = Stage("check", "run and compare with eager", module="check_stage")
DECOMPOSE = Stage(
    "decompose", label="decomposition", module="decompose_stage", mark="ᵈ",
    meaning="after the symbol: the exported program's run_decompositions fails",
)  # fmt: skip
SERIALIZE = Stage(
    "serialize", "save, then load in a process that never exported", label="save/load", module="serialize_stage",
    follows=True, mark="ˢ",
    meaning="after the symbol: the exported program does not survive torch.export.save and load",
)  # fmt: skip
# The share of the cell's --timeout that a failed export's diagnosis must end within, counting what the cell spent
# before it: the rest is margin, so that a slow diagnosis never turns a fail into a timeout. Its budget, 15 s by
# default, bounds the diagnosis itself.
DIAGNOSIS_SHARE = 0.6
DIAGNOSE = Stage(
    "diagnose", "draft_export on a failed export", module="diagnose_stage",
    budget=Budget(
        "--diagnosis-budget", 15.0,
        "seconds a failed export's draft_export diagnosis may take (default %%g; never past %g of --timeout into the"
        " cell); one kept in the result cache for the same case, mode and error is reused, not run again"
        % DIAGNOSIS_SHARE,
    ),
)  # fmt: skip
# An AOTInductor compile of a small MLP takes 30 to 65 s on 2 cores, a real model several times that: a cell that
# runs the stage may take this much on top of --timeout, and the compile itself stops at this limit.
AOTI_BUDGET = Budget(
    "--aoti-timeout",
    300.0,
    "seconds the aoti stage may take in one cell, on top of --timeout (default %g): a compile past it is killed"
    " and recorded as the stage's timeout, the cell's own status unchanged",
    extends_cell=True,
)
# ``aoti_status`` is the stage's outcome (schema.AOTI_STATUSES); ``aoti_error_type`` and ``aoti_error`` the qualified
# class and first line of what failed, the line starting with the step (``compile:``, ``load:``, ``run:``);
# ``aoti_api`` the release's API that compiled and loads it; ``aoti_compile_s`` the compile, in a process forked from
# the cell; ``aoti_load_s`` and ``aoti_run_s`` loading the package and running it on the kept inputs, in a process
# that never compiled; ``aoti_package_bytes`` the size of the package (a ``.pt2``, or a bare ``.so`` before packages).
AOTI_SHOWN = Shown(
    label="aoti",
    status_key="aoti_status",
    outcomes=("ok", "mismatch", "error", "skipped", "not-applicable", "crash", "timeout", "untrusted"),
    meanings={
        "ok": "compiled with AOTInductor, loaded in a process that never compiled, ran on the case's inputs and"
        " matched eager",
        "mismatch": "compiled and loaded, but gave other numbers than eager",
        "error": "the compile, the package's load or its run raised (its error names the step: compile, load, run)",
        "skipped": "compiled, not loaded: only a passing cell's kept program has its package loaded",
        "not-applicable": "this release has no AOTInductor API, or the machine no C++ compiler: never a failure",
        "crash": "a process of the compile or of the package's load died (signal, os._exit, out of memory)",
        "timeout": "the compile ran past --aoti-timeout, or the load past --timeout, and was killed",
        "untrusted": "not loaded: the kept package's signature is missing or does not match the signing key",
    },
    passing="ok",
    tried=("ok", "mismatch", "error", "crash", "timeout"),
    detail_keys=("aoti_error_type", "aoti_error", "aoti_api"),
    error_keys=("aoti_error_type", "aoti_error"),
)  # fmt: skip
AOTI = Stage(
    "aoti",
    "opt-in: compile a passing cell's program with AOTInductor, which needs a C++ compiler (g++), keep the package"
    " with its saved program, load it in a process that never compiled, run and compare with eager",
    default=False,
    keys=(
        "aoti_status",
        "aoti_error_type",
        "aoti_error",
        "aoti_api",
        "aoti_compile_s",
        "aoti_load_s",
        "aoti_run_s",
        "aoti_package_bytes",
    ),  # fmt: skip
    budget=AOTI_BUDGET,
    module="aoti_stage",
    follows=True,
    needs_set_up=True,
    shown=AOTI_SHOWN,
)
# ``onnx_status`` is the stage's outcome (ONNX.shown.outcomes); ``onnx_step`` where it stopped (export, save, session,
# run); ``onnx_error_type`` and ``onnx_error`` the qualified class and first line of what failed; ``onnx_api`` the
# release's API that ran (on the ExportedProgram, or on the model where it takes only that); ``onnx_opset`` and
# ``onnx_nodes`` the model's default-domain opset and its graph's node count; ``onnx_bytes`` its size with its
# external data; the times of each step; the number of inputs run; the onnx, onnxscript, onnxruntime versions.
ONNX = Stage(
    "onnx",
    "opt-in: convert a passing cell's program to ONNX with the release's torch.onnx exporter built on torch.export"
    " (dynamo=True; needs onnx and onnxscript), keep the model with its saved program, run it in onnxruntime on the"
    " case's inputs and compare with eager",
    default=False,
    keys=(
        "onnx_status", "onnx_step", "onnx_error_type", "onnx_error", "onnx_api", "onnx_opset", "onnx_nodes",
        "onnx_bytes", "onnx_export_s", "onnx_save_s", "onnx_session_s", "onnx_run_s", "onnx_checked_inputs",
        "onnx_version", "onnxscript_version", "onnxruntime_version",
    ),
    module="onnx_stage",
    requires=("onnx", "onnxscript", "onnxruntime"),  # the exporter needs the first two, the run the third
    shown=Shown(
        label="ONNX",
        status_key="onnx_status",
        outcomes=("pass", "mismatch", "fail", "crash", "timeout", "not-applicable"),
        meanings={
            "pass": "exported to ONNX, ran in onnxruntime on every input of the case and matched eager",
            "mismatch": "exported and ran in onnxruntime, but gave other numbers than eager",
            "fail": "the ONNX export, its save, the onnxruntime session or its run raised (onnx_step says which)",
            "crash": "the process that exported or ran the ONNX model died (a signal, out of memory)",
            "timeout": "the ONNX export or run ran past its share of the cell's --timeout and was killed",
            "not-applicable": "this release has no torch.onnx exporter built on torch.export, or the environment"
            " lacks onnx, onnxscript or onnxruntime (exported, not run): never a failure",
        },
        passing="pass",
        tried=("pass", "mismatch", "fail", "crash", "timeout"),
        detail_keys=("onnx_step", "onnx_error_type", "onnx_error", "onnx_api", "onnx_opset", "onnx_nodes"),
        error_keys=("onnx_step", "onnx_error_type", "onnx_error"),
    ),
)  # fmt: skip
DECLARED = (CHECK, DECOMPOSE, SERIALIZE, DIAGNOSE, AOTI, ONNX)  # in the order --stages' help names them
# The stages whose outcome the report shows in columns of its own, in the report's order.
REPORTED = (SERIALIZE, DECOMPOSE)
# The stages whose outcome the report and the records draw and judge from their declaration alone (Stage.shown).
SHOWN = tuple(stage for stage in DECLARED if stage.shown is not None)

DEFAULT = tuple(stage.name for stage in DECLARED if stage.default)  # the default of --stages
OPT_IN = tuple(stage.name for stage in DECLARED if not stage.default)
KNOWN = DEFAULT + OPT_IN
# What --stages' help says of every stage: "check (run and compare with eager), decompose, ...".
HELP = ", ".join("%s (%s)" % (s.name, s.words) if s.words else s.name for s in DECLARED)


def parse(value: Union[str, Sequence[str]]) -> Tuple[str, ...]:
    """The stage words of ``--stages`` ("check, aoti" or a sequence), stripped, blanks left out."""
    words = value.split(",") if isinstance(value, str) else list(value)
    return tuple(word.strip() for word in words if word.strip())


def unknown(stages: Sequence[str]) -> Optional[str]:
    """What is wrong with ``stages`` (``--stages: unknown stage(s) ...``), or None where every one is known."""
    found = sorted(set(stages) - set(KNOWN))
    return "--stages: unknown stage(s) %s; known: %s" % (", ".join(found), ", ".join(KNOWN)) if found else None


BUDGETS = tuple(stage.budget for stage in DECLARED if stage.budget is not None)
T = TypeVar("T")


def with_budgets(cls: Type[T]) -> Type[T]:
    """``cls``, before ``dataclass`` makes it one, with a field per declared budget (:attr:`Budget.field`, its
    default): a request and a command's options hold every stage's budget with no line of their own. Read them
    with ``getattr(options, budget.field)``."""
    return add_fields(cls, ((budget.field, "float", budget.default) for budget in BUDGETS))


def budget_values(options: object) -> Dict[str, Any]:
    """Each declared budget's value in ``options`` (a request, a command's options), by field: what one passes to
    the other."""
    return {budget.field: float(getattr(options, budget.field)) for budget in BUDGETS}


def selected(names: Sequence[str]) -> Tuple[Stage, ...]:
    """The declared stages among ``names``, in declared order (the order the cell runs them)."""
    return tuple(stage for stage in DECLARED if stage.name in names)


def follow_ups(names: Sequence[str]) -> bool:
    """Whether a run of ``names`` keeps a product that it uses again in a fresh process."""
    return any(stage.follows for stage in selected(names))


def needs_set_up(names: Sequence[str]) -> bool:
    """Whether a run of ``names`` must import torch to key its results (see :attr:`Stage.needs_set_up`)."""
    return any(stage.needs_set_up for stage in selected(names))


def extra_seconds(names: Sequence[str], request: object) -> float:
    """What a cell of ``names`` may take on top of --timeout: the budgets that extend it, as ``request`` holds them."""
    return sum(float(getattr(request, s.budget.field)) for s in selected(names) if s.budget and s.budget.extends_cell)


def requirements(names: Sequence[str]) -> Tuple[str, ...]:
    """The packages the selected stages run with (:attr:`Stage.requires`), in declared order, each once."""
    return tuple(dict.fromkeys(package for stage in selected(names) for package in stage.requires))


def keys_of(stages: Sequence[str]) -> Tuple[str, ...]:
    """The record fields the selected ``stages`` write beside every cell's."""
    return tuple(key for stage in DECLARED if stage.name in stages for key in stage.keys)

"""The stages a cell runs on its exported program, each declared once.

A stage has a name (the word of ``--stages``), what ``--stages``' help says of it, whether it runs by default
or only where ``--stages`` names it, the name of its outcome's column in the report (where it has one of its
own), the record fields only a run that selected it writes (beside ``schema.CELL_KEYS``), the option that
bounds what it may take, and, for a stage in a worker module of its own, that module: ``matrix.worker.cell``
imports it and the cell calls its ``run`` on a passing cell. A new stage is that module and its declaration here.
``run --stages``, ``check --stages``, the record's columns and the report's stage columns read :data:`DECLARED`.

Standard library only, and Python 3.8 syntax: the worker imports this module inside every torch environment.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, Tuple, Union


@dataclass(frozen=True)
class Stage:
    """One stage (see the module's docstring)."""

    name: str
    words: str = ""  # what --stages' help says it does, after its name ("" says nothing more)
    default: bool = True  # runs unless --stages leaves it out; False: only where --stages names it
    label: Optional[str] = None  # the report's name for its outcome column; None: no column of its own
    keys: Tuple[str, ...] = ()  # record fields only a run that selected it writes, None where they do not apply
    budget: Optional[str] = None  # the option that bounds what it may take
    # The module of matrix.worker whose ``run(record, program, case)`` runs it on a passing cell; None for the
    # stages the cell runs itself (check, decompose, serialize, diagnose, aoti).
    module: Optional[str] = None


CHECK = Stage("check", "run and compare with eager")
DECOMPOSE = Stage("decompose", label="decomposition")
SERIALIZE = Stage("serialize", "save, then load in a process that never exported", label="save/load")
DIAGNOSE = Stage("diagnose", "draft_export on a failed export", budget="--diagnosis-budget")
# ``aoti_status`` is the stage's outcome (schema.AOTI_STATUSES); ``aoti_error_type`` and ``aoti_error`` the qualified
# class and first line of what failed, the line starting with the step (``compile:``, ``load:``, ``run:``);
# ``aoti_api`` the release's API that compiled and loads it; ``aoti_compile_s`` the compile, in a process forked from
# the cell; ``aoti_load_s`` and ``aoti_run_s`` loading the package and running it on the kept inputs, in a process
# that never compiled; ``aoti_package_bytes`` the size of the package (a ``.pt2``, or a bare ``.so`` before packages).
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
    budget="--aoti-timeout",
)
DECLARED = (CHECK, DECOMPOSE, SERIALIZE, DIAGNOSE, AOTI)  # in the order --stages' help names them
# The stages whose outcome the report shows in columns of its own, in the report's order.
REPORTED = (SERIALIZE, DECOMPOSE)

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


def keys_of(stages: Sequence[str]) -> Tuple[str, ...]:
    """The record fields the selected ``stages`` write beside every cell's."""
    return tuple(key for stage in DECLARED if stage.name in stages for key in stage.keys)

"""How each stage of a module of its own runs on a passing cell, registered by name like :data:`.jobs.KINDS`.

A stage is declared in :mod:`matrix.contract.stages` (its name, help, default, report column, record fields,
budget, module), which both sides read; its worker module provides ``run(record, program, case)``, which adds its
fields to the record of a cell that passed, after decompose and before the program is kept. The five stages the
cell runs itself (check, decompose, serialize, diagnose, aoti) declare no module.

Standard library only, Python 3.8 syntax; a stage's module imports torch inside ``run``, not at its top, since
the process that forks the cells imports it.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any, Callable, Dict, Sequence

from ..contract.stages import DECLARED, Stage

# A stage's run on a passing cell: (the cell's record, the exported program, the case) -> None; it updates the record.
Run = Callable[[Dict[str, Any], Any, Any], None]


def runs_of(declared: Sequence[Stage]) -> Dict[str, Run]:
    """Stage name -> the ``run`` of its worker module, for each of ``declared`` that names one."""
    return {stage.name: import_module("." + stage.module, __package__).run for stage in declared if stage.module}


RUNS = runs_of(DECLARED)

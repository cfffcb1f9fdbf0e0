"""How each stage of a module of its own runs on a passing cell, registered by name like :data:`.jobs.KINDS`.

A stage is declared in :mod:`matrix.contract.stages` (its name, help, default, report column, record fields,
budget), which both sides read; its worker module provides ``run(record, program, case)``, which adds its fields
to the record of a cell that passed, after decompose and before the program is kept, and is named here by an
import. The five stages the cell runs itself (check, decompose, serialize, diagnose, aoti) are not listed.

Standard library only (a stage imports torch when it runs), Python 3.8 syntax.
"""

from __future__ import annotations

from typing import Any, Callable, Dict

# A stage's run on a passing cell: (the cell's record, the exported program, the case) -> None; it updates the record.
Run = Callable[[Dict[str, Any], Any, Any], None]

# Stage name (contract/stages.py) -> how it runs on a passing cell.
RUNS: Dict[str, Run] = {}

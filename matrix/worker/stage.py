"""The stage protocol: what every stage of a cell is handed, what it returns, and the one registry of stages.

Each stage is declared once (:mod:`matrix.contract.stages`), and its declaration names the worker module that
runs it; that module's ``STAGE`` is a subclass of :class:`StageRun`. The cell makes one of each selected stage,
hands it the cell's :class:`Context`, and calls it in three steps, each stage in declared order:

- ``failed()`` where the export failed (the diagnosis), and nothing else;
- where it passed, ``before()``, before anything runs the exported program (running it can update its buffers
  in place, so the save, the compile and the ONNX export come first), then ``run()``;
- after the cell kept its program (or did not), ``kept(folder)``.

Each step returns the stage's record fields. A stage says which files it keeps beside the program
(:meth:`StageRun.files`) and which products the run uses again in a fresh process (:meth:`StageRun.follow_ups`,
a list of ``(product name, folder)``, contract/products.py). :meth:`StageRun.set_up` runs once in the run's
process before the cells are forked, and returns what else its results depend on (part of each cell's key).

A stage's module imports torch inside its steps, never at its top: the process that forks the cells imports it.
Standard library only, Python 3.8 syntax.
"""

from __future__ import annotations

import dataclasses
import io
from importlib import import_module
from typing import Any, Dict, List, Optional, Sequence, Tuple, Type

from ..contract.case import CaseInfo
from ..contract.stages import DECLARED, Stage

Fields = Dict[str, Any]


@dataclasses.dataclass
class Context:
    """One cell, as its stages see it."""

    info: CaseInfo
    mode: str
    found: Dict[str, bool]  # the capabilities of this torch
    device: str
    budgets: Dict[str, float]  # stage name -> what its budget option allows, in seconds
    timeout: float = 0.0  # the cell's --timeout
    keep: Optional[Any] = None  # a ``layout.Target`` where a passing cell keeps its program, or None
    cache: Optional[str] = None  # the result cache's folder; None: off
    origin: str = ""  # "<torch_version>/<run_id>": what something this cell keeps in the cache names
    private: Tuple[Optional[str], ...] = ()  # folders of this run whose files say nothing of the case
    dependency_set: str = ""  # the packages beside torch the cell runs with
    record: Fields = dataclasses.field(default_factory=dict)  # the record so far: read it, return your own fields
    case: Any = None  # the loaded case (``case.Case``)
    calls: List[Tuple[Any, Any]] = dataclasses.field(default_factory=list)  # eager's (args, kwargs), after its call
    expected: Any = None  # eager's outputs on the example inputs
    expected_extra: List[Any] = dataclasses.field(default_factory=list)  # on each extra input
    program: Any = None  # the ExportedProgram; None where the export failed
    saved: Optional[io.BytesIO] = None  # the program as saved before anything ran it (the serialize stage's)


class StageRun:
    """One stage on one cell (see the module's docstring); every step does nothing unless a stage says otherwise."""

    def __init__(self, declared: Stage, context: Context) -> None:
        self.declared, self.context = declared, context

    @property
    def budget(self) -> Optional[float]:
        """What this stage's budget option allows, in seconds; None where it declares none."""
        return self.context.budgets.get(self.declared.name)

    @classmethod
    def set_up(cls) -> Fields:
        return {}

    def failed(self) -> Fields:
        return {}

    def before(self) -> Fields:
        return {}

    def run(self) -> Fields:
        return {}

    def files(self) -> Tuple[Dict[str, str], Fields]:
        """The files to keep beside the program (name in its folder -> path now) and what meta.json says of them."""
        return {}, {}

    def kept(self, folder: Optional[str]) -> Fields:
        return {}

    def follow_ups(self, folder: Optional[str]) -> List[Tuple[str, str]]:
        return []


def runs_of(declared: Sequence[Stage]) -> Dict[str, Type[StageRun]]:
    """Stage name -> its ``STAGE``, from the worker module its declaration names."""
    return {stage.name: import_module("." + stage.module, __package__).STAGE for stage in declared}


_REGISTERED: Dict[str, Type[StageRun]] = {}


def registered() -> Dict[str, Type[StageRun]]:
    """Every declared stage's ``STAGE``, by name, imported on first use (a stage's module imports this one)."""
    if not _REGISTERED:
        _REGISTERED.update(runs_of(DECLARED))
    return _REGISTERED


def _selected(names: Sequence[str]) -> List[Stage]:
    return [stage for stage in DECLARED if stage.name in names]  # declared order


def start(names: Sequence[str], context: Context) -> List[StageRun]:
    """One run of each stage in ``names`` on the cell of ``context``, in declared order."""
    return [registered()[stage.name](stage, context) for stage in _selected(names)]


def set_up(names: Sequence[str]) -> Fields:
    """What the selected stages' results depend on beyond each cell's key, learnt once in the run's process."""
    fields: Fields = {}
    for stage in _selected(names):
        fields.update(registered()[stage.name].set_up())
    return fields

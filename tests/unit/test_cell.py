"""A stage declared with a worker module of its own: registered by its declaration, run on a passing cell."""

from __future__ import annotations

import sys
import types
from typing import Any, Dict

import pytest

from matrix.contract import stages as declared
from matrix.worker import cell

NAME = "_counted_calls"  # a module of matrix.worker made for this test only


def count_calls(record: Dict[str, Any], program: Any, case: Any) -> None:
    record["calls_counted"] = sum(node.op == "call_function" for node in program.graph.nodes)


@pytest.fixture
def stage_module(monkeypatch: pytest.MonkeyPatch) -> declared.Stage:
    module = types.ModuleType("matrix.worker." + NAME)
    module.run = count_calls  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    return declared.Stage("counted", "count the calls", default=False, keys=("calls_counted",), module=NAME)


def test_a_declared_module_is_registered_under_its_stage_name(stage_module: declared.Stage) -> None:
    runs = cell.runs_of(declared.DECLARED + (stage_module,))
    assert runs == {"counted": count_calls}


def test_the_stages_the_cell_runs_itself_declare_no_module() -> None:
    assert [s.name for s in declared.DECLARED if s.module is None] == list(declared.KNOWN)
    assert cell.STAGE_RUNS == {}


def test_a_missing_module_fails_at_registration_naming_it() -> None:
    with pytest.raises(ImportError, match="no_such_stage_module"):
        cell.runs_of((declared.Stage("gone", module="no_such_stage_module"),))

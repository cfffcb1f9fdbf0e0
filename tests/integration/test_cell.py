"""One cell's check stage: outputs and the inputs after the call must both match eager."""

from __future__ import annotations

import sys
import types
from typing import Any, Dict

import pytest
import torch

from matrix.contract import stages as declared
from matrix.contract.case import CaseInfo
from matrix.worker import cell, stage
from matrix.worker.case import Case

INFO = CaseInfo(name="mutates", path="mutates.py", description="d")


class AddsInPlace(torch.nn.Module):
    def forward(self, x):
        x.add_(1)
        return x * 2


class Adds(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x + 1) * 2


class Pure(torch.nn.Module):
    def forward(self, x):
        return (x + 1) * 2


def checked(exported: torch.nn.Module, eager: torch.nn.Module) -> Dict[str, Any]:
    case = Case(info=INFO, model=eager, example_args=(torch.zeros(3),))
    calls = [((torch.zeros(3),), {})]
    expected = eager(*calls[0][0])
    ep = torch.export.export(exported, (torch.zeros(3),))
    context = stage.Context(INFO, "strict", {}, "cpu", {}, case=case, calls=calls, expected=expected, program=ep)
    return stage.start(("check",), context)[0].run()


def test_a_program_that_mutates_its_input_as_eager_does_passes() -> None:
    record = checked(AddsInPlace(), AddsInPlace())
    assert record["check_status"] == "ok" and record["checked_inputs"] == 1


def test_a_program_that_leaves_an_input_eager_changed_is_a_mismatch() -> None:
    # Same outputs as eager, but eager also added 1 to its input in place; this program does not.
    record = checked(Pure(), AddsInPlace())
    assert record["status"] == "mismatch" and record["check_status"] == "mismatch"
    assert "input 0, after the call, differs from eager's: argument 0" in record["check_detail"]


class CountCalls(stage.StageRun):
    """A stage that counts the calls of the exported program, and says which products it kept."""

    def run(self) -> Dict[str, Any]:
        program = self.context.program
        calls = sum(node.op == "call_function" for node in program.graph.nodes)
        return {"calls_counted": calls, "calls_case": self.context.case.info.name}


def test_a_selected_stage_runs_on_a_passing_cell_and_writes_its_fields(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module = types.ModuleType("matrix.worker._counted_calls")  # a stage module made for this test only
    module.STAGE = CountCalls  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    counted = declared.Stage(
        "counted", "count the calls", default=False, keys=("calls_counted",), module="_counted_calls"
    )
    # The registry filled from the real declarations first: filled after DECLARED is patched, it would keep the
    # test's stage for every later test of this process.
    registry = stage.registered()
    monkeypatch.setattr(stage, "DECLARED", stage.DECLARED + (counted,))
    monkeypatch.setitem(registry, "counted", stage.runs_of((counted,))["counted"])
    info = CaseInfo(name="adds", path="adds.py", description="d")

    def load(_: CaseInfo) -> Case:
        return Case(info=info, model=Adds(), example_args=(torch.ones(3),))

    chosen = cell.run_cell(info, "non-strict", {}, load, stages=("check", "counted"))
    assert chosen["status"] == "pass" and chosen["check_status"] == "ok"
    assert chosen["calls_counted"] == 3 and chosen["calls_case"] == "adds"
    left_out = cell.run_cell(info, "non-strict", {}, load, stages=("check",))
    assert left_out["status"] == "pass" and "calls_counted" not in left_out

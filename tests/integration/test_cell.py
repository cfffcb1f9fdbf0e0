"""One cell's check stage: outputs and the inputs after the call must both match eager."""

from __future__ import annotations

from typing import Any, Dict

import torch

from matrix.contract.case import CaseInfo
from matrix.worker import cell
from matrix.worker.case import Case

INFO = CaseInfo(name="mutates", path="mutates.py", description="d")


class AddsInPlace(torch.nn.Module):
    def forward(self, x):
        x.add_(1)
        return x * 2


class Pure(torch.nn.Module):
    def forward(self, x):
        return (x + 1) * 2


def checked(exported: torch.nn.Module, eager: torch.nn.Module) -> Dict[str, Any]:
    case = Case(info=INFO, model=eager, example_args=(torch.zeros(3),))
    calls = [((torch.zeros(3),), {})]
    expected = eager(*calls[0][0])
    record: Dict[str, Any] = {}
    ep = torch.export.export(exported, (torch.zeros(3),))
    cell._check(record, case, ep, expected, [], INFO, calls)
    return record


def test_a_program_that_mutates_its_input_as_eager_does_passes() -> None:
    record = checked(AddsInPlace(), AddsInPlace())
    assert record["check_status"] == "ok" and record["checked_inputs"] == 1


def test_a_program_that_leaves_an_input_eager_changed_is_a_mismatch() -> None:
    # Same outputs as eager, but eager also added 1 to its input in place; this program does not.
    record = checked(Pure(), AddsInPlace())
    assert record["status"] == "mismatch" and record["check_status"] == "mismatch"
    assert "input 0, after the call, differs from eager's: argument 0" in record["check_detail"]

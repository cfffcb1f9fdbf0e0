"""Diagnosis of a failed export with draft_export: problems by kind, message, user frame and count."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Any, Dict, List

import pytest
import torch

from matrix.worker import capabilities, diagnosis

from conftest import FIXTURES, read_cells, run_matrix

FOUND = capabilities.detect()


class Kind(enum.Enum):
    DATA_DEPENDENT_ERROR = 1
    MISMATCHED_FAKE_KERNEL = 2


class Failure:
    def __init__(self, kind: Kind, data: Dict[str, Any]) -> None:
        self.failure_type, self.data = kind, data

    def print(self, names: Dict[int, str]) -> str:
        return "####\n1. A problem of kind %s.\n   more detail" % self.failure_type.name


class Report:
    def __init__(self, failures: List[Failure]) -> None:
        self.failures = failures
        self.str_to_filename = {0: "/site-packages/torch/nn/modules/module.py", 1: "/home/me/model.py"}


def frame(file: int, line: int, name: str, loc: str = "") -> Dict[str, Any]:
    return {"filename": file, "line": line, "name": name, "loc": loc}


def test_problems_are_grouped_with_the_users_frame_and_counted() -> None:
    stack = [frame(0, 1778, "_call_impl"), frame(1, 12, "forward", "if n > 2:")]
    report = Report(
        [
            Failure(Kind.DATA_DEPENDENT_ERROR, {"expr": "u0 > 2", "user_stack": stack, "occurrences": 3}),
            Failure(Kind.DATA_DEPENDENT_ERROR, {"expr": "u0 > 2", "user_stack": stack, "occurrences": 2}),
            Failure(Kind.MISMATCHED_FAKE_KERNEL, {"op": "mylib.foo"}),
            Failure(Kind.MISMATCHED_FAKE_KERNEL, {}),
        ]
    )
    user_frame = "model.py:12 in forward: if n > 2:"
    printed = "A problem of kind MISMATCHED_FAKE_KERNEL."
    assert diagnosis.problems_of(report) == [
        {"kind": "data-dependent-error", "message": "cannot decide u0 > 2", "frame": user_frame, "count": 5},
        {"kind": "mismatched-fake-kernel", "message": printed, "frame": None, "count": 1},
        {"kind": "mismatched-fake-kernel", "message": "operator mylib.foo", "frame": None, "count": 1},
    ]
    assert diagnosis.problems_of(None) == []


def test_a_release_without_draft_export_is_not_applicable_never_an_error() -> None:
    assert diagnosis.diagnose(None, "strict", {"draft_export": False}, 10.0) == {"diagnosis_status": "not-applicable"}


@pytest.mark.integration
@pytest.mark.skipif(not FOUND["draft_export"], reason="torch %s has no draft_export" % torch.__version__)
def test_a_data_dependent_failure_is_diagnosed_in_its_cell(tmp_path: Path) -> None:
    run_matrix("run", "--cases", str(FIXTURES / "diagnosis"), "--out", str(tmp_path), "--progress", "none")
    cells = {c["mode"]: c for c in read_cells(tmp_path)}
    for mode, cell in cells.items():
        assert cell["status"] == "fail", mode
        assert cell["diagnosis_status"] == "done", (mode, cell["diagnosis"])
        kinds = {problem["kind"] for problem in cell["diagnosis"]}
        assert "data-dependent-error" in kinds, cell["diagnosis"]
        frames = [p["frame"] for p in cell["diagnosis"] if p["kind"] == "data-dependent-error"]
        assert any(f and f.startswith("data_dependent_branch.py:") and "if total > 2" in f for f in frames), frames
    skipped = tmp_path / "no-diagnosis"
    run_matrix("run", "--cases", str(FIXTURES / "diagnosis"), "--out", str(skipped), "--stages", "check")
    assert {c["diagnosis_status"] for c in read_cells(skipped)} == {None}

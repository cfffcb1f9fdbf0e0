"""Diagnosis of a failed export with draft_export: problems by kind, message, user frame and count."""

from __future__ import annotations

import enum
from typing import Any, Dict, List

from matrix.worker import diagnosis


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

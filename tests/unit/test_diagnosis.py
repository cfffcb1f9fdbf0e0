"""Diagnosis of a failed export with draft_export: problems by kind, message, user frame and count."""

from __future__ import annotations

import enum
import json
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from matrix.contract.case import CaseInfo
from matrix.contract.errors import UserError
from matrix.contract.requests import RunRequest
from matrix.contract.stages import DIAGNOSE, DIAGNOSIS_SHARE
from matrix.worker import diagnosis, manifests, problems, reuse, stage


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
    assert problems.problems_of(report) == [
        {"kind": "data-dependent-error", "message": "cannot decide u0 > 2", "frame": user_frame, "count": 5},
        {"kind": "mismatched-fake-kernel", "message": printed, "frame": None, "count": 1},
        {"kind": "mismatched-fake-kernel", "message": "operator mylib.foo", "frame": None, "count": 1},
    ]
    assert problems.problems_of(None) == []


def test_a_release_without_draft_export_is_not_applicable_never_an_error() -> None:
    assert diagnosis.diagnose(None, "strict", {"draft_export": False}, 10.0) == {"diagnosis_status": "not-applicable"}


# --- the budget, and diagnoses kept for later releases ------------------------------------------

FAILURE = {"error_type": "torch._dynamo.exc.UserError", "error_message": "Could not guard on zuf0 > 2.0"}
CELL = {"case": "a/b", "source": "cases", "mode": "strict", "device": "cpu", "dependency_set": ""}


def test_the_budget_is_its_own_and_never_past_the_share_of_the_timeout() -> None:
    share = DIAGNOSIS_SHARE * 120.0  # 72 s into the cell
    assert diagnosis.budget(15.0, share, 5.0) == 15.0  # the option, not 72 - 5
    assert diagnosis.budget(15.0, share, 65.0) == pytest.approx(7.0)  # what the timeout's share leaves
    assert diagnosis.budget(15.0, share, 80.0) < 0  # none left: diagnose() says skipped
    assert diagnosis.diagnose(None, "strict", {"draft_export": True}, -8.0)["diagnosis_status"] == "skipped"


def test_the_option_is_validated_like_the_timeout_and_defaults_to_15_seconds() -> None:
    assert DIAGNOSE.budget is not None and RunRequest(out="o").diagnosis_budget == DIAGNOSE.budget.default == 15.0
    assert RunRequest.from_argv(["--out", "o", "--diagnosis-budget", "4.5"]).diagnosis_budget == 4.5
    assert RunRequest(out="o", diagnosis_budget=4.5).argv() == ["--diagnosis-budget", "4.5", "--out", "o"]
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(UserError, match="--diagnosis-budget"):
            RunRequest(out="o", diagnosis_budget=bad).validate()


def test_the_key_is_the_case_mode_error_worker_and_set_not_the_release_or_the_run() -> None:
    base = diagnosis.diagnosis_key("case-hash", CELL, FAILURE)
    elsewhere = dict(FAILURE, torch_version="2.12.1+cpu", run_id="abc", export_s=3.0, total_s=9.0, status="fail")
    assert diagnosis.diagnosis_key("case-hash", CELL, elsewhere) == base
    changed = [
        diagnosis.diagnosis_key("other-source", CELL, FAILURE),
        diagnosis.diagnosis_key("case-hash", dict(CELL, mode="non-strict"), FAILURE),
        diagnosis.diagnosis_key("case-hash", dict(CELL, dependency_set="einops"), FAILURE),
        diagnosis.diagnosis_key("case-hash", dict(CELL, device="cuda"), FAILURE),
        diagnosis.diagnosis_key("case-hash", CELL, dict(FAILURE, error_type="RuntimeError")),
        diagnosis.diagnosis_key("case-hash", CELL, dict(FAILURE, error_message="Could not guard on zuf0 > 3.0")),
    ]
    assert len({base, *changed}) == len(changed) + 1
    assert diagnosis.signature(elsewhere) == FAILURE


def test_the_key_changes_with_the_workers_code(monkeypatch: pytest.MonkeyPatch) -> None:
    base = diagnosis.diagnosis_key("case-hash", CELL, FAILURE)
    monkeypatch.setattr(reuse, "worker_fingerprint", lambda: "another worker")
    assert diagnosis.diagnosis_key("case-hash", CELL, FAILURE) != base


@pytest.fixture(autouse=True)
def helper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A module beside the case that its cell read: what a cell's process records (reads.so_far) names it."""
    path = tmp_path / "cases" / "helper.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("VALUE = 1\n")

    def so_far(case_file: str, exclude: Any = ()) -> List[List[str]]:
        return [[manifests.FILE, "helper.py", str(reuse.file_hash(str(path)))]]

    monkeypatch.setattr(diagnosis.reads, "so_far", so_far)
    return path


def _kept(tmp_path: Path, origin: str) -> diagnosis.Kept:
    case = tmp_path / "cases" / "b.py"
    if not case.exists():
        case.write_text("model = None\n")
    return diagnosis.Kept(str(tmp_path / "cache"), str(case), CELL, origin)


DONE = {"diagnosis_status": "done", "diagnosis": [{"kind": "data-dependent-error", "message": "m", "count": 1}]}


def diagnosing(monkeypatch: pytest.MonkeyPatch, fields: Dict[str, Any]) -> List[Tuple[str, float]]:
    """Diagnoses that end with ``fields``, without draft_export: the (mode, budget) of each one run, in order."""
    ran: List[Tuple[str, float]] = []

    def fake(case: Any, mode: str, found: Dict[str, bool], budget_s: float) -> Dict[str, Any]:
        ran.append((mode, budget_s))
        return dict(fields)

    monkeypatch.setattr(diagnosis, "diagnose", fake)
    return ran


def test_a_finished_diagnosis_is_reused_naming_the_release_and_run_that_ran_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran = diagnosing(monkeypatch, DONE)
    found = {"draft_export": True}
    first = diagnosis.diagnose_failure(None, "strict", found, 15.0, FAILURE, _kept(tmp_path, "2.12.1+cpu/run1"))
    assert first == DONE and [mode for mode, _ in ran] == ["strict"]
    later = dict(FAILURE, torch_version="2.13.0+cpu", run_id="run2")
    again = diagnosis.diagnose_failure(None, "strict", found, 0.0, later, _kept(tmp_path, "2.13.0+cpu/run2"))
    assert again == dict(DONE, diagnosis_reused_from="2.12.1+cpu/run1") and [mode for mode, _ in ran] == [
        "strict"
    ]  # no time needed
    other = dict(FAILURE, error_message="another error")
    assert diagnosis.diagnose_failure(None, "strict", found, 15.0, other, _kept(tmp_path, "x/y")) == DONE
    assert [mode for mode, _ in ran] == ["strict", "strict"]
    # Without draft_export, or with the cache off, nothing is looked up.
    assert diagnosis.diagnose_failure(None, "strict", {}, 15.0, FAILURE, _kept(tmp_path, "x/z")) == DONE
    assert diagnosis.diagnose_failure(None, "strict", found, 15.0, FAILURE, None) == DONE and len(ran) == 4


@pytest.mark.parametrize(
    "fields",
    [
        {"diagnosis_status": "timeout", "diagnosis": [{"kind": "budget", "message": "over 15 s"}]},
        {"diagnosis_status": "skipped", "diagnosis": [{"kind": "budget", "message": "no time left"}]},
        {"diagnosis_status": "error", "diagnosis": [{"kind": "draft-export-error", "message": "MemoryError: x"}]},
    ],
)
def test_what_says_more_about_the_machine_is_never_kept(tmp_path: Path, fields: Dict[str, Any]) -> None:
    kept = _kept(tmp_path, "2.12.1+cpu/run1")
    where = kept.key(FAILURE)
    assert where is not None
    kept.put(where, FAILURE, fields)
    assert kept.get(where) is None
    error = {"diagnosis_status": "error", "diagnosis": [{"kind": "draft-export-error", "message": "ValueError: no"}]}
    kept.put(where, dict(FAILURE, status="fail", failed_stage="export"), error)
    assert kept.get(where) == dict(error, diagnosis_reused_from="2.12.1+cpu/run1")
    # The entry says which failure it diagnosed, for a reader of the cache.
    (entry,) = (tmp_path / "cache" / diagnosis.KIND).rglob("*.json")
    assert json.loads(entry.read_text())["record"] == dict(
        FAILURE, status="fail", failed_stage="export", reused_from="2.12.1+cpu/run1", **error
    )


def test_a_diagnosis_stands_only_while_every_file_its_cell_read_is_unchanged(
    tmp_path: Path, helper: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = _kept(tmp_path, "2.12.1+cpu/run1")
    where = kept.key(FAILURE)
    assert where is not None
    kept.put(where, FAILURE, DONE)
    assert kept.get(where) == dict(DONE, diagnosis_reused_from="2.12.1+cpu/run1")
    helper.write_text("VALUE = 2\n")  # the module the cell imported, edited: the failure may be another one
    assert _kept(tmp_path, "x/y").get(where) is None
    # A cell whose reads are not recorded (no isolation) keeps nothing.
    monkeypatch.setattr(diagnosis.reads, "so_far", lambda case_file, exclude=(): None)
    fresh = _kept(tmp_path, "x/z")
    fresh.put(where, FAILURE, DONE)
    assert fresh.get(where) is None


def test_a_case_whose_source_cannot_be_read_has_no_key(tmp_path: Path) -> None:
    kept = diagnosis.Kept(str(tmp_path / "cache"), str(tmp_path / "gone.py"), CELL, "x/y")
    assert kept.key(FAILURE) is None


def test_the_diagnose_stage_looks_diagnoses_up_only_with_the_cache_on() -> None:
    info = CaseInfo(name="a/b", path="cases/a/b.py", description="d")
    context = stage.Context(info, "strict", {}, "cpu", {"diagnose": 4.0}, 120.0, cache="/c", origin="2.13.0+cpu/r")
    run = stage.start(("diagnose",), context)[0]
    kept = run.kept_diagnoses()  # type: ignore[attr-defined]
    assert isinstance(kept, diagnosis.Kept) and kept.origin == "2.13.0+cpu/r" and run.budget == 4.0
    assert kept.cell == {"case": "a/b", "source": "cases", "mode": "strict", "device": "cpu", "dependency_set": ""}
    context.cache = None
    assert run.kept_diagnoses() is None  # type: ignore[attr-defined]


def test_a_diagnosis_out_of_time_is_not_tried_again_here_with_that_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    over = {"diagnosis_status": "timeout", "diagnosis": [{"kind": "budget", "message": "over 15 s"}]}
    calls = diagnosing(monkeypatch, over)
    found = {"draft_export": True}
    first = diagnosis.diagnose_failure(None, "strict", found, 15.0, FAILURE, _kept(tmp_path, "2.12.1+cpu/run1"))
    assert first == over and [budget for _, budget in calls] == [15.0]
    later = dict(FAILURE, torch_version="2.13.0+cpu", run_id="run2")
    again = diagnosis.diagnose_failure(None, "strict", found, 15.0, later, _kept(tmp_path, "2.13.0+cpu/run2"))
    assert again == dict(over, diagnosis_reused_from="2.12.1+cpu/run1") and [budget for _, budget in calls] == [15.0]
    # Another budget, or another machine, tries again; a finished diagnosis never comes from this key.
    diagnosis.diagnose_failure(None, "strict", found, 40.0, later, _kept(tmp_path, "2.13.0+cpu/run3"))
    assert [budget for _, budget in calls] == [15.0, 40.0]
    monkeypatch.setattr(diagnosis, "_machine", lambda: {"cpu": "another", "cores": 64, "machine": "x86_64"})
    diagnosis.diagnose_failure(None, "strict", found, 15.0, later, _kept(tmp_path, "2.13.0+cpu/run4"))
    assert [budget for _, budget in calls] == [15.0, 40.0, 15.0]
    kept = _kept(tmp_path, "x/y")
    assert kept.get(kept.key(FAILURE) or "") is None  # the budget-free key holds nothing for it


def test_a_case_that_ran_out_of_time_is_skipped_on_a_later_release_that_fails_otherwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    over = {"diagnosis_status": "timeout", "diagnosis": [{"kind": "budget", "message": "over 15 s"}]}
    calls = diagnosing(monkeypatch, over)
    found = {"draft_export": True}
    diagnosis.diagnose_failure(None, "strict", found, 15.0, FAILURE, _kept(tmp_path, "2.12.1+cpu/run1"))
    # The next release fails with another error: its diagnosis is skipped, naming the one that ran out of time.
    later = dict(FAILURE, torch_version="2.13.0+cpu", run_id="run2", error_message="another error")
    skipped = diagnosis.diagnose_failure(None, "strict", found, 15.0, later, _kept(tmp_path, "2.13.0+cpu/run2"))
    assert skipped["diagnosis_status"] == "skipped" and len(calls) == 1, skipped
    (why,) = skipped["diagnosis"]
    assert why["kind"] == "budget" and why["message"].endswith("ran out of 15 s on 2.12.1+cpu/run1"), why
    assert "diagnosis_reused_from" not in skipped  # nothing of the other error's diagnosis is reused
    # A larger budget tries again; so does the other mode.
    diagnosis.diagnose_failure(None, "strict", found, 60.0, later, _kept(tmp_path, "2.13.0+cpu/run3"))
    kept = diagnosis.Kept(
        str(tmp_path / "cache"), str(tmp_path / "cases" / "b.py"), dict(CELL, mode="non-strict"), "2.13.0+cpu/run4"
    )
    diagnosis.diagnose_failure(None, "non-strict", found, 15.0, later, kept)
    assert [(mode, budget) for mode, budget in calls] == [("strict", 15.0), ("strict", 60.0), ("non-strict", 15.0)]


def test_a_budget_that_runs_out_inside_torch_is_out_of_time_even_when_torch_wraps_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def wrapping(case: Any, mode: str, found: Dict[str, bool]) -> Any:
        try:
            time.sleep(5)
        except Exception as exc:  # as dynamo does with what a traced call raises
            raise RuntimeError("Dynamo failed to run FX node with fake tensors") from exc

    monkeypatch.setattr(diagnosis, "_draft_report", wrapping)
    fields = diagnosis.diagnose(None, "strict", {"draft_export": True}, 0.2)
    assert fields["diagnosis_status"] == "timeout", fields
    assert fields["diagnosis"] == [{"kind": "budget", "message": "over 0 s, before any problem was met"}]

    def failing(case: Any, mode: str, found: Dict[str, bool]) -> Any:
        raise RuntimeError("draft_export gave up")

    monkeypatch.setattr(diagnosis, "_draft_report", failing)  # an error of its own, with time left, stays one
    assert diagnosis.diagnose(None, "strict", {"draft_export": True}, 5.0)["diagnosis_status"] == "error"

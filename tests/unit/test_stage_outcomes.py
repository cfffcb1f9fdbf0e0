"""A stage's outcome read and judged from its declaration alone (records/stage_outcomes.py), for every stage that
declares one: its glyph, whether it failed, its error's line and its tooltip."""

from __future__ import annotations

import pytest

from matrix.contract import stages
from matrix.contract.schema import STATUSES
from matrix.records import failures, stage_outcomes


@pytest.mark.parametrize("stage", stage_outcomes.SHOWN, ids=lambda s: s.name)
def test_every_outcome_is_drawn_as_a_status_and_only_a_tried_one_that_did_not_pass_fails(stage: stages.Stage) -> None:
    shown = stage_outcomes.shown(stage)
    for outcome in shown.outcomes:
        drawn = stage_outcomes.drawn(stage, outcome)
        assert drawn in STATUSES
        assert shown.failed(outcome) == (outcome in shown.tried and outcome != shown.passing)
        # A pass is drawn as a pass, a failure as a failing status, an outcome that did not try as not applicable.
        if outcome == shown.passing:
            assert drawn == "pass"
        elif outcome in shown.tried:
            assert drawn in ("mismatch", "fail", "crash", "timeout")
        else:
            assert drawn == "not-applicable"
    assert set(shown.error_keys) <= set(shown.detail_keys) <= set(stage.keys) and shown.status_key in stage.keys


def test_a_failed_stage_says_its_error_in_one_line_and_its_details_in_its_tooltip() -> None:
    row = {
        "status": "pass",
        "onnx_status": "fail",
        "onnx_step": "export",
        "onnx_error_type": "torch.onnx.OnnxExporterError",
        "onnx_error": "no function\nthe traceback",
        "onnx_opset": 18.0,  # a published table's float
        "aoti_status": "not-applicable",  # never a failure
    }
    assert [s.name for s in stage_outcomes.failed(row)] == ["onnx"]
    assert failures.failed_stages(row) == ("ONNX",)
    assert failures.stage_line(row, "ONNX") == "export: torch.onnx.OnnxExporterError: no function"
    assert stage_outcomes.said(row) == (
        ("aoti", "not-applicable", ""), ("ONNX", "fail", "export: torch.onnx.OnnxExporterError: no function")
    )  # fmt: skip
    tip = stage_outcomes.tip(row, stages.ONNX)
    assert tip.startswith("ONNX: fail — the ONNX export") and "; onnx_step: export; " in tip and "\n" not in tip
    assert tip.endswith("; onnx_opset: 18")
    passed = stage_outcomes.tip({"onnx_status": "pass", "onnx_opset": 18}, stages.ONNX)
    assert "onnx_opset" not in passed  # a pass says what it means, not the failure's fields

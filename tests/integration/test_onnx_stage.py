"""The onnx stage on real exports: converted, run in onnxruntime and compared; absent packages, crashes and hangs
end the stage alone, recorded as such."""

from __future__ import annotations

import importlib.util
import json
import os
import time
from pathlib import Path
from typing import Any, Dict, Optional

import pytest
import torch

from matrix.contract import layout
from matrix.contract.case import CaseInfo
from matrix.worker import cell, onnx_stage
from matrix.worker.case import Case

INFO = CaseInfo(name="adds", path="adds.py", description="d")
needs_onnxruntime = pytest.mark.skipif(
    any(importlib.util.find_spec(name) is None for name in onnx_stage.PACKAGES),
    reason="needs onnx, onnxscript and onnxruntime installed (pip install onnx onnxscript onnxruntime)",
)


class Adds(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x + 1) * 2


class Items(torch.nn.Module):
    """Eager gives Python numbers; the ONNX model gives 0-d tensors for them."""

    def forward(self, x: torch.Tensor) -> Any:
        return x * 2, (x.sum() > 0)


def _load(model: torch.nn.Module, *extra: Any) -> Any:
    def load(_: CaseInfo) -> Case:
        return Case(info=INFO, model=model, example_args=(torch.ones(3),), extra_args=extra)

    return load


def _run(model: Optional[torch.nn.Module] = None, **more: Any) -> Dict[str, Any]:
    load = _load(model or Adds(), (torch.full((3,), -2.0),))
    return cell.run_cell(INFO, "non-strict", {}, load, stages=("check", "onnx"), timeout=120.0, **more)


def _without(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """Make ``names`` not installed, as the stage's look-up sees them."""
    find = importlib.util.find_spec

    def hidden(name: str, *args: Any) -> Optional[Any]:
        return None if name.split(".")[0] in names else find(name, *args)

    monkeypatch.setattr(onnx_stage.importlib.util, "find_spec", hidden)


def test_without_onnx_and_onnxscript_the_stage_is_not_applicable_and_the_cell_passes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _without(monkeypatch, *onnx_stage.PACKAGES)
    record = _run()
    assert record["status"] == "pass" and record["check_status"] == "ok"
    assert record["onnx_status"] == "not-applicable"
    assert record["onnx_error"] == "needs onnx and onnxscript, which this environment does not have"
    assert record.get("onnx_step") is None and record.get("onnx_export_s") is None


@needs_onnxruntime
def test_a_passing_cell_is_converted_run_on_every_input_and_matches_eager() -> None:
    record = _run()
    assert record["status"] == "pass" and record["onnx_status"] == "pass", record
    assert record["onnx_api"] == onnx_stage.ON_PROGRAM and record["onnx_checked_inputs"] == 2
    assert record["onnx_opset"] >= 18 and record["onnx_nodes"] >= 2 and record["onnx_bytes"] > 0
    assert record.get("onnx_step") is None and record.get("onnx_error") is None
    assert record["onnxruntime_version"] == __import__("onnxruntime").__version__
    assert all(record[key] >= 0 for key in ("onnx_export_s", "onnx_save_s", "onnx_session_s", "onnx_run_s"))


@needs_onnxruntime
def test_eagers_python_numbers_are_compared_with_the_models_0d_tensors() -> None:
    record = _run(Items())
    assert record["onnx_status"] == "pass", record


@needs_onnxruntime
def test_other_numbers_than_eagers_are_a_mismatch_of_the_stage_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    real = onnx_stage._session

    class Skewed:
        def __init__(self, session: Any) -> None:
            self.session = session

        def get_inputs(self) -> Any:
            return self.session.get_inputs()

        def run(self, names: Any, feeds: Any) -> Any:
            return [out + 1 for out in self.session.run(names, feeds)]

    monkeypatch.setattr(onnx_stage, "_session", lambda path: Skewed(real(path)))
    record = _run()
    assert record["status"] == "pass" and record["onnx_status"] == "mismatch" and record["onnx_step"] == "run"
    assert record["onnx_error"].startswith("input 0: output 0:")


@needs_onnxruntime
def test_without_onnxruntime_the_export_results_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    _without(monkeypatch, "onnxruntime")
    record = _run()
    assert record["onnx_status"] == "not-applicable" and record["onnx_step"] == "session"
    assert "onnxruntime is not installed" in record["onnx_error"]
    assert record["onnx_opset"] >= 18 and record["onnx_nodes"] >= 2 and record.get("onnx_session_s") is None


@needs_onnxruntime
def test_a_crash_in_the_onnxruntime_session_ends_the_stage_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(onnx_stage, "_session", lambda path: os._exit(3))
    record = _run()
    assert record["status"] == "pass" and record["check_status"] == "ok"
    assert record["onnx_status"] == "crash" and record["onnx_step"] == "session"
    assert "exited with code 3" in record["onnx_error"]


@needs_onnxruntime
def test_a_hang_in_the_run_is_the_stages_timeout_and_the_cell_keeps_its_status(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(onnx_stage, "_run_and_compare", lambda session, ctx: time.sleep(600))
    load = _load(Adds())
    start = time.monotonic()
    record = cell.run_cell(INFO, "non-strict", {}, load, stages=("check", "onnx"), timeout=30.0)
    # Killed at its budget, well before the 600 s it would sleep; the margin is for a loaded machine's start-up.
    assert time.monotonic() - start < 120.0
    assert record["status"] == "pass" and record["onnx_status"] == "timeout" and record["onnx_step"] == "run"
    assert "was killed" in record["onnx_error"]


@needs_onnxruntime
def test_the_model_is_kept_with_the_saved_program(tmp_path: Path) -> None:
    record = _run(artifacts=layout.Target(str(tmp_path), "cpu"))
    assert record["artifact"] == "saved" and record["onnx_status"] == "pass"
    folders = [Path(root) for root, _, files in os.walk(tmp_path) if layout.META in files]
    assert len(folders) == 1
    meta = json.loads((folders[0] / layout.META).read_text())
    assert meta["onnx"]["file"] == onnx_stage.MODEL and (folders[0] / onnx_stage.MODEL).stat().st_size > 0
    assert onnx_stage.MODEL in [entry["name"] for entry in meta["files"]]
    assert layout.verify(str(folders[0]), meta) is None  # listed and hashed with the rest


@needs_onnxruntime
def test_a_run_without_onnxruntime_says_so_once_before_its_cells(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _without(monkeypatch, "onnxruntime")
    assert onnx_stage.OnnxStage.set_up() == {}  # nothing of the cells' keys: the installed packages are in them
    said = capsys.readouterr().err
    assert said.count("onnxruntime is not installed") == 1 and "exported, not run" in said
    monkeypatch.undo()
    onnx_stage.OnnxStage.set_up()
    assert "onnxruntime" not in capsys.readouterr().err

"""Diagnosis in a real run: a data-dependent failure is diagnosed in its cell."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from matrix.worker import capabilities

from conftest import FIXTURES, read_cells, run_matrix

FOUND = capabilities.detect()


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

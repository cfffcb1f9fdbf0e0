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


@pytest.mark.skipif(not FOUND["draft_export"], reason="torch %s has no draft_export" % torch.__version__)
def test_a_diagnosis_out_of_budget_lists_what_it_met_and_leaves_no_trace_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setenv("TMPDIR", str(temporary))
    out = tmp_path / "out"
    run_matrix(
        "run", "--cases", str(FIXTURES / "slow_diagnosis"), "--mode", "non-strict", "--diagnosis-budget", "4",
        "--out", str(out), "--progress", "none",
    )  # fmt: skip
    (cell,) = read_cells(out)
    assert cell["status"] == "fail" and cell["diagnosis_status"] == "timeout", cell
    budget, *met = cell["diagnosis"]
    assert budget["kind"] == "budget" and budget["message"].startswith("over 4 s"), budget
    frames = [p["frame"] for p in met if p["kind"] == "data-dependent-error"]
    assert any(f and f.startswith("data_dependent_then_slow.py:") and "if total > 2" in f for f in frames), met
    assert cell["total_s"] < 40, cell["total_s"]  # the tail sleeps 60 s: the budget stopped it
    # draft_export's trace file went to the diagnosis's own folder, which is gone.
    assert not [p.name for p in temporary.iterdir() if p.name.startswith(("export_", "export-matrix-draft-"))]


@pytest.mark.skipif(not FOUND["draft_export"], reason="torch %s has no draft_export" % torch.__version__)
def test_the_problems_kept_as_draft_export_meets_them_are_those_of_its_report() -> None:
    import runpy

    from matrix.worker import problems

    case = runpy.run_path(str(FIXTURES / "diagnosis" / "data_dependent_branch.py"))
    met: list = []
    with problems.keeping_records(met):
        program = torch.export.draft_export(case["model"], case["example_args"])
    from_report = problems.problems_of(program._report)
    assert from_report and {p["kind"] for p in from_report} == {"data-dependent-error"}, from_report
    assert problems.problems_met(met) == from_report

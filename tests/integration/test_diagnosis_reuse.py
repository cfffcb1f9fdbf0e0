"""A failed export's diagnosis kept in the result cache: the same failure is not diagnosed again.

The cell result cache would reuse a whole failing cell whose key matches; these runs change what
the cell key covers and the diagnosis key does not (--timeout, --stages, --diagnosis-budget), so
that the cell runs again and only its diagnosis is reused.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Dict

import pytest
import torch

from matrix.worker import capabilities

from conftest import FIXTURES, read_cells, run_matrix

FOUND = capabilities.detect()


def cells(cases: Path, out: Path, *extra: str) -> Dict[str, Dict[str, Any]]:
    run_matrix("run", "--cases", str(cases), "--out", str(out), "--progress", "none", *extra)
    return {cell["mode"]: cell for cell in read_cells(out)}


@pytest.mark.slow
@pytest.mark.skipif(not FOUND["draft_export"], reason="torch %s has no draft_export" % torch.__version__)
def test_a_diagnosis_is_reused_where_only_the_cell_key_changed_and_never_without_the_cache(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    shutil.copytree(FIXTURES / "diagnosis", cases)
    cache = ("--cache", str(tmp_path / "cache"))
    first = cells(cases, tmp_path / "one", *cache)
    assert set(first) == {"strict", "non-strict"}
    for mode, cell in first.items():
        assert cell["status"] == "fail" and cell["diagnosis_status"] == "done", (mode, cell["diagnosis"])
        assert cell["diagnosis"] and cell["diagnosis_reused_from"] is None and cell["reused_from"] is None
    origin = "%s/%s" % (first["strict"]["torch_version"], first["strict"]["run_id"])

    # Another --timeout, --stages or --diagnosis-budget: another cell key, the same diagnosis key.
    for number, extra in enumerate(
        [("--timeout", "100"), ("--stages", "check,diagnose"), ("--diagnosis-budget", "5")], start=2
    ):
        again = cells(cases, tmp_path / ("run%d" % number), *cache, *extra)
        for mode, cell in again.items():
            assert cell["reused_from"] is None, extra  # the cell ran
            assert cell["run_id"] != first[mode]["run_id"]
            assert cell["status"] == "fail" and cell["error_message"] == first[mode]["error_message"]
            assert cell["diagnosis_status"] == "done", (extra, cell["diagnosis"])
            assert cell["diagnosis"] == first[mode]["diagnosis"], extra
            assert cell["diagnosis_reused_from"] == origin, extra

    # Without the cache, the diagnosis runs again, and finds the same.
    fresh = cells(cases, tmp_path / "plain", *cache, "--no-cache", "--timeout", "90")
    for mode, cell in fresh.items():
        assert cell["diagnosis_status"] == "done" and cell["diagnosis_reused_from"] is None, mode
        assert cell["diagnosis"] == first[mode]["diagnosis"], mode

    # A changed case source is another failure: diagnosed again.
    case = cases / "data_dependent_branch.py"
    case.write_text(case.read_text() + "\n# edited\n")
    edited = cells(cases, tmp_path / "edited", *cache, "--timeout", "70")
    assert all(cell["diagnosis_status"] == "done" for cell in edited.values())
    assert all(cell["diagnosis_reused_from"] is None for cell in edited.values())

"""A repro script, run in this interpreter's torch without the tool, fails as the cell it was written for did."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

from conftest import FIXTURES, ROOT, read_cells, run_matrix

# Cases of the project that fail on recent releases: an export that raises in both modes, and
# (strict) a program that differs from eager and whose decomposition raises.
FAILING = ("exportdb/dynamic_shape_round", "tutorial/graph_break_data_access")


def failing_cells(out: Path) -> List[Dict[str, Any]]:
    return [
        c
        for c in read_cells(out)
        if c["status"] not in ("pass", "not-applicable") or "error" in (c["decompose_status"], c["serialize_status"])
    ]


def run_script(path: Path, cwd: Path) -> subprocess.CompletedProcess:
    """The script in a plain interpreter of this torch: no PYTHONPATH, so nothing of the tool is importable."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, str(path)], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def error_classes(cell: Dict[str, Any]) -> List[str]:
    """The class names each recorded failure of a cell names: its error, and each failed stage's."""
    names = []
    if cell["status"] not in ("pass", "not-applicable") and cell["error_type"]:
        names.append(cell["error_type"].rsplit(".", 1)[-1])
    for stage in ("decompose", "serialize"):
        if cell["%s_status" % stage] == "error":
            names.append(stage_error_class(cell["%s_error" % stage]))
    return names


# What a stage's error may say before its class: ``load: KeyError: x``, ``fresh process: load-error: ...``.
STAGE_PREFIXES = ("save", "load", "fresh process", "load-error", "run-error")


def stage_error_class(text: str) -> str:
    parts = text.split(": ")
    while parts and parts[0] in STAGE_PREFIXES:
        parts.pop(0)
    return parts[0].rsplit(".", 1)[-1]


@pytest.mark.slow
def test_each_failing_cell_of_real_cases_is_reproduced_by_its_script(tmp_path: Path) -> None:
    out = tmp_path / "records"
    run_matrix(
        "run", "--cases", "cases", "--select", *FAILING, "--out", str(out), "--no-cache", "--progress", "none",
        "-j", "1", "--stages", "check,decompose,serialize",
    )  # fmt: skip
    cells = failing_cells(out)
    if not cells:
        pytest.skip("these cases pass on this torch: nothing to reproduce")
    for cell in cells:
        script = tmp_path / ("%s-%s.py" % (cell["case"].replace("/", "_"), cell["mode"]))
        run_matrix("repro", cell["cell_id"], "--results", str(out), "--out", str(script))
        done = run_script(script, tmp_path)
        said = done.stdout + done.stderr
        assert done.returncode != 0, "%s did not fail:\n%s" % (cell["cell_id"], said[-3000:])
        assert "did not reproduce" not in said
        for name in error_classes(cell):
            assert "%s: " % name in said, "%s: no %s in:\n%s" % (cell["cell_id"], name, said[-3000:])


def test_a_save_load_failure_is_reproduced_in_a_fresh_process(tmp_path: Path) -> None:
    out = tmp_path / "records"
    cases = FIXTURES / "fresh_load"
    run_matrix("run", "--cases", str(cases / "late_op.py"), "--out", str(out), "--no-cache", "--progress", "none")
    late = next(c for c in read_cells(out) if c["mode"] == "strict")
    assert late["serialize_status"] == "error", late  # the program loads only where it was exported
    script = tmp_path / "late_op.py"
    run_matrix("repro", late["cell_id"], "--results", str(out), "--case-root", str(cases), "--out", str(script))
    text = script.read_text(encoding="utf-8")
    assert "load_in_a_fresh_process(saved)" in text and "export-matrix check" in text
    done = run_script(script, tmp_path)
    said = done.stdout + done.stderr
    assert done.returncode != 0 and "the fresh process failed" in said, said[-3000:]
    assert "torch.export.load, then a run of the loaded program" in said


def test_a_passing_cell_gets_no_script(tmp_path: Path) -> None:
    out = tmp_path / "records"
    run_matrix("run", "--cases", str(FIXTURES / "fresh_load" / "add_one.py"), "--out", str(out), "--no-cache",
               "--progress", "none", "--mode", "strict")  # fmt: skip
    cell = read_cells(out)[0]
    refused = run_matrix("repro", cell["cell_id"], "--results", str(out), check=False, cwd=ROOT)
    assert refused.returncode == 1 and "nothing to reproduce" in refused.stderr

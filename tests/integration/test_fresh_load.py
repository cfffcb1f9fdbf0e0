"""A cell's save/load outcome is what a process that never exported sees."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, by_cell, read_cells, run_matrix


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_program_that_loads_only_where_it_was_exported_fails_its_save_load_stage(tmp_path: Path, jobs: str) -> None:
    out = tmp_path / "records"
    run_matrix(
        "run", "--cases", str(FIXTURES / "fresh_load"), "--out", str(out), "--progress", "none", "-j", jobs,
        "--artifacts", str(tmp_path / "artifacts"),
    )  # fmt: skip
    cells = by_cell(read_cells(out))
    for mode in ("strict", "non-strict"):
        late = cells[("late_op", mode)]
        # The export passes, and loading in the exporting process passes: the operator was
        # registered while tracing. A process that never traced the case has no such operator.
        assert late["status"] == "pass"
        assert late["serialize_in_process_status"] == "ok", late
        assert late["serialize_fresh_status"] == "error", late
        assert late["serialize_status"] == "error"
        assert late["serialize_error"].startswith("fresh process: load-error: ")
        assert late["serialize_error"] == late["serialize_fresh_error"]
        plain = cells[("add_one", mode)]
        assert (plain["serialize_status"], plain["serialize_in_process_status"], plain["serialize_fresh_status"]) == (
            "ok",
            "ok",
            "ok",
        )
        assert plain["serialize_fresh_s"] > 0
    # The artifacts asked for are kept; the fresh load reads them and leaves them in place.
    kept = sorted(p.parent.name for p in (tmp_path / "artifacts").rglob("meta.json"))
    assert kept == ["add_one", "add_one", "late_op", "late_op"]


def test_without_artifacts_the_fresh_load_leaves_no_program_behind(tmp_path: Path) -> None:
    out = tmp_path / "records"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = dict(os.environ, PYTHONPATH=str(ROOT), TMPDIR=str(scratch), TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "ind"))
    done = subprocess.run(
        [sys.executable, "-m", "matrix", "run", "--cases", str(FIXTURES / "fresh_load"), "--out", str(out),
         "--progress", "none", "--mode", "non-strict"],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    cells = by_cell(read_cells(out))
    assert cells[("late_op", "non-strict")]["serialize_fresh_status"] == "error"
    assert cells[("add_one", "non-strict")]["serialize_fresh_status"] == "ok"
    assert [p.name for p in scratch.iterdir() if p.name.startswith("export-matrix-")] == []


def test_the_processes_that_load_programs_import_the_case_libraries_first_as_the_exporting_one_did(
    tmp_path: Path,
) -> None:
    # The case's operator multiplies by 2 where its library was imported before the case module
    # (as the runner imports a set's libraries once, before forking cells), by 3 where it was not.
    out, saved = tmp_path / "records", tmp_path / "artifacts"
    cases = str((FIXTURES / "library_first").relative_to(ROOT))  # a load imports case modules inside its folder only
    run_matrix("run", "--cases", cases, "--out", str(out), "--progress", "none", "-j", "2", "--artifacts", str(saved))
    cells = by_cell(read_cells(out))
    for mode in ("strict", "non-strict"):
        cell = cells[("ahead", mode)]
        assert cell["status"] == "pass" and cell["dependency_set"] == "packaging", cell
        # The fresh process (forked from a server made before anything was exported) imported it too.
        assert cell["serialize_fresh_status"] == "ok", cell["serialize_fresh_error"]
    loads = tmp_path / "loads"
    done = run_matrix("load", str(saved), "--out", str(loads), "--progress", "none")
    assert "imported packaging once, before forking artifacts" in done.stderr
    found = [json.loads(line) for path in loads.glob("*.jsonl") for line in path.read_text().splitlines()]
    assert sorted((r["mode"], r["status"]) for r in found) == [("non-strict", "pass"), ("strict", "pass")], found

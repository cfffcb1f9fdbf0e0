"""Results reused by content, on real runs: the records of a run without the cache, and no harm from a bad cache."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from conftest import FIXTURES, ROOT, read_cells, run_matrix

# Fields that say what happened to a cell or a load: identical whether measured now or reused.
OUTCOME = (
    "status", "error_type", "error_message", "graph_hash", "ops", "decomposed_hash", "check_status",
    "serialize_status", "artifact",
)  # fmt: skip
LOAD_OUTCOME = ("status", "error_type", "error_message", "check_status")


def outcomes(records: List[Dict[str, Any]], fields: Tuple[str, ...]) -> Dict[Tuple[str, str], Tuple[Any, ...]]:
    return {(r["case"], r["mode"]): tuple(r.get(f) for f in fields) for r in records}


def read_loads(folder: Path) -> List[Dict[str, Any]]:
    loads = []
    for path in sorted(folder.glob("load_*.jsonl")):
        loads += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in loads if r["kind"] == "load"]


def run(out: Path, *extra: str) -> subprocess.CompletedProcess:
    cases = FIXTURES / "basic"
    return run_matrix("run", "--cases", str(cases), "--out", str(out), "--progress", "lines", *extra)


@pytest.mark.slow
def test_a_second_run_reuses_every_result_and_records_what_a_run_without_the_cache_records(tmp_path: Path) -> None:
    cache = str(tmp_path / "cache")
    artifacts = str(tmp_path / "artifacts")
    first = run(tmp_path / "first", "--cache", cache, "--artifacts", artifacts)
    assert "reused" not in first.stderr
    second = run(tmp_path / "second", "--cache", cache, "--artifacts", artifacts)
    plain = run(tmp_path / "plain", "--no-cache", "--cache", cache)
    measured, reused, uncached = (read_cells(tmp_path / name) for name in ("first", "second", "plain"))
    applicable = [r for r in measured if r["status"] != "not-applicable"]
    assert applicable and all(r["reused_from"] is None for r in measured + uncached)
    assert "%d cells reused from" % len(applicable) in second.stderr
    assert {r["reused_from"] for r in reused if r["status"] != "not-applicable"} == {measured[0]["run_id"]}
    assert {r["run_id"] for r in reused} != {measured[0]["run_id"]}  # a record of this run, naming the other
    assert outcomes(reused, OUTCOME) == outcomes(measured, OUTCOME)
    # Without the cache (and without keeping programs) the same statuses and graphs.
    assert outcomes(uncached, OUTCOME[:-1]) == outcomes(measured, OUTCOME[:-1])
    assert "reused" not in plain.stderr

    # Loads on the saving build: the run loaded each program fresh already, so even the first
    # load reuses those loads, naming the run; the same outcomes as loads without the cache.
    first_load = run_matrix("load", artifacts, "--out", str(tmp_path / "first"), "--cache", cache)
    again = run_matrix("load", artifacts, "--out", str(tmp_path / "second"), "--cache", cache)
    run_matrix("load", artifacts, "--out", str(tmp_path / "plain"), "--no-cache")
    loaded, reloaded, plain_loads = (read_loads(tmp_path / name) for name in ("first", "second", "plain"))
    assert loaded and "%d artifacts reused from" % len(loaded) in first_load.stderr
    assert {r["reused_from"] for r in loaded} == {measured[0]["run_id"]}
    assert all(isinstance(r["load_s"], float) and r["serializer_version"] for r in loaded)
    assert "%d artifacts reused from" % len(loaded) in again.stderr
    assert all(r["reused_from"] for r in reloaded) and not any(r["reused_from"] for r in plain_loads)
    assert outcomes(reloaded, LOAD_OUTCOME) == outcomes(loaded, LOAD_OUTCOME) == outcomes(plain_loads, LOAD_OUTCOME)


def test_a_changed_case_runs_again_and_a_removed_program_is_put_back_or_made_again(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    shutil.copytree(FIXTURES / "basic", cases)
    cache, artifacts = tmp_path / "cache", tmp_path / "artifacts"
    selection = ("--cases", str(cases), "--select", "add_one", "dynamic_batch", "--mode", "strict")
    selection += ("--cache", str(cache), "--artifacts", str(artifacts))
    run_matrix("run", *selection, "--out", str(tmp_path / "one"))
    first = {r["case"]: r for r in read_cells(tmp_path / "one")}
    (program,) = artifacts.glob("*/strict/dynamic_batch")
    meta = (program / "meta.json").read_bytes()
    (cases / "add_one.py").write_text((cases / "add_one.py").read_text() + "\n# edited\n")
    shutil.rmtree(program)  # a fresh machine: no saved programs, the cache restored
    run_matrix("run", *selection, "--out", str(tmp_path / "two"))
    again = {r["case"]: r for r in read_cells(tmp_path / "two")}
    assert again["add_one"]["reused_from"] is None  # its source changed
    assert again["dynamic_batch"]["reused_from"] == first["dynamic_batch"]["run_id"]
    assert (program / "meta.json").read_bytes() == meta  # the very program, put back from the cache
    # Without the kept program the cell runs again, and saves it again.
    shutil.rmtree(program)
    shutil.rmtree(cache / "programs")
    run_matrix("run", *selection, "--out", str(tmp_path / "three"))
    third = {r["case"]: r for r in read_cells(tmp_path / "three")}
    assert third["dynamic_batch"]["reused_from"] is None and (program / "program.pt2").is_file()
    assert third["add_one"]["reused_from"] == again["add_one"]["run_id"]


def test_a_timeout_is_never_reused(tmp_path: Path) -> None:
    cache = str(tmp_path / "cache")
    hang = str(FIXTURES / "faults" / "hang.py")
    for out in ("one", "two"):
        args = ("--cases", hang, "--mode", "strict", "--timeout", "3", "--cache", cache, "--out", str(tmp_path / out))
        run_matrix("run", *args)
    cells = read_cells(tmp_path / "two")
    assert [(r["status"], r["reused_from"]) for r in cells] == [("timeout", None)]


@pytest.mark.slow
def test_a_damaged_cache_or_one_that_cannot_be_written_only_costs_the_reuse(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    select = ("--select", "add_one", "--mode", "strict")
    run(tmp_path / "one", "--cache", str(cache), *select)
    entries = list((cache / "cell").rglob("*.json"))  # the entries, not the index or the stats
    assert len(entries) == 1
    entries[0].write_bytes(b'{"format": 1, "key": "cut sh')
    damaged = run(tmp_path / "two", "--cache", str(cache), *select)
    warnings = [line for line in damaged.stderr.splitlines() if line.startswith("warning: result cache")]
    assert len(warnings) == 1 and "runs again" in warnings[0]
    assert [(r["status"], r["reused_from"]) for r in read_cells(tmp_path / "two")] == [("pass", None)]
    # The cell ran and its result was kept again, whole.
    assert json.loads(entries[0].read_text())["record"]["status"] == "pass"

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    unwritable = run(tmp_path / "three", "--cache", str(blocker / "cache"), *select)
    assert "cannot keep results here" in unwritable.stderr
    assert [r["status"] for r in read_cells(tmp_path / "three")] == ["pass"]


@pytest.mark.slow
def test_two_runs_sharing_a_cache_at_once_leave_it_whole(tmp_path: Path) -> None:
    cache = str(tmp_path / "cache")
    env = dict(__import__("os").environ, PYTHONPATH=str(ROOT))
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "matrix",
                "run",
                "--cases",
                str(FIXTURES / "basic"),
                "--out",
                str(tmp_path / name),
                "--cache",
                cache,
                "--progress",
                "none",
                "-j",
                "1",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for name in ("a", "b")
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-2000:]
    entries = [p for p in Path(cache).rglob("*.json") if p.relative_to(cache).parts[0] not in ("index", "stats")]
    assert entries and not list(Path(cache).rglob(".tmp-*"))
    for entry in entries:
        kept = json.loads(entry.read_text())
        if entry.relative_to(cache).parts[0] == "environment":  # what a run learnt of its environment
            assert kept["key"] == entry.stem and kept["extra"]["environment"]["torch_version"]
        else:
            assert kept["key"] == entry.stem and kept["record"]["status"]
    third = run(tmp_path / "c", "--cache", cache)
    cells = read_cells(tmp_path / "c")
    ran = [r for r in cells if r["status"] != "not-applicable"]
    assert ran and all(r["reused_from"] for r in ran), third.stderr


def test_the_exportdb_examples_bundled_with_torch_are_reused_like_case_files(tmp_path: Path) -> None:
    # Their path is relative to site-packages: the key hashes the example's file in the installed torch.
    cache = str(tmp_path / "cache")
    select = ("--source", "exportdb", "--select", "torch-exportdb/cond_*", "--progress", "none", "--cache", cache)
    run_matrix("run", "--out", str(tmp_path / "first"), *select)
    second = run_matrix("run", "--out", str(tmp_path / "second"), *select)
    measured, reused = read_cells(tmp_path / "first"), read_cells(tmp_path / "second")
    applicable = [r for r in reused if r["status"] != "not-applicable"]
    assert applicable and all(r["reused_from"] == measured[0]["run_id"] for r in applicable), second.stderr
    assert outcomes(reused, OUTCOME[:-1]) == outcomes(measured, OUTCOME[:-1])

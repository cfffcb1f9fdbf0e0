"""Finding the cell a repro is written for: by its id, narrowed to one build and environment, or a message that
names each one with the options that choose it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import pytest

from matrix.contract.errors import FAILED, USAGE
from matrix.contract.schema import SCHEMA_VERSION
from matrix.envs import releases
from matrix.records import repro, repro_lookup, store
from matrix.records.repro_lookup import Narrowing

from conftest import make_cell

CELL = "torch-2.13.0+cpu/strict/models/m"
CANDIDATE = "torch-2.7.1+cpu/strict/models/m"  # the id a release and its candidate from the test index share
RELEASE_GIT, CANDIDATE_GIT = "5a1b2c3d4e5f60718293a4b5c6d7e8f901234567", "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432"


def failed(release: str = "2.13.0+cpu", **extra: Any) -> Dict[str, Any]:
    """A cell record of a failed export of the case models/m, run from its case file."""
    values: Dict[str, Any] = dict(
        failed_stage="export", error_type="torch._dynamo.exc.Unsupported", error_message="generic_jump",
        case_file="cases/models/m.py", source="cases",
    )  # fmt: skip
    values.update(extra)
    return make_cell(release, "models/m", str(values.pop("status", "fail")), **values)


def opened(run_id: str, release: str, variant: str, git: str) -> Dict[str, Any]:
    """The environment record that opens a run, with the build's git version."""
    return {
        "schema_version": SCHEMA_VERSION, "kind": "environment", "run_id": run_id, "torch_version": release,
        "variant": variant, "python": "3.11", "torch_git_version": git, "started_at": "2025-01-01T00:00:00+00:00",
    }  # fmt: skip


def loaded(folder: Path, *rows: Dict[str, Any]) -> store.Store:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return store.load([str(folder)])


def release_and_candidate(folder: Path) -> store.Store:
    """One cell id recorded by two builds: the release 2.7.1+cpu (cpu index) and its candidate (test index)."""
    return loaded(
        folder,
        opened("r1", "2.7.1+cpu", "cpu", RELEASE_GIT),
        failed("2.7.1+cpu", variant="cpu", run_id="r1"),
        opened("c1", "2.7.1+cpu", "test-cpu", CANDIDATE_GIT),
        failed("2.7.1+cpu", variant="test-cpu", run_id="c1", error_message="another error"),
    )


def test_find_returns_the_cell_its_runs_summarised(tmp_path: Path) -> None:
    raw = loaded(tmp_path, failed(run=0), failed(run=1), failed(run=2, status="pass"), failed("2.5.1")).cells
    cell = repro_lookup.find(raw, CELL, "results")
    assert cell.status == "fail" and cell.release == "2.13.0+cpu" and cell.git_version is None


def test_a_cell_that_is_not_there_is_named_with_its_folder_and_what_is_there(tmp_path: Path) -> None:
    raw = loaded(tmp_path, failed("2.5.1"), failed("2.9.1")).cells
    with pytest.raises(repro.ReproError) as missing:
        repro_lookup.find(raw, CELL, "results/latest")
    said = str(missing.value)
    assert "no cell torch-2.13.0+cpu/strict/models/m in results/latest" in said
    assert "torch-2.5.1/strict/models/m, torch-2.9.1/strict/models/m" in said
    with pytest.raises(repro.ReproError, match="no case other in strict mode"):
        repro_lookup.find(raw, "torch-2.5.1/strict/other", "results/latest")


def test_a_cell_of_several_environments_asks_which(tmp_path: Path) -> None:
    raw = loaded(tmp_path, failed(python="3.10"), failed(python="3.11"), failed(with_set="a==1")).cells
    with pytest.raises(repro.ReproError) as several:
        repro_lookup.find(raw, CELL, "results")
    assert str(several.value) == (
        "torch-2.13.0+cpu/strict/models/m was recorded by several environments in results; name one with its"
        " options: --python 3.10; --python 3.11; --python 3.11 --with a==1"
    )
    assert several.value.exit_code == USAGE
    assert repro_lookup.find(raw, CELL, "results", Narrowing(python="3.10")).python == "3.10"
    # Each option the message names picks its cell: --python 3.11 alone is the one without a --with set.
    assert repro_lookup.find(raw, CELL, "results", Narrowing(python="3.11")).with_set == ""
    assert repro_lookup.find(raw, CELL, "results", Narrowing("3.11", "a==1")).with_set == "a==1"


def test_a_release_and_its_candidate_of_one_number_are_named_by_variant_index_and_commit(tmp_path: Path) -> None:
    records = release_and_candidate(tmp_path)
    with pytest.raises(repro.ReproError) as several:
        repro_lookup.find(records.cells, CANDIDATE, "results", environments=records.environments)
    matrix = releases.default_matrix()
    assert str(several.value) == (
        "torch-2.7.1+cpu/strict/models/m was recorded by several builds in results; name one with its options:"
        " --variant cpu (a release, from %s; git 5a1b2c3d4e5f);"
        " --variant test-cpu (the test channel's build, from %s; git 9f8e7d6c5b4a)"
        % (matrix.variant("cpu").index_url, matrix.variant("test-cpu").index_url)
    )
    # Another Python does not hide the builds: neither is picked for the user.
    with pytest.raises(repro.ReproError, match="several builds"):
        repro_lookup.find(records.cells, CANDIDATE, "results", Narrowing(python="3.11"), records.environments)
    chosen = repro_lookup.find(records.cells, CANDIDATE, "results", Narrowing(variant="test-cpu"), records.environments)
    assert (chosen.variant, chosen.error_message, chosen.git_version) == ("test-cpu", "another error", CANDIDATE_GIT)
    release = repro_lookup.find(records.cells, CANDIDATE, "results", Narrowing(variant="cpu"), records.environments)
    assert (release.variant, release.git_version) == ("cpu", RELEASE_GIT)
    with pytest.raises(repro.ReproError, match="is in results, but not with --variant nightly-cpu --python 3.11$"):
        repro_lookup.find(records.cells, CANDIDATE, "results", Narrowing("3.11", "", "nightly-cpu"))


def test_runs_of_one_cell_from_two_commits_of_a_version_are_refused(tmp_path: Path) -> None:
    # A candidate rebuilt under its number, run again with more runs: the runs mix two builds.
    records = loaded(
        tmp_path,
        opened("a", "2.7.1+cpu", "test-cpu", RELEASE_GIT),
        failed("2.7.1+cpu", variant="test-cpu", run_id="a", run=0),
        opened("b", "2.7.1+cpu", "test-cpu", CANDIDATE_GIT),
        failed("2.7.1+cpu", variant="test-cpu", run_id="b", run=1),
    )
    with pytest.raises(repro.ReproError) as mixed:
        repro_lookup.find(records.cells, CANDIDATE, "results", environments=records.environments)
    said = str(mixed.value)
    assert "recorded by builds of 2 commits of one version (git 5a1b2c3d4e5f, 9f8e7d6c5b4a)" in said
    assert "--force" in said and "--results" in said


def test_a_passing_cell_has_nothing_to_reproduce(tmp_path: Path) -> None:
    raw = loaded(tmp_path, failed(status="pass")).cells
    with pytest.raises(repro.ReproError) as passed:
        repro_lookup.find(raw, CELL, "results")
    assert passed.value.exit_code == FAILED and "passed in results" in str(passed.value)


def test_a_build_run_on_the_cpu_and_a_gpu_is_two_cells_and_the_device_picks_one(tmp_path: Path) -> None:
    on_cuda = dict(device="cuda", gpu="NVIDIA H200, compute 9.0, driver 580.1", error_message="CUDA error: boom")
    raw = loaded(tmp_path, failed(), failed(**on_cuda)).cells
    with pytest.raises(repro.ReproError) as several:
        repro_lookup.find(raw, CELL, "results")
    assert str(several.value).endswith("name one with its options: --device cpu; --device cuda")
    # Never the runs of both devices summarised as one cell: each is its own.
    assert repro_lookup.find(raw, CELL, "results", Narrowing(device="cpu")).device == "cpu"
    gpu = repro_lookup.find(raw, CELL, "results", Narrowing(device="cuda"))
    assert (gpu.device, gpu.gpu, gpu.error_message) == ("cuda", on_cuda["gpu"], "CUDA error: boom")
    # A build that ran on one device needs no --device, and a record without one ran on the CPU.
    assert repro_lookup.find(loaded(tmp_path / "one", failed()).cells, CELL, "results").device == "cpu"

"""The runner and `check` on cases that declare packages: real runs on the installed torch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from matrix.contract import dependencies
from matrix.contract.schema import Status
from matrix.records import artifacts as loads_table
from matrix.records import store
from matrix.worker import signing

from conftest import FIXTURES, read_cells, run_matrix

CASES = FIXTURES / "dependencies"


def test_each_case_is_recorded_for_what_its_packages_allow(tmp_path: Path) -> None:
    run_matrix("run", "--cases", str(CASES), "--out", str(tmp_path), "--mode", "strict", "--progress", "none")
    cells = {cell["case"]: cell for cell in read_cells(tmp_path)}
    assert set(cells) == {"absent", "library_fails", "installed", "newer_python", "malformed", "torch_alone"}
    assert cells["installed"]["status"] == Status.PASS.value
    assert cells["installed"]["dependency_set"] == "packaging"
    assert cells["torch_alone"]["status"] == Status.PASS.value and cells["torch_alone"]["dependency_set"] == ""

    absent = cells["absent"]
    assert absent["status"] == Status.NOT_APPLICABLE.value
    assert absent["missing"] == ["a-package-nobody-installed"]
    assert "does not have" in absent["error_message"]

    fails = cells["library_fails"]
    version = dependencies.installed(["packaging"])["packaging"]
    assert fails["status"] == Status.CASE_ERROR.value and fails["reason"] == "dependency-import"
    assert fails["error_message"].startswith("packaging %s fails on torch " % version)
    assert "InvalidVersion" in fails["error_message"]

    newer = cells["newer_python"]
    assert newer["status"] == Status.NOT_APPLICABLE.value and newer["missing"] == ["python>=99"]

    malformed = cells["malformed"]
    assert malformed["status"] == Status.CASE_ERROR.value
    assert malformed["error_message"].startswith(str(CASES / "malformed.py") + ":3: ")


@pytest.mark.slow
def test_a_dependency_set_runs_only_its_own_cases_and_writes_its_own_record_file(tmp_path: Path) -> None:
    common = ["run", "--cases", str(CASES), "--out", str(tmp_path), "--mode", "strict", "--progress", "none"]
    run_matrix(*common, "--dependency-set", "packaging")
    run_matrix(*common, "--dependency-set", "")
    files = sorted(path.name for path in tmp_path.glob("*.jsonl"))
    assert len(files) == 2 and any(dependencies.set_suffix("packaging") in name for name in files)
    cells = {cell["case"]: cell["dependency_set"] for cell in read_cells(tmp_path)}
    assert cells == {"library_fails": "packaging", "installed": "packaging", "newer_python": "", "malformed": "",
                     "torch_alone": ""}  # fmt: skip
    # A set no selected case has is nothing to run, not an error: the sessions run every set a selection may reach.
    done = run_matrix(*common, "--dependency-set", "timm", "--select", "installed")
    assert "nothing selected needs timm" in done.stderr


def test_with_adds_a_requirement_to_every_case(tmp_path: Path) -> None:
    run_matrix(
        "run", "--cases", str(CASES / "torch_alone.py"), "--out", str(tmp_path), "--mode", "strict",
        "--with", "a-package-nobody-installed", "--progress", "none",
    )  # fmt: skip
    (cell,) = read_cells(tmp_path)
    assert cell["status"] == Status.NOT_APPLICABLE.value and cell["missing"] == ["a-package-nobody-installed"]
    assert cell["dependency_set"] == "a-package-nobody-installed"


def test_check_refuses_a_malformed_block_naming_the_file_and_line(tmp_path: Path) -> None:
    done = run_matrix("check", str(CASES / "malformed.py"), "--torch", "current", check=False)
    assert done.returncode == 2
    assert "malformed.py:3: `# /// script` is never closed" in done.stderr
    bad = run_matrix("check", str(CASES / "torch_alone.py"), "--torch", "current", "--with=-x", check=False)
    assert bad.returncode == 2 and "--with '-x'" in bad.stderr


def test_two_with_sets_into_one_folder_are_two_cells_each(tmp_path: Path) -> None:
    from matrix.records import store

    for version in ("23.2", "24.1"):
        key = "packaging==%s" % version
        run_matrix(
            "run", "--cases", str(CASES / "installed.py"), "--out", str(tmp_path), "--mode", "strict",
            "--with", key, "--dependency-set", "packaging + " + key, "--progress", "none",
        )  # fmt: skip
    cells = store.load([str(tmp_path)]).cells
    # The case declares packaging itself: only the pin came from --with.
    assert sorted(zip(cells["with_set"], cells["dependency_set"])) == [
        ("packaging==23.2", "packaging + packaging==23.2"),
        ("packaging==24.1", "packaging + packaging==24.1"),
    ]


@pytest.mark.slow
def test_each_with_set_keeps_its_own_program_and_load_tries_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(signing.KEY_VARIABLE, "k" * 40)  # the runs sign and the load verifies with it
    art, out, loads = tmp_path / "art", tmp_path / "records", tmp_path / "loads"
    sets = ("", "packaging", "packaging>=20")  # packaging is installed: neither set installs anything
    for with_set in sets:
        run_matrix(
            "run", "--cases", str(CASES / "torch_alone.py"), "--out", str(out), "--mode", "strict",
            "--artifacts", str(art), *(["--with", with_set] if with_set else []), "--progress", "none",
        )  # fmt: skip
    cells = read_cells(out)
    assert sorted((c["with_set"], c["status"], c["artifact"]) for c in cells) == [
        (with_set, Status.PASS.value, "saved") for with_set in sets
    ]
    (env,) = list(art.iterdir())
    kept = sorted(folder.name for folder in (env / "strict").iterdir())
    assert kept == sorted("torch_alone" + dependencies.set_suffix(with_set) for with_set in sets)
    assert "torch_alone" in kept  # without --with, the folder is the one it always was

    run_matrix("load", str(art), "--out", str(loads), "--progress", "none")
    found = [json.loads(line) for path in loads.glob("load_*.jsonl") for line in path.read_text().splitlines()]
    assert sorted((r["case"], r["dependency_set"] or "", r["status"]) for r in found) == [
        ("torch_alone", with_set, "pass") for with_set in sets
    ]
    assert sorted(r["artifact"] for r in found) == sorted("%s/strict/%s" % (env.name, name) for name in kept)
    assert sorted(r["with_set"] for r in found) == sorted(sets)
    # The report keeps the three: one program per set, each with its own row in the case's grid.
    table = loads_table.table(store.load([str(loads)]).loads)
    assert sorted(table["with_set"]) == sorted(sets)
    # Resumed, each set's load counts as done for that set only: nothing loads again.
    again = run_matrix("load", str(art), "--out", str(loads), "--progress", "none")
    assert "3 already recorded, 0 to load" in again.stderr

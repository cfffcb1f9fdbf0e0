"""What reproduces a failing cell: the steps, the commands, the install line, the distinct failures, the lookup."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any, Dict

import pandas as pd
import pytest

from matrix import cli
from matrix.contract.errors import USAGE
from matrix.contract.options import from_namespace
from matrix.envs import releases
from matrix.records import repro, store
from matrix.records.repro import Cell

from conftest import cell_table, make_cell

# A matrix of two releases: what install lines are made of, written here so that no release list is assumed.
MATRIX = releases.parse(
    {
        "series": [
            {"minor": "2.1", "patches": ["2.1.2"], "pythons": ["3.11"], "numpy": "numpy<2", "pins": ["setuptools<81"]},
            {"minor": "2.13", "patches": ["2.13.0"], "pythons": ["3.11"]},
        ],
        "variants": {
            "pypi": {"index_url": "https://pypi.org/simple", "env": "PYPI"},
            "cpu": {"index_url": "https://download.pytorch.org/whl/cpu", "env": "CPU", "local_tag": "cpu"},
        },
        "selections": {"quick": ["2.13.0"], "matrix": []},
        "channels": {"nightly": {"dated": True, "indexes": {"cpu": "https://download.pytorch.org/whl/nightly/cpu"}}},
    }
)
UNSUPPORTED = "torch._dynamo.exc.Unsupported"


def failed(
    release: str = "2.13.0+cpu", mode: str = "strict", case: str = "models/m", status: str = "fail", **extra: Any
) -> Dict[str, Any]:
    """A cell record of a failed export, with the case file a run of the project's cases records."""
    values: Dict[str, Any] = dict(
        failed_stage="export", error_type=UNSUPPORTED, error_message="generic_jump\nmore", case_file="cases/models/m.py"
    )
    values.update(source="cases")
    values.update(extra)
    return make_cell(release, case, status, mode, **values)


def test_a_cell_reads_from_a_record_and_from_a_row_of_the_cell_table_alike():
    record = failed()
    row = cell_table([record]).to_dict("records")[0]
    assert Cell.from_row(record) == Cell.from_row(row)
    cell = Cell.from_row(row)
    assert (cell.release, cell.variant, cell.python, cell.mode, cell.case) == (
        "2.13.0+cpu",
        "cpu",
        "3.11",
        "strict",
        "models/m",
    )
    assert cell.cell_id == "torch-2.13.0+cpu/strict/models/m" and cell.failing and cell.reproducible


def test_a_stage_failure_counts_only_where_the_cell_exported():
    passing = make_cell("2.13.0", "m", decompose_status="error", decompose_error="RuntimeError: boom")
    # A stage that never ran says nothing: a fail has no program to decompose.
    stale = make_cell("2.13.0", "m", "fail", decompose_status="error", decompose_error="RuntimeError: boom")
    assert Cell.from_row(passing).decompose_error == "RuntimeError: boom" and Cell.from_row(passing).failing
    assert Cell.from_row(stale).decompose_error is None
    assert not Cell.from_row(make_cell("2.13.0", "m")).failing
    assert not Cell.from_row(make_cell("2.13.0", "m", "not-applicable")).failing


@pytest.mark.parametrize(
    "status, fields, steps",
    [
        ("fail", {}, ("eager", "export")),
        ("mismatch", {"failed_stage": "check"}, ("eager", "export", "check")),
        ("mismatch", {"decompose_status": "error", "decompose_error": "e"}, ("eager", "export", "check", "decompose")),
        ("pass", {"serialize_status": "error", "serialize_error": "load: e"}, ("eager", "export", "serialize")),
        ("case-error", {"failed_stage": "eager"}, ("eager", "export")),
        ("crash", {}, repro.STEPS),
        ("timeout", {}, repro.STEPS),
    ],
)
def test_the_plan_runs_what_the_failure_needs_in_the_order_the_cell_ran_it(status, fields, steps):
    assert repro.plan(Cell.from_row(make_cell("2.13.0", "m", status, **fields))) == steps


def test_what_a_script_reproduces_names_each_failed_step():
    both = Cell.from_row(make_cell("2.13.0", "m", "mismatch", failed_stage="check", decompose_status="error"))
    said = repro.reproduces(both)
    assert "the check step" in said and "the decompose step" in said and "export step" not in said
    assert repro.reproduces(Cell.from_row(failed())) == "the export step: torch.export.export"
    assert "during export" in repro.reproduces(Cell.from_row(failed(status="crash")))


def test_recorded_says_each_failure_with_its_error_on_one_line():
    cell = Cell.from_row(failed(status="mismatch", failed_stage="check", error_type="AssertionError",
                                error_message="input 0: differs\ndetail", serialize_status="error",
                                serialize_error="load: KeyError: x"))  # fmt: skip
    assert repro.recorded(cell) == [
        "mismatch at check: AssertionError: input 0: differs",
        "serialize failed: load: KeyError: x",
    ]


def test_the_check_command_runs_the_same_cell_with_only_options_check_has():
    cell = Cell.from_row(failed(with_set="transformers==4.57.1", dependency_set="transformers==4.57.1"))
    command = repro.check_command(cell)
    assert command == (
        "export-matrix check cases/models/m.py --torch 2.13.0+cpu --variant cpu --mode strict --python 3.11"
        " --with transformers==4.57.1"
    )
    from matrix.commands import check

    options = from_namespace(check.CheckOptions, _parsed(check, shlex.split(str(command))[2:]))
    assert (options.torch, options.variant, options.mode, options.python) == (("2.13.0+cpu",), "cpu", "strict", "3.11")
    assert options.with_requirements == ("transformers==4.57.1",)


def _parsed(module: Any, argv: Any) -> Any:
    import argparse

    parser = argparse.ArgumentParser()
    module.configure(parser)
    return parser.parse_args(argv)


def test_a_cell_on_a_gpu_is_checked_and_named_on_its_device():
    on_cuda = Cell.from_row(make_cell("2.13.0+cpu", "x", "fail", case_file="cases/x.py", device="cuda"))
    assert on_cuda.device == "cuda" and Cell.from_row(make_cell("2.13.0+cpu", "x", "fail")).device == "cpu"
    assert str(repro.check_command(on_cuda)).endswith("--mode strict --python 3.11 --device cuda")
    assert repro.file_name(on_cuda) == "torch-2.13.0+cpu_py3.11_strict_cuda.py"


def test_a_pypi_build_that_reports_a_cuda_tag_is_installed_and_checked_by_its_public_version():
    cell = Cell.from_row(failed(release="2.1.2+cu121", variant="pypi"))
    assert repro.install(cell, matrix=MATRIX).requirements[0] == "torch==2.1.2"
    assert "--torch 2.1.2 --variant pypi " in str(repro.check_command(cell, MATRIX))
    assert repro.torch_version(Cell.from_row(failed(variant="rocm")), MATRIX) == "2.13.0+cpu"  # unknown: as recorded


def test_a_bundled_exportdb_example_has_neither_command_nor_script():
    cell = Cell.from_row(failed(source="exportdb", case="torch-exportdb/cond_predicate"))
    assert not cell.reproducible and repro.check_command(cell) is None


def test_the_install_line_pins_torch_its_index_and_the_versions_the_environment_resolved():
    # The store joins each cell with what its run's environment record says the set added to torch.
    added = {"torchvision": "0.28.0+cpu", "transformers": "4.57.6", "tokenizers": "0.22.1"}
    cell = Cell.from_row(dict(failed(dependency_set="torchvision + Transformers>=4"), added_packages=added))
    wanted = repro.install(cell, matrix=MATRIX)
    assert wanted.requirements == ("torch==2.13.0+cpu", "numpy", "torchvision==0.28.0+cpu", "transformers==4.57.6")
    assert wanted.index_url == "https://download.pytorch.org/whl/cpu"
    assert wanted.resolved == (("tokenizers", "0.22.1"),)
    assert wanted.command == (
        "pip install torch==2.13.0+cpu numpy torchvision==0.28.0+cpu transformers==4.57.6"
        " --extra-index-url https://download.pytorch.org/whl/cpu"
    )


def test_pypi_builds_need_no_index_and_a_release_brings_its_pins():
    wanted = repro.install(Cell.from_row(failed(release="2.1.2", variant="pypi")), matrix=MATRIX)
    assert wanted.requirements == ("torch==2.1.2", "numpy<2", "setuptools<81") and wanted.index_url is None
    assert wanted.command == "pip install torch==2.1.2 'numpy<2' 'setuptools<81'"


def test_a_channels_build_installs_torch_from_its_channels_index_alone_then_the_rest():
    nightly = Cell.from_row(failed(release="2.16.0.dev20260115+cpu", variant="nightly-cpu", dependency_set="timm"))
    wanted = repro.install(nightly, matrix=MATRIX)
    assert wanted.requirements == ("torch==2.16.0.dev20260115+cpu", "numpy", "timm")
    # Nothing but the channel's index offers torch to pip: not PyPI, not an index of releases of that number.
    assert wanted.command == (
        "pip install torch==2.16.0.dev20260115+cpu --index-url https://download.pytorch.org/whl/nightly/cpu"
        " && pip install numpy timm"
    )
    assert "--variant nightly-cpu" in str(repro.check_command(nightly, MATRIX))


def test_without_resolved_versions_the_case_requirements_are_installed_as_written():
    cell = Cell.from_row(failed())
    assert repro.install(cell, ["timm>=1"], matrix=MATRIX).requirements == ("torch==2.13.0+cpu", "numpy", "timm>=1")
    unknown = repro.install(Cell.from_row(failed(variant="rocm")), matrix=MATRIX)
    assert unknown.index_url is None and unknown.note is not None and "rocm" in unknown.note


def test_script_names_are_distinct_per_python_mode_and_with_set():
    names = {
        repro.file_name(Cell.from_row(failed(mode=mode, python=python, with_set=with_set)))
        for mode in ("strict", "non-strict")
        for python in ("3.10", "3.11")
        for with_set in ("", "a==1", "a==2")
    }
    assert len(names) == 12
    assert repro.file_name(Cell.from_row(failed())) == "torch-2.13.0+cpu_py3.11_strict.py"
    # A candidate carries its release's number: its variant keeps the two scripts apart.
    candidate = Cell.from_row(failed(release="2.7.1+cpu", variant="test-cpu"))
    assert repro.file_name(candidate) == "torch-2.7.1+cpu_test-cpu_py3.11_strict.py"


def test_one_failure_per_distinct_way_of_failing_reproduced_on_its_newest_release():
    rows = [
        failed("2.5.1"),
        failed("2.9.1", error_message="generic_jump\nother detail"),  # the same first line: the same failure
        failed("2.13.0+cpu", error_type="RuntimeError", error_message="new"),
        failed("2.9.1", mode="non-strict", status="pass"),
        failed("2.13.0+cpu", mode="non-strict", status="pass", serialize_status="error", serialize_error="load: x"),
        failed("2.13.0+cpu", case="torch-exportdb/m", source="exportdb"),
    ]
    found = repro.failures(cell_table(rows))
    assert [(f.cell.release, f.cell.mode, f.releases) for f in found] == [
        ("2.9.1", "strict", ("2.5.1", "2.9.1")),
        ("2.13.0+cpu", "strict", ("2.13.0+cpu",)),
        ("2.13.0+cpu", "non-strict", ("2.13.0+cpu",)),
    ]
    assert found[0].title == "strict · fail at export"
    assert found[2].title == "non-strict · serialize failed"
    assert repro.failures(cell_table([failed(status="pass")])) == ()


# --- the command ------------------------------------------------------------------------------------


def records_in(folder: Path, *rows: Dict[str, Any]) -> pd.DataFrame:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return store.load([str(folder)]).cells


CASE = '''"""A model whose export fails."""

import torch

model = torch.nn.Linear(2, 2)
example_args = (torch.randn(3, 2),)
'''


def test_the_command_writes_the_script_of_a_cell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    (tmp_path / "cases" / "models").mkdir(parents=True)
    (tmp_path / "cases" / "models" / "m.py").write_text(CASE, encoding="utf-8")
    records_in(tmp_path / "results" / "latest", failed())
    monkeypatch.chdir(tmp_path)  # the command reads records from results/ and cases from cases/ of this folder
    assert cli.main(["repro", "torch-2.13.0+cpu/strict/models/m"]) == 0
    printed = capsys.readouterr().out
    compile(printed, "repro.py", "exec")
    assert printed.startswith(
        "# Reproduces, without torch-export-matrix, the failure of the cell\n#   torch-2.13.0+cpu/strict/models/m\n"
    )
    assert cli.main(["repro", "torch-2.13.0+cpu/strict/models/m", "--out", "script.py"]) == 0
    assert (tmp_path / "script.py").read_text(encoding="utf-8") == printed


def test_the_command_asks_which_build_and_writes_the_one_its_variant_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
):
    (tmp_path / "cases" / "models").mkdir(parents=True)
    (tmp_path / "cases" / "models" / "m.py").write_text(CASE, encoding="utf-8")
    # The release 2.7.1+cpu from the CPU index and the candidate of that number from the test index.
    records_in(tmp_path / "results", failed("2.7.1+cpu", variant="cpu"), failed("2.7.1+cpu", variant="test-cpu"))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["repro", "torch-2.7.1+cpu/strict/models/m"]) == USAGE
    said = capsys.readouterr()
    assert said.out == "" and len(said.err.strip().splitlines()) == 1 and "Traceback" not in said.err
    assert "several builds in results" in said.err
    assert "--variant cpu (a release, from " in said.err and "--variant test-cpu (the test channel's build" in said.err
    assert cli.main(["repro", "torch-2.7.1+cpu/strict/models/m", "--variant", "test-cpu"]) == 0
    script = capsys.readouterr().out
    test_index = releases.default_matrix().variant("test-cpu").index_url
    assert "#   pip install torch==2.7.1+cpu --index-url %s && pip install " % test_index in script
    assert "--variant test-cpu --mode strict" in script
    assert cli.main(["repro", "torch-2.7.1+cpu/strict/models/m", "--variant", "../x"]) == USAGE
    assert "--variant '../x'" in capsys.readouterr().err


def test_the_command_says_what_is_missing_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    records_in(tmp_path / "results", failed(case_file="cases/models/gone.py"))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["repro", "torch-2.13.0+cpu/strict/models/m"]) == USAGE
    said = capsys.readouterr().err
    assert "its case file cases/models/gone.py is not a readable file in the case folders" in said
    assert "--case-root" in said and "Traceback" not in said
    assert cli.main(["repro", "torch-2.13.0+cpu/strict/models/m", "--results", "nowhere"]) == USAGE
    assert "nowhere: no such record folder" in capsys.readouterr().err

"""A stage's own packages (the onnx stage's) that cannot be installed: said once, and the cells keep their results.

``check`` installs the local CPU build of torch (or reuses it from EXPORT_MATRIX_ENV_DIR), then the stage's
packages beside it, pinned here to a version no index has: the install fails, the one line names the stage
and the package, and the case runs in the release's own environment, its export recorded and its onnx stage
not-applicable.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Dict

import pytest

from matrix.commands import check
from matrix.envs import companions, environments, sets

from conftest import FIXTURES, read_cells

pytestmark = pytest.mark.slow  # a real torch environment: about 40 s where none is kept


def test_a_stage_whose_packages_cannot_be_installed_says_so_once_and_the_cells_keep_their_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if not os.environ.get(environments.ENV_DIR_VARIABLE):
        monkeypatch.setenv(environments.ENV_DIR_VARIABLE, str(tmp_path / "envs"))
    table: Dict[str, companions.Companion] = dict(companions.load())
    table["onnxruntime"] = companions.Companion("onnxruntime", {"2.13": "==0.0.1"})  # no such version
    monkeypatch.setattr(companions, "load", lambda path=companions.TABLE: table)
    monkeypatch.setattr(sets, "_REFUSED", set())  # what this process refused before is not this test's
    options = check.CheckOptions(
        cases=(str(FIXTURES / "basic" / "add_one.py"), str(FIXTURES / "basic" / "data_branch.py")),
        torch=("2.13.0+cpu",), mode="strict", stages=("check", "onnx"), out=str(tmp_path / "out"), format="json",
    )  # fmt: skip
    assert check.main(options) == 0
    said = capsys.readouterr()
    lines = [line for line in said.err.splitlines() if line.startswith("--stages ")]
    assert len(lines) == 1, said.err  # once for the release, whichever of its sets tried
    assert lines[0].startswith("--stages onnx: ") and "onnxruntime" in lines[0]
    assert "cannot be installed beside torch 2.13.0+cpu" in lines[0] and "not-applicable" in lines[0]
    rows = {case: [row["status"] for row in found] for case, found in json.loads(said.out).items()}
    assert rows == {"add_one": ["pass"], "data_branch": ["fail"]}  # one exports, one fails to: both are kept
    (folder,) = (tmp_path / "out").glob("torch-2.13.0+cpu_cpu_py*")  # the release's own: no set's beside it
    cells = {cell["case"]: cell for cell in read_cells(folder)}
    assert cells["add_one"]["status"] == "pass" and cells["add_one"]["graph_hash"]
    assert cells["add_one"]["onnx_status"] == "not-applicable" and cells["add_one"]["dependency_set"] == ""
    assert "does not have" in cells["add_one"]["onnx_error"]
    assert cells["data_branch"]["status"] == "fail" and cells["data_branch"]["onnx_status"] is None

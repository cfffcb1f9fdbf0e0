"""``export-matrix check`` as a user runs it: command-line errors, and a real run with this torch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from matrix.check_table import Row
from matrix.contract import records

from conftest import FIXTURES, run_matrix


def test_command_line_errors_exit_2(tmp_path: Path) -> None:
    done = run_matrix("check", str(tmp_path / "missing.py"), "--torch", "current", check=False)
    assert done.returncode == 2
    assert "missing.py: no such case file" in done.stderr
    done = run_matrix("check", str(FIXTURES / "basic" / "add_one.py"), "--torch", "1.0", check=False)
    assert done.returncode == 2 and "--torch 1.0" in done.stderr


@pytest.mark.slow
def test_check_runs_a_case_with_the_current_torch(tmp_path: Path) -> None:
    case = str(FIXTURES / "basic" / "data_branch.py")
    done = run_matrix("check", case, "--torch", "current", "--format", "json", "--out", str(tmp_path))
    rows = [Row(**r) for r in json.loads(done.stdout)]
    assert [(r.mode, r.variant) for r in rows] == [("strict", "cpu"), ("non-strict", "cpu")]
    assert all(r.status == "fail" and r.error for r in rows)  # a data-dependent branch cannot be exported
    (kept,) = (tmp_path / "current").glob("torch-*.jsonl")
    cells = [r for r in records.read(str(kept))[0] if r["kind"] == "cell"]
    assert [(c["torch_version"], c["status"]) for c in cells] == [(r.torch, r.status) for r in rows]


CASE_WITH_HELPER = '''"""A linear layer whose scale comes from the module beside the case: %s."""

import torch

import _helper


class Scaled(torch.nn.Module):
    def forward(self, x):
        return x * _helper.%s


model = Scaled()
example_args = (torch.randn(3, 2),)
'''


def test_cases_of_two_folders_run_in_one_worker_each_with_its_own_helpers(tmp_path: Path) -> None:
    # Two helpers of one name: each case must import the one beside it, though one worker runs both.
    for folder, case, name in (("a", "one", "SCALE"), ("b", "two", "OFFSET")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "_helper.py").write_text("%s = 2.0\n" % name)
        (tmp_path / folder / (case + ".py")).write_text(CASE_WITH_HELPER % (name, name))
    cases = [str(tmp_path / "a" / "one.py"), str(tmp_path / "b" / "two.py")]
    done = run_matrix("check", *cases, "--torch", "current", "--format", "json", "--out", str(tmp_path / "out"))
    found = {name: [Row(**r).status for r in rows] for name, rows in json.loads(done.stdout).items()}
    assert found == {"one": ["pass", "pass"], "two": ["pass", "pass"]}
    assert "checking 2 cases (one, two)" in done.stderr
    (kept,) = (tmp_path / "out" / "current").glob("torch-*.jsonl")
    runs = {r["run_id"] for r in records.read(str(kept))[0] if r["kind"] == "cell"}
    assert len(runs) == 1  # one worker ran both cases

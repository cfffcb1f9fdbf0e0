"""Running case files in an environment: each file is checked first, one worker runs them all, and records are
picked by recency."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, List

import pytest

from matrix.commands import probe
from matrix.contract import schema
from matrix.contract.requests import RunRequest
from matrix.envs import env_errors, environments, releases

from conftest import FIXTURES, make_cell


def test_case_files_are_validated_before_anything_is_installed(tmp_path: Path) -> None:
    assert probe.validate_case(str(FIXTURES / "basic" / "add_one.py")).name == "add_one"
    with pytest.raises(probe.CaseFileError, match="no such case file"):
        probe.validate_case(str(tmp_path / "missing.py"))
    (tmp_path / "notes.txt").write_text("")
    with pytest.raises(probe.CaseFileError, match="is a Python module"):
        probe.validate_case(str(tmp_path / "notes.txt"))
    (tmp_path / "bare.py").write_text("model = None\nexample_args = ()\n")
    with pytest.raises(probe.CaseFileError, match="bare.py: the module needs a docstring"):
        probe.validate_case(str(tmp_path / "bare.py"))


def test_the_winning_record_is_the_one_schema_recency_orders_last_whatever_the_reading_order() -> None:
    earlier = make_cell("2.5.1", "add_one", "fail", finished_at="2025-01-01T12:00:00+02:00")
    later = make_cell("2.5.1", "add_one", "pass", finished_at="2025-01-01T11:00:00Z")  # sorts first as text
    other_case = make_cell("2.5.1", "other", "crash", finished_at="2030-01-01T00:00:00Z")
    for found in ([later, earlier, other_case], [other_case, earlier, later]):
        assert probe.winners(found, "add_one", ["strict", "non-strict"]) == {"strict": later}
    assert probe.latest([]) is None


def test_where_the_environment_does_not_install_only_its_env_error_counts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    spec = environments.Spec(releases.default_matrix().resolve("2.5.1"), "3.11")
    folder = tmp_path / spec.name
    folder.mkdir()
    stale = make_cell("2.5.1", "add_one", "pass")  # a cell an earlier run left in the kept folder
    (folder / "torch-2.5.1_pypi_py3.11.jsonl").write_text(json.dumps(stale) + "\n")
    error = {"schema_version": schema.SCHEMA_VERSION, "kind": "env-error", "error_message": "no wheels"}

    def fail(spec: environments.Spec, out: Path, *rest: Any, **options: Any) -> None:
        (out / "env-error.jsonl").write_text(json.dumps(error) + "\n")

    monkeypatch.setattr(env_errors, "prepare_or_record", fail)
    info = probe.validate_case(str(FIXTURES / "basic" / "add_one.py"))
    probed = probe.probe_case(spec, info, probe.cases_request((info.path,), ["strict"], folder, 1.0))
    assert probed == probe.Probed(env_error=error)
    assert probed.cell("strict") is None


def test_one_worker_runs_every_case_and_each_gets_its_own_cells(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    infos = [probe.validate_case(str(FIXTURES / "basic" / name)) for name in ("add_one.py", "data_branch.py")]
    environment = {"schema_version": schema.SCHEMA_VERSION, "kind": "environment", "torch_version": "2.13.0+cpu"}
    runs: List[RunRequest] = []

    def worker(command: Any, env: Any, request: RunRequest, verbose: bool = False) -> None:
        runs.append(request)
        cells = [make_cell("2.13.0+cpu", "add_one", "pass"), make_cell("2.13.0+cpu", "data_branch", "fail")]
        (Path(request.out) / "torch-2.13.0+cpu_cpu_py3.11.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in (environment, *cells))
        )

    monkeypatch.setattr(probe, "run_case", worker)
    folder = tmp_path / "current"
    folder.mkdir()
    request = probe.cases_request([info.path for info in infos], ["strict"], folder, 1.0)
    found = probe.probe_cases(None, infos, request)
    assert [r.cases for r in runs] == [(infos[0].path, infos[1].path)]  # one worker, each file a root of its own
    assert {name: probed.cell("strict")["status"] for name, probed in found.items()} == {
        "add_one": "pass",
        "data_branch": "fail",
    }
    assert all(probed.environment == environment for probed in found.values())
    assert probe.probe_case(None, infos[1], request).cell("strict")["case"] == "data_branch"


def test_a_workers_time_limit_grows_with_its_cases(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    limits: List[float] = []

    def run(command: Any, **options: Any) -> subprocess.CompletedProcess:
        limits.append(options["timeout"])
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(subprocess, "run", run)
    for cases in (["a.py"], ["a.py", "b.py", "c.py"]):
        assert (
            probe.run_case(["python"], {}, probe.cases_request(cases, ["strict", "non-strict"], tmp_path, 10.0)) is None
        )
    assert limits == [2 * 10.0 + 600, 6 * 10.0 + 600]  # every cell may take its --timeout, and a margin

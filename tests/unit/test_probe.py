"""Running one case file in an environment: the case file is checked first, and records are picked by recency."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from matrix import probe
from matrix.contract import schema
from matrix.envs import environments, releases

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

    monkeypatch.setattr(environments, "prepare_or_record", fail)
    info = probe.validate_case(str(FIXTURES / "basic" / "add_one.py"))
    probed = probe.probe_case(spec, info, probe.case_request(info.path, ["strict"], folder, 1.0))
    assert probed == probe.Probed(env_error=error)
    assert probed.cell("strict") is None

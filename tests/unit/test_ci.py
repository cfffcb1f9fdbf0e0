"""The CI plan without nox: its input errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from matrix.commands import ci


def test_plan_command_rejects_bad_input_clearly(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    broken = tmp_path / "sessions.json"
    broken.write_text("nox > Error while collecting sessions.")
    assert ci.main(["plan", "--sessions", str(broken)]) == 2
    assert "sessions.json: not JSON" in capsys.readouterr().err
    broken.write_text(json.dumps([{"session": "lint", "name": "lint", "call_spec": {}}]))
    assert ci.main(["plan", "--sessions", str(broken)]) == 2
    assert "lists no 'run' session" in capsys.readouterr().err

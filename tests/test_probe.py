"""Running one case file in an environment: the case file is checked before anything is installed."""

from __future__ import annotations

from pathlib import Path

import pytest

from matrix import probe

from conftest import FIXTURES


def test_case_files_are_validated_before_anything_is_installed(tmp_path: Path) -> None:
    assert probe.validate_case(str(FIXTURES / "basic" / "add_one.py")) == "add_one"
    with pytest.raises(probe.CaseFileError, match="no such case file"):
        probe.validate_case(str(tmp_path / "missing.py"))
    (tmp_path / "notes.txt").write_text("")
    with pytest.raises(probe.CaseFileError, match="is a Python module"):
        probe.validate_case(str(tmp_path / "notes.txt"))
    (tmp_path / "bare.py").write_text("model = None\nexample_args = ()\n")
    with pytest.raises(probe.CaseFileError, match="bare.py: the module needs a docstring"):
        probe.validate_case(str(tmp_path / "bare.py"))

"""What an environment holds on disk decides the key its kept facts are found by (matrix/worker/known.py)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict

import pytest

from matrix.worker import known, reuse

RUN: Dict[str, Any] = {
    "device": "cpu",
    "source": "cases",
    "variant": "cpu",
    "dependency_set": "",
    "hide_capability": [],
}


@pytest.fixture
def torch_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A torch package of this test's own: the key reads its version.py and its capability file."""
    folder = tmp_path / "site-packages" / "torch"
    folder.mkdir(parents=True)
    (folder / "version.py").write_text("__version__ = '2.9.0'\n")

    monkeypatch.setattr(known, "torch_folders", lambda: [str(folder)])
    monkeypatch.setattr(known, "cache_path", lambda: str(tmp_path / "capabilities.json"))
    monkeypatch.setattr(known, "packages_hash", lambda: "packages-1")
    monkeypatch.setattr(reuse, "_STARTED", {})
    return folder


def test_the_same_environment_gives_the_same_key(torch_folder: Path) -> None:
    assert known.environment_key(RUN) is not None
    assert known.environment_key(RUN) == known.environment_key(dict(RUN))


def test_a_reinstalled_torch_changes_the_key_even_with_the_same_version_py(torch_folder: Path) -> None:
    before = known.environment_key(RUN)
    version = torch_folder / "version.py"
    text = version.read_text()
    version.unlink()
    version.write_text(text)  # a reinstall writes the same text anew
    os.utime(version, ns=(1, 1))
    assert known.environment_key(RUN) != before


def test_packages_capabilities_variables_and_options_change_the_key(
    torch_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = known.environment_key(RUN)
    (tmp_path / "capabilities.json").write_text('{"found": {}}')
    detected = known.environment_key(RUN)
    assert detected != before
    monkeypatch.setattr(known, "packages_hash", lambda: "packages-2")
    installed = known.environment_key(RUN)
    assert installed != detected
    monkeypatch.setattr(reuse, "_STARTED", {"TORCHDYNAMO_SOMETHING": "1", "OMP_NUM_THREADS": "4"})
    steered = known.environment_key(RUN)
    assert steered != installed
    monkeypatch.setattr(reuse, "_STARTED", {"OMP_NUM_THREADS": "4"})  # speed only: not in any key
    assert known.environment_key(RUN) == installed
    assert known.environment_key(dict(RUN, hide_capability=["cond"])) != installed
    assert known.environment_key(dict(RUN, variant="pypi")) != installed


def test_a_torch_that_cannot_be_found_or_read_gives_no_key(torch_folder: Path) -> None:
    (torch_folder / "version.py").unlink()
    assert known.environment_key(RUN) is None

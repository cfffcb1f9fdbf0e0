"""What a failed load records (:func:`matrix.worker.forensics.load_error`): the error torch met, both schema versions.

Real programs, loaded in this process by the local torch. The program under
``tests/data/saved_programs`` was saved by PyPI's torch 2.5.1 (serializer schema 7.3), in the
zip layout of 2.7 and before, with ``tests/data/saved_programs/make_linear.py`` (its docstring
says how to run it again).
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from matrix.contract import layout
from matrix.worker import artifacts, forensics

from conftest import load_in_process as load
from conftest import schema_here

DATA = Path(__file__).resolve().parent.parent / "data" / "saved_programs"
SAVED_ON_2_5 = DATA / "2.5.1+cu124_cu124_py3.11" / "strict" / "linear"


pytestmark = pytest.mark.usefixtures("saved_programs_key")


def test_the_fixture_is_a_program_saved_on_2_5_in_the_zip_layout() -> None:
    meta = json.loads((SAVED_ON_2_5 / layout.META).read_text())
    assert (meta["torch_version"], meta["serializer_version"], meta["format_version"]) == ("2.5.1+cu124", "7.3", 2)
    with zipfile.ZipFile(SAVED_ON_2_5 / layout.PROGRAM) as saved:
        assert saved.read("version") == b"7.3"
    assert forensics._layout(str(SAVED_ON_2_5 / layout.PROGRAM)) == "zip"


def test_a_2_5_program_on_this_release_records_the_zip_readers_schema_error(tmp_path: Path) -> None:
    folder = tmp_path / "linear"
    shutil.copytree(SAVED_ON_2_5, folder)
    fields = load(folder)
    assert fields["status"] == "load-error" and fields["serializer_version"] == artifacts.serializer_version()
    # The file is in the zip layout, so the zip reader's error is the one that applies: the schema
    # versions differ. Not the archive loader's complaint that the file is no archive, nor the
    # KeyError of a zip reader that looks for `version` in an archive.
    assert fields["error_type"] == "RuntimeError"
    assert fields["error_message"].startswith("Serialized version ['7', '3'] does not match")
    assert "not in a subdirectory" not in fields["error_message"]
    assert fields["error_message"].endswith("[serializer schema: saved (7, 3), loader %s]" % schema_here())
    assert schema_here() != "(7, 3)"


def test_layouts_are_told_apart(tmp_path: Path) -> None:
    (tmp_path / "garbage.pt2").write_bytes(b"not a zip at all")
    assert forensics._layout(str(tmp_path / "garbage.pt2")) is None
    assert forensics._layout(str(tmp_path / "missing.pt2")) is None
    with zipfile.ZipFile(tmp_path / "archive.pt2", "w") as archive:
        archive.writestr("model/archive_format", "pt2")
    assert forensics._layout(str(tmp_path / "archive.pt2")) == "archive"


def test_schema_versions_read_as_torch_prints_them() -> None:
    assert forensics.schema_tuple("7.3") == "(7, 3)"
    assert forensics.schema_tuple("8.20") == "(8, 20)"
    assert forensics.schema_tuple("1") == "1"
    assert forensics.schema_tuple(None) == "unknown"
    assert forensics.schema_tuple("8.x") == "8.x"


def test_a_long_message_keeps_the_schema_versions(tmp_path: Path) -> None:
    fields = forensics.load_error(str(tmp_path / "missing.pt2"), {"serializer_version": "5.1"}, ValueError("x" * 900))
    assert len(fields["error_message"]) == forensics.MESSAGE_CHARS
    assert fields["error_message"].endswith("[serializer schema: saved (5, 1), loader %s]" % schema_here())

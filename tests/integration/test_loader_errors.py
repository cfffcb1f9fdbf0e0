"""A failed load of a program exported here (:func:`matrix.worker.forensics.load_error`): the archive loader's error.

tests/unit/test_loader_errors.py loads committed programs only; this one exports a program first.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest
import torch

from matrix.contract import layout
from matrix.worker import artifacts, forensics, signing

from conftest import load_in_process as load
from conftest import schema_here

pytestmark = pytest.mark.usefixtures("saved_programs_key")


def newer_archive(tmp_path: Path) -> Path:
    """A program saved here as an archive, then marked as written by a serializer of a later major version."""
    x = torch.arange(6.0).reshape(2, 3)
    model = torch.nn.Linear(3, 2)
    target = layout.Target(str(tmp_path), "cpu")
    folder = Path(artifacts.save(target, "unit/newer", "strict", torch.export.export(model, (x,)), [((x,), {})],
                                 [model(x)]))  # fmt: skip
    program = folder / layout.PROGRAM
    with zipfile.ZipFile(program) as saved:
        entries = [(info, saved.read(info.filename)) for info in saved.infolist()]
    with zipfile.ZipFile(program, "w") as rewritten:
        for info, data in entries:
            if info.filename.endswith("models/model.json"):
                model_json = json.loads(data)
                model_json["schema_version"]["major"] = 99
                data = json.dumps(model_json).encode()
            rewritten.writestr(info, data)
    meta = json.loads((folder / layout.META).read_text())
    meta["serializer_version"] = "99.0"
    for entry in meta["files"]:
        data = (folder / entry["name"]).read_bytes()
        entry.update(size=len(data), sha256=hashlib.sha256(data).hexdigest())
    (folder / layout.META).write_text(json.dumps(meta))
    signing.sign(str(folder / layout.META), signing.signing_key())
    return folder


def test_an_archive_that_fails_records_the_archive_loaders_own_error(tmp_path: Path) -> None:
    folder = newer_archive(tmp_path)
    program = str(folder / layout.PROGRAM)
    assert forensics._layout(program) == "archive"
    load_pt2 = forensics._archive_loader()
    assert load_pt2 is not None  # the local build has the archive loader (torch 2.8 and later)
    with pytest.raises(Exception) as fallback:
        torch.export.load(program)
    with pytest.raises(Exception) as archive:
        load_pt2(program)
    assert str(fallback.value) != str(archive.value)  # torch.export.load hides the archive loader's error
    fields = load(folder)
    assert fields["status"] == "load-error"
    assert fields["error_type"].endswith(type(archive.value).__name__)
    assert fields["error_message"].startswith(str(archive.value).splitlines()[0][:200])
    assert "major=99" in fields["error_message"]
    assert fields["error_message"].endswith("[serializer schema: saved (99, 0), loader %s]" % schema_here())
